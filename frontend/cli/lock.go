package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/service/outcome"

	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// AcquireOptions are `lock acquire`'s flags.
type AcquireOptions struct {
	TTL      time.Duration
	Reason   string
	Task     string
	Wait     time.Duration
	Package  string
	Packages string
}

// AddFlags registers the options on fs.
func (o *AcquireOptions) AddFlags(fs *pflag.FlagSet) {
	durationVar(fs, &o.TTL, "ttl", "lock lifetime (default by worker type: human 8h activity / 4h otherwise, agent 1h / 30m); sets a lock you hold exactly, even shorter (without it a renewal never shortens)")
	fs.StringVar(&o.Reason, "reason", "", "why the lock is taken (shown to others)")
	fs.StringVar(&o.Task, "task", "", "task `ID` the lock serves; on an activity: key, takes its task sub-lock")
	durationVar(fs, &o.Wait, "wait", "wait up to `D` for held keys to become free")
	fs.Var(once(&o.Package), "package", "acquire work package `WP`'s files and keys")
	packagesFlag(fs, &o.Packages)
}

func acquireCommand() *command {
	o := &AcquireOptions{}
	return &command{
		takesLocks: true,
		usage:      "lock acquire KEY... [--ttl D] [--reason R] [--task ID] [--wait D] | --package WP",
		short:      "take locks, all or nothing (exit 4 when one is held by another)",
		flags:      o.AddFlags,
		run: func(ctx context.Context, a *app, args []string) error {
			return a.acquire(ctx, o, args)
		},
	}
}

func (a *app) acquire(ctx context.Context, o *AcquireOptions, args []string) error {
	if o.TTL < 0 || o.Wait < 0 {
		return service.Usagef("--ttl and --wait must not be negative")
	}
	e, err := a.open(ctx)
	if err != nil {
		return err
	}
	// Only a TTL the user names may shorten a lock renewed here.
	req := locks.Request{Owner: e.Me, TTL: o.TTL, Reason: o.Reason, Action: "lock", TaskID: o.Task, Wait: o.Wait, ExactTTL: o.TTL > 0}
	var keys []lockkey.Key
	if o.Package != "" {
		if len(args) > 0 {
			return service.Usagef("lock acquire: give keys or --package, not both")
		}
		wp, pkeys, err := e.WorkPackage(o.Packages, o.Package)
		if err != nil {
			return err
		}
		keys = pkeys
		a.waitHint = func(d string) string {
			return hint.Line(hint.WaitPackage, d, o.Package)
		}
		req.Action = "package:" + wp.ID
		req.Reason = cmp.Or(o.Reason, wp.Locks.Reason, wp.Title)
		if req.TTL == 0 {
			req.TTL = wp.TTL()
		}
	} else {
		if len(args) == 0 {
			return service.Usagef("lock acquire: give at least one KEY (or --package WP)")
		}
		if keys, err = e.ParseKeys(args); err != nil {
			return err
		}
		a.waitHint = func(d string) string { return hint.Line(hint.WaitAcquire, d, args) }
	}

	if err := e.CompleteRequest(&req, keys); err != nil {
		return err
	}
	res, err := e.Mgr.Acquire(ctx, req)
	if err != nil {
		return err
	}
	now := e.Now()
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, acquiredViews(res))
	}
	for _, r := range res {
		verb := "acquired"
		switch {
		case r.Renewed:
			verb = "renewed"
		case r.TookOver != nil:
			verb = fmt.Sprintf("took over (expired lock of %s)", safetext.Field(r.TookOver.Holder))
		}
		fmt.Fprintf(a.stdio.Err, "%s %s in %s until %s (%s)\n", verb, a.paint(termstyle.Path, safetext.Field(r.Lock.Key)), e.StoreLabel(),
			a.paint(termstyle.Expiry, stamp(r.Lock.ExpiresAt)), duration.Until(r.Lock.ExpiresAt, now))
	}
	a.warnPaths(ctx, e, res)
	return nil
}

