package cli

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
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
	switch {
	case o.Package != "" && len(args) > 0:
		return service.Usagef("lock acquire: give keys or --package, not both")
	case o.Package != "":
		a.waitHint = func(d string) string { return hint.Line(hint.WaitPackage, d, o.Package) }
	case len(args) == 0:
		return service.Usagef("lock acquire: give at least one KEY (or --package WP)")
	default:
		a.waitHint = func(d string) string { return hint.Line(hint.WaitAcquire, d, args) }
	}
	res, err := e.AcquireLocks(ctx, service.AcquireRequest{Keys: args, Package: o.Package, PackagesFile: o.Packages,
		TTL: o.TTL, Wait: o.Wait, Reason: o.Reason, Task: o.Task, WarnPaths: !a.globals.JSON})
	if err != nil {
		return err
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, acquiredViews(res.Locks))
	}
	now := e.Now()
	for _, r := range res.Locks {
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
	// A path lock covers one file; a directory's files are a pattern.
	for _, k := range res.Dirs {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s is a directory: a path lock covers one file; lock its files with `lockgate lock acquire '%s/**'`\n",
			safetext.Field(k), safetext.Field(k))
	}
	for _, k := range res.Missing {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: no such path in the repository: %s; locked anyway\n", safetext.Field(k))
	}
	return nil
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
			res, err := e.ReleaseLocks(ctx, service.ReleaseRequest{Keys: args, Force: force})
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
			out, err := e.RefreshLocks(ctx, service.RefreshRequest{Keys: args, TTL: ttl})
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
			res, err := e.ListLocks(ctx, service.ListRequest{Mine: mine, Stale: stale, All: all, Recover: true})
			if err != nil {
				return err
			}
			rows, now := res.Rows, e.Now()
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
			if expired := res.Expired; expired > 0 {
				fmt.Fprintf(a.stdio.Err, "%d expired record(s) not shown (anyone may take them): `lockgate lock list --all` shows them, `lockgate lock prune` removes them\n", expired)
			}
			for _, r := range rows {
				if r.Corrupt {
					fmt.Fprintf(a.stdio.Err, "lockgate: corrupt lock record %s: %s\n", safetext.Field(r.Location), safetext.Field(r.Error))
					a.printHints(a.carry([]string{r.Hint})...)
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
			res, err := e.CheckLocks(ctx, service.CheckRequest{Keys: args})
			if err != nil {
				return err
			}
			if a.globals.JSON {
				if err := writeJSON(a.stdio.Out, res.Statuses); err != nil {
					return err
				}
			} else {
				now := e.Now()
				rows := [][]string{{"KEY", "STATE", "HOLDER", "TYPE", "LOCK", "EXPIRES"}}
				for _, s := range res.Statuses {
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
			if res.Held {
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
			pruned, err := e.PruneLocks(ctx)
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
			req := service.ClearRequest{Record: record, Force: force}
			switch {
			case record != "" && len(args) != 0:
				return service.Usagef("lock clear: give a TARGET or --record FILE, not both")
			case record == "" && len(args) != 1:
				return service.Usagef("lock clear: give exactly one TARGET (a key, a task id, workflow or claim)")
			case record == "":
				req.Target = args[0]
			}
			if err := req.Check(); err != nil {
				return err
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			res, err := e.ClearLocks(ctx, req)
			if err != nil {
				return err
			}
			switch {
			case res.Corrupt && record != "":
				fmt.Fprintf(a.stdio.Err, "cleared in %s: removed corrupt record %s\n", e.StoreLabel(), safetext.Field(res.Record))
			case res.Corrupt:
				fmt.Fprintf(a.stdio.Err, "cleared %s in %s: removed corrupt record %s\n", safetext.Field(res.Key), e.StoreLabel(), safetext.Field(res.Record))
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, res)
			}
			if res.Corrupt {
				return nil
			}
			f, l := safetext.Field, res.Cleared
			fmt.Fprintf(a.stdio.Out, "cleared %s\n  owner:      %s (%s, session %s)\n  created_at: %s\n  age:        %s\n  expires_at: %s\n  store:      %s\n",
				f(l.Key), f(l.Holder), f(l.HolderType), f(l.Session), stamp(l.CreatedAt), duration.Format(res.Age), stamp(l.ExpiresAt), res.Store)
			if l.Reason != "" {
				fmt.Fprintf(a.stdio.Out, "  reason:     %s\n", f(l.Reason))
			}
			return nil
		},
	}
}