// warnPaths says when a path lock taken names no file: a directory (a
// path lock covers one file; its files are a pattern), or a path neither
// in the work tree nor in the index (a typo, or a file still to come). The
// lock stands either way.
func (a *app) warnPaths(ctx context.Context, e *service.Workspace, res []locks.Result) {
	top := e.Repo.Toplevel
	if top == "" {
		return
	}
	var missing []string
	for _, r := range res {
		k := r.Lock.Key
		if !lockkey.IsPathLike(k) || lockkey.IsPattern(k) || r.Renewed {
			continue
		}
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(k)))
		switch {
		case err == nil && fi.IsDir():
			fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s is a directory: a path lock covers one file; lock its files with `lockgate lock acquire '%s/**'`\n",
				safetext.Field(k), safetext.Field(k))
		case err != nil:
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return
	}
	tracked, err := gitexec.TrackedPaths(ctx, e.Repo, missing)
	if err != nil {
		return // a warning only: nothing to say when git cannot tell
	}
	for _, k := range missing {
		if !tracked[k] {
			fmt.Fprintf(a.stdio.Err, "lockgate: warning: no such path in the repository: %s; locked anyway\n", safetext.Field(k))
		}
	}
}

func releaseCommand() *command {
	var force bool
	return &command{
		usage: "lock release KEY... [--force]",
		short: "release your locks (another's only with --force, which is logged)",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&force, "force", false, "release even if another worker holds it")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) == 0 {
				return service.Usagef("lock release: give at least one KEY")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			keys, err := e.ParseKeys(args)
			if err != nil {
				return err
			}
			res, err := e.Mgr.Release(ctx, service.Canonicals(keys), e.Me, force)
			a.reportRelease(e, res, err)
			return err
		},
	}
}

// reportRelease says what a release did; under --json, when err ends the
// command, what was released goes with the error object.
func (a *app) reportRelease(e *service.Workspace, res locks.ReleaseResult, err error) {
	if a.globals.JSON {
		out := map[string]any{"released": service.ViewsOf(res.Removed), "forced": service.ViewsOf(res.Forced), "missing": nonNilS(res.Missing),
			"store": e.StoreName()}
		if err != nil {
			a.partial = out
		} else {
			_ = writeJSON(a.stdio.Out, out)
		}
	}
	now := e.Now()
	for _, l := range res.Removed {
		fmt.Fprintf(a.stdio.Err, "released %s in %s\n", safetext.Field(l.Key), e.StoreLabel())
	}
	for _, l := range res.Forced {
		fmt.Fprintf(a.stdio.Err, "forced: removed the lock of %s (%s, session %s) on %s in %s, created %s (%s old)\n",
			safetext.Field(l.Holder), safetext.Field(l.HolderType), safetext.Field(l.Session), safetext.Field(l.Key), e.StoreLabel(),
			stamp(l.CreatedAt), duration.Format(now.Sub(l.CreatedAt)))
	}
	for _, k := range res.Missing {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s was not locked in %s; nothing to release\n", safetext.Field(k), e.StoreLabel())
	}
}

func nonNilS(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func refreshCommand() *command {
	var ttl time.Duration
	return &command{
		usage: "lock refresh KEY... [--ttl D]",
		short: "extend your locks",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &ttl, "ttl", "new lifetime from now (default by worker type)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) == 0 {
				return service.Usagef("lock refresh: give at least one KEY")
			}
			if ttl < 0 {
				return service.Usagef("--ttl must not be negative")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			keys, err := e.ParseKeys(args)
			if err != nil {
				return err
			}
			out, err := e.RefreshKeys(ctx, keys, ttl)
			if err != nil {
				a.partial = map[string]any{"refreshed": service.ViewsOf(out)}
				return err
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, service.ViewsOf(out))
			}
			now := e.Now()
			for _, l := range out {
				fmt.Fprintf(a.stdio.Err, "refreshed %s in %s until %s (%s)\n", safetext.Field(l.Key), e.StoreLabel(), stamp(l.ExpiresAt), duration.Until(l.ExpiresAt, now))
			}
			return nil
		},
	}
}

// listEntry is one row of `lock list --json`: the whole record but its
// owner token, which never leaves the store.
type listEntry struct {
	service.LockView
	Action       string     `json:"action,omitempty"`
	PID          int        `json:"pid"`
	Host         string     `json:"host"`
	TaskAcquired *time.Time `json:"task_acquired,omitempty"`
	RequestID    string     `json:"request_id,omitempty"`
	TraceID      string     `json:"trace_id,omitempty"`
	AgeSeconds   int64      `json:"age_seconds"`
	Expired      bool       `json:"expired"`
	Stale        bool       `json:"stale"`
	Corrupt      bool       `json:"corrupt"`
	Error        string     `json:"error,omitempty"`
	Location     string     `json:"location"`
	Bookkeeping  bool       `json:"bookkeeping"`
	// LookAlike is the key spelled in ASCII (lockkey.Escaped) when another
	// key of the store looks the same (lockkey.LookAlikes).
	LookAlike string `json:"look_alike,omitempty"`
}

func listCommand() *command {
	var mine, stale, all bool
	return &command{
		usage: "lock list [--mine] [--stale] [--all]",
		short: "every live lock: key, holder, type, age, expiry, stale flag, reason, task",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&mine, "mine", false, "only locks of this worker and session")
			fs.BoolVar(&stale, "stale", false, "only stale locks (older than locks.stale_minutes)")
			fs.BoolVar(&all, "all", false, "expired records and bookkeeping records (the planner's plan:cycle and cooldown: records) too")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("lock list takes no arguments")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			e.Recover(ctx)
			entries, err := e.Store.List(ctx)
			if err != nil {
				return err
			}
			now := e.Now()
			staleAfter := e.Cfg.StaleAfter()
			keys := make([]string, 0, len(entries))
			for _, en := range entries {
				keys = append(keys, en.Key)
			}
			alike := lockkey.LookAlikes(keys)
			rows := make([]listEntry, 0, len(entries))
			expired := 0
			for _, en := range entries {
				le := listEntry{LockView: service.ViewOf(en.Lock), Action: en.Action, PID: en.PID, Host: en.Host,
					TaskAcquired: en.TaskAcquired, RequestID: en.RequestID, TraceID: en.TraceID,
					Location: e.Store.Where(en.Key), Bookkeeping: service.IsBookkeeping(en.Lock)}
				if le.Bookkeeping && !all {
					continue
				}
				var corrupt *locks.CorruptError
				switch {
				case errors.As(en.Err, &corrupt):
					// Where the record is, which for a misplaced or foreign
					// file is not where its key would be.
					le.Corrupt, le.Error, le.Location = true, corrupt.Err.Error(), corrupt.Path
				case en.Err != nil:
					le.Corrupt, le.Error = true, en.Err.Error()
				default:
					le.AgeSeconds = int64(now.Sub(en.CreatedAt).Seconds())
					le.Expired = en.Expired(now)
					le.Stale = en.Stale(now, staleAfter)
				}
				if mine && (le.Corrupt || !en.OwnedBy(e.Me)) {
					continue
				}
				if stale && !le.Stale {
					continue
				}
				if le.Expired && !all {
					expired++ // anyone may take it: not a lock any more
					continue
				}
				if alike[en.Key] {
					le.LookAlike = lockkey.Escaped(en.Key)
				}
				rows = append(rows, le)
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, rows)
			}
			out := [][]string{{"KEY", "HOLDER", "TYPE", "AGE", "EXPIRES", "STALE", "TASK", "REASON"}}
			nalike := 0
			for _, r := range rows {
				key := r.Key
				if r.LookAlike != "" {
					key += " (look-alike: " + r.LookAlike + ")"
					nalike++
				}
				if r.Corrupt {
					out = append(out, []string{key, "CORRUPT", "-", "-", "-", "-", "-", "-"})
					continue
				}
				exp := duration.Until(r.ExpiresAt, now)
				if r.Expired {
					exp = "expired " + exp
				}
				st := "-"
				if r.Stale {
					st = "stale"
				}
				out = append(out, []string{key, r.Holder, r.HolderType, duration.Format(now.Sub(r.CreatedAt)), exp, st,
					cmp.Or(r.TaskID, "-"), cmp.Or(safetext.Shorten(r.Reason), "-")})
			}
			table(a.stdio.Out, out)
			fmt.Fprintf(a.stdio.Err, "%d lock(s) in %s\n", len(rows), e.StoreLabel())
			if nalike > 0 {
				fmt.Fprintf(a.stdio.Err, "%d key(s) look like another key of the store: (look-alike: …) spells each in ASCII, as bash reads it in $'…'\n", nalike)
			}
			if expired > 0 {
				fmt.Fprintf(a.stdio.Err, "%d expired record(s) not shown (anyone may take them): `lockgate lock list --all` shows them, `lockgate lock prune` removes them\n", expired)
			}
			for _, r := range rows {
				if r.Corrupt {
					fmt.Fprintf(a.stdio.Err, "lockgate: corrupt lock record %s: %s\n", safetext.Field(r.Location), safetext.Field(r.Error))
					a.printHints(a.carry([]string{hint.CorruptLine(recordWhere(e.Store), r.Location, r.Key, lockkey.RelArg(r.Key, e.UserDir()))})...)
				}
			}
			return nil
		},
	}
}

func checkCommand() *command {
	return &command{
		usage: "lock check KEY|PATH...",
		short: "exit 0 when every key is free or yours, 4 when one is held by another",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) == 0 {
				return service.Usagef("lock check: give at least one KEY or PATH")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			keys, err := e.ParseKeys(args)
			if err != nil {
				return err
			}
			sts, err := e.Mgr.Check(ctx, service.Canonicals(keys), e.Me)
			if err != nil {
				return err
			}
			held := false
			for _, s := range sts {
				held = held || s.State == locks.StateHeld
			}
			if a.globals.JSON {
				if err := writeJSON(a.stdio.Out, statusViews(sts)); err != nil {
					return err
				}
			} else {
				now := e.Now()
				rows := [][]string{{"KEY", "STATE", "HOLDER", "TYPE", "LOCK", "EXPIRES"}}
				for _, s := range sts {
					if len(s.Locks) == 0 {
						rows = append(rows, []string{s.Key, string(s.State), "-", "-", "-", "-"})
					}
					for _, l := range s.Locks {
						rows = append(rows, []string{s.Key, string(s.State), l.Holder, l.HolderType, l.Key, duration.Until(l.ExpiresAt, now)})
					}
				}
				table(a.stdio.Out, rows)
				fmt.Fprintf(a.stdio.Err, "checked in %s\n", e.StoreLabel())
			}
			if held {
				return &outcome.ExitError{Code: outcome.ExitLockFailed}
			}
			return nil
		},
	}
}

func pruneCommand() *command {
	return &command{
		usage:      "lock prune",
		short:      "remove the records of expired locks (each logged as taken over and released)",
		takesLocks: true,
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("lock prune takes no arguments")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			pruned, err := e.Prune(ctx)
			if a.globals.JSON && err == nil {
				views := make([]service.LockView, 0, len(pruned))
				for _, p := range pruned {
					views = append(views, p.LockView)
				}
				return writeJSON(a.stdio.Out, views)
			}
			for _, p := range pruned {
				fmt.Fprintf(a.stdio.Err, "pruned %s (%s's, expired %s ago)\n", safetext.Field(p.Key), safetext.Field(p.Holder), duration.Format(p.ExpiredFor))
			}
			fmt.Fprintf(a.stdio.Err, "%d expired record(s) removed from %s\n", len(pruned), e.StoreLabel())
			return err
		},
	}
}

func clearCommand() *command {
	var force bool
	var record string
	return &command{
		usage: "lock clear TARGET --force | --record FILE --force",
		short: "remove any lock (key, task id, workflow, claim) or unreadable record file; prints what it removed",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&force, "force", false, "required: clearing removes another worker's lock")
			fs.StringVar(&record, "record", "", "remove the unreadable record `FILE` (as `lock list` names it) of the file or git store")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if record != "" {
				if len(args) != 0 {
					return service.Usagef("lock clear: give a TARGET or --record FILE, not both")
				}
				if !force {
					return service.Usagef("lock clear --record %s: refusing without --force (it removes the lock record whoever wrote it)", record)
				}
				return a.clearRecord(ctx, record)
			}
			if len(args) != 1 {
				return service.Usagef("lock clear: give exactly one TARGET (a key, a task id, workflow or claim)")
			}
			if !force {
				return service.Usagef("lock clear %s: refusing without --force (it removes the lock whoever holds it)", args[0])
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			key, err := a.resolveClearTarget(ctx, e, args[0])
			if err != nil {
				return err
			}
			removed, err := e.Mgr.Clear(ctx, key, e.Me)
			var corrupt *locks.CorruptError
			if errors.As(err, &corrupt) {
				fmt.Fprintf(a.stdio.Err, "cleared %s in %s: removed corrupt record %s\n", safetext.Field(key), e.StoreLabel(), safetext.Field(corrupt.Path))
				if a.globals.JSON {
					return writeJSON(a.stdio.Out, clearedJSON{Key: key, Corrupt: true, Store: e.StoreName()})
				}
				return nil
			}
			if err != nil {
				return err
			}
			age := time.Since(removed.CreatedAt)
			if a.globals.JSON {
				v := service.ViewOf(removed)
				return writeJSON(a.stdio.Out, clearedJSON{Key: key, Cleared: &v, AgeSeconds: int64(age.Seconds()), Store: e.StoreName()})
			}
			f := safetext.Field
			fmt.Fprintf(a.stdio.Out, "cleared %s\n  owner:      %s (%s, session %s)\n  created_at: %s\n  age:        %s\n  expires_at: %s\n  store:      %s\n",
				f(removed.Key), f(removed.Holder), f(removed.HolderType), f(removed.Session), stamp(removed.CreatedAt), duration.Format(age), stamp(removed.ExpiresAt), e.StoreName())
			if removed.Reason != "" {
				fmt.Fprintf(a.stdio.Out, "  reason:     %s\n", f(removed.Reason))
			}
			return nil
		},
	}
}

// recordRemover is a store whose records are named, as `lock list`
// prints them: the file store's files, the git store's tree entries.
type recordRemover interface {
	RemoveRecord(ctx context.Context, name string) (locks.Entry, error)
}

// clearRecord removes a record that cannot be cleared by key (see
// filestore.RemoveRecord), and logs it.
func (a *app) clearRecord(ctx context.Context, file string) error {
	e, err := a.open(ctx)
	if err != nil {
		return err
	}
	rm, ok := e.Store.(recordRemover)
	if !ok {
		return service.Usagef("lock clear --record: only the file and git stores keep records by name; clear by key (see `lockgate lock list`)")
	}
	en, err := rm.RemoveRecord(ctx, file)
	switch {
	case errors.Is(err, filestore.ErrNotRecord), errors.Is(err, locks.ErrNotFound):
		return service.Usagef("lock clear --record: %v", err)
	case errors.Is(err, filestore.ErrReadable):
		return service.Usagef("lock clear --record: %v: `lockgate lock clear --force %s`", err, hint.Quote(lockkey.RelArg(en.Key, e.UserDir())))
	case err != nil:
		return err
	}
	if err := e.Mgr.Record(ctx, journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
		Action: journal.ActionClear, Key: en.Key, Details: "removed corrupt record " + en.Name}); err != nil {
		return fmt.Errorf("lock clear: %s removed, but not logged: %w", en.Name, err)
	}
	fmt.Fprintf(a.stdio.Err, "cleared in %s: removed corrupt record %s\n", e.StoreLabel(), safetext.Field(en.Name))
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, clearedJSON{Key: en.Key, Corrupt: true, Store: e.StoreName()})
	}
	return nil
}

// clearedJSON is `lock clear --json`.
type clearedJSON struct {
	Key        string            `json:"key"`
	Corrupt    bool              `json:"corrupt"`
	Cleared    *service.LockView `json:"cleared,omitempty"`
	AgeSeconds int64             `json:"age_seconds"`
	Store      string            `json:"store"` // file, or the Redis URL without its password
}

// resolveClearTarget maps what fdx users type — `workflow`, `claim`,
// `TASK-001` — to the key that holds a lock. Any record `lock list` shows
// can be cleared by its key, even one no one may lock by hand: a port
// lease, the planner's state, a key of a namespace since removed from the
// config, a record another tool wrote.
func (a *app) resolveClearTarget(ctx context.Context, e *service.Workspace, target string) (string, error) {
	keys, err := e.ParseKeys([]string{target})
	if err != nil {
		_, gerr := e.Store.Get(ctx, target)
		var corrupt *locks.CorruptError
		switch {
		case gerr == nil, errors.As(gerr, &corrupt):
			return target, nil
		case errors.Is(gerr, locks.ErrNotFound):
			return "", err
		default:
			return "", gerr
		}
	}
	key := keys[0].Canonical
	if keys[0].Kind != lockkey.KindPath {
		return key, nil
	}
	if _, err := e.Store.Get(ctx, key); !errors.Is(err, locks.ErrNotFound) {
		return key, nil
	}
	for _, alt := range []string{lockkey.TaskKey(target), "activity:" + target} {
		if _, err := e.Store.Get(ctx, alt); !errors.Is(err, locks.ErrNotFound) {
			return alt, nil
		}
	}
	return "", service.Usagef("lock clear %s: no such lock (looked for %s, %s and activity:%s); see `lockgate lock list --all`", target, key, lockkey.TaskKey(target), target)
}

// statusView is one key of `lock check --json`.
type statusView struct {
	Key   string             `json:"key"`
	State locks.KeyState     `json:"state"`
	Locks []service.LockView `json:"locks,omitempty"`
}

func statusViews(sts []locks.Status) []statusView {
	out := make([]statusView, 0, len(sts))
	for _, s := range sts {
		v := statusView{Key: s.Key, State: s.State}
		if len(s.Locks) > 0 {
			v.Locks = service.ViewsOf(s.Locks)
		}
		out = append(out, v)
	}
	return out
}
