package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

func acquireCommand() *command {
	var req lockops.AcquireRequest
	return &command{
		takesLocks: true,
		usage:      "lock acquire KEY... [--ttl D] [--reason R] [--task ID] [--wait D] [--branch B] | --package WP",
		short:      "take locks, all or nothing (exit 4 when one is held by another)",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &req.TTL, "ttl", "lock lifetime (default by worker type: human 8h activity / 4h otherwise, agent 1h / 30m); sets a lock you hold exactly, even shorter (without it a renewal never shortens)")
			fs.StringVar(&req.Reason, "reason", "", "why the lock is taken (shown to others)")
			fs.StringVar(&req.Task, "task", "", "task `ID` the lock serves; on an activity: key, takes its task sub-lock")
			durationVar(fs, &req.Wait, "wait", "wait up to `D` for held keys to become free")
			fs.StringVar(&req.Branch, "branch", "", "hold the locks on branch `B` only (locks.per_branch; without it a lock holds on every branch)")
			fs.Var(once(&req.Package), "package", "acquire work package `WP`'s files and keys")
			packagesFlag(fs, &req.PackagesFile)
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if req.TTL < 0 || req.Wait < 0 {
				return service.Usagef("--ttl and --wait must not be negative")
			}
			req.Keys, req.WarnPaths = args, !a.globals.JSON
			return run(ctx, a, func(e *service.Workspace) (lockops.AcquireResult, error) {
				if err := a.acquireWait(req); err != nil {
					return lockops.AcquireResult{}, err
				}
				return e.Locks().Acquire(ctx, req)
			}, a.showAcquired)
		},
	}
}

// acquireWait refuses an acquire that names both keys and a package, or
// neither, and otherwise sets the hint that waits for what it names.
func (a *app) acquireWait(req lockops.AcquireRequest) error {
	switch {
	case req.Package != "" && len(req.Keys) > 0:
		return service.Usagef("lock acquire: give keys or --package, not both")
	case req.Package != "":
		a.waitHint = func(d string) string { return hint.Line(hint.WaitPackage, d, req.Package) }
	case len(req.Keys) == 0:
		return service.Usagef("lock acquire: give at least one KEY (or --package WP)")
	case req.Branch != "":
		// A branch lock's key names it whole: the command needs no flag.
		keys := make([]string, len(req.Keys))
		for i, k := range req.Keys {
			keys[i] = lockkey.BranchKey(req.Branch, k)
		}
		a.waitHint = func(d string) string { return hint.Line(hint.WaitAcquire, d, keys) }
	default:
		a.waitHint = func(d string) string { return hint.Line(hint.WaitAcquire, d, req.Keys) }
	}
	return nil
}

// showAcquired says what each lock taken was, and warns of path keys that
// name a directory or nothing.
func (a *app) showAcquired(e *service.Workspace, res lockops.AcquireResult) error {
	return a.reply(session.AcquiredViews(res.Locks), func() {
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
	})
}

func releaseCommand() *command {
	var req lockops.ReleaseRequest
	return &command{
		usage: "lock release KEY... [--force] [--branch B]",
		short: "release your locks (another's only with --force, which is logged)",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&req.Force, "force", false, "release even if another worker holds it")
			fs.StringVar(&req.Branch, "branch", "", "release the locks held on branch `B` (locks.per_branch)")
		},
		someArgs: "KEY",
		run: func(ctx context.Context, a *app, args []string) error {
			req.Keys = args
			return a.release(ctx, func(e *service.Workspace) (queue.Finished, error) { return released(e.Locks().Release(ctx, req)) }, nil)
		},
	}
}

func refreshCommand() *command {
	var req lockops.RefreshRequest
	return &command{
		usage: "lock refresh KEY... [--ttl D]",
		short: "extend your locks",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &req.TTL, "ttl", "new lifetime from now (default by worker type)")
		},
		someArgs: "KEY",
		run: func(ctx context.Context, a *app, args []string) error {
			if req.TTL < 0 {
				return service.Usagef("--ttl must not be negative")
			}
			req.Keys = args
			return run(ctx, a, func(e *service.Workspace) ([]locks.Lock, error) {
				out, err := e.Locks().Refresh(ctx, req)
				if err != nil {
					a.partial = map[string]any{"refreshed": session.ViewsOf(out)}
				}
				return out, err
			}, func(e *service.Workspace, out []locks.Lock) error {
				return a.reply(session.ViewsOf(out), func() {
					now := e.Now()
					for _, l := range out {
						fmt.Fprintf(a.stdio.Err, "refreshed %s in %s until %s (%s)\n", safetext.Field(l.Key), e.StoreLabel(), stamp(l.ExpiresAt), duration.Until(l.ExpiresAt, now))
					}
				})
			})
		},
	}
}

func listCommand() *command {
	req := lockops.ListRequest{Recover: true}
	return &command{
		noArgs: true,
		usage:  "lock list [--mine] [--stale] [--all]",
		short:  "every live lock: key, holder, type, age, expiry, stale flag, reason, task",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&req.Mine, "mine", false, "only locks of this worker and session")
			fs.BoolVar(&req.Stale, "stale", false, "only stale locks (older than locks.stale_minutes)")
			fs.BoolVar(&req.All, "all", false, "expired records and bookkeeping records (the planner's plan:cycle and cooldown: records, finished packages' task records, queue:epoch) too")
		},
		run: func(ctx context.Context, a *app, _ []string) error {
			return run(ctx, a, func(e *service.Workspace) (lockops.ListResult, error) { return e.Locks().List(ctx, req) }, a.showList)
		},
	}
}

// showList prints the locks as a table, then what it does not show or
// could not read.
func (a *app) showList(e *service.Workspace, res lockops.ListResult) error {
	return a.reply(res.Rows, func() {
		rows, lookAlikes := lockTable(res.Rows, e.Now())
		table(a.stdio.Out, rows)
		fmt.Fprintf(a.stdio.Err, "%d lock(s) in %s\n", len(res.Rows), e.StoreLabel())
		if lookAlikes > 0 {
			fmt.Fprintf(a.stdio.Err, "%d key(s) look like another key of the store: (look-alike: …) spells each in ASCII, as bash reads it in $'…'\n", lookAlikes)
		}
		if res.Expired > 0 {
			fmt.Fprintf(a.stdio.Err, "%d expired record(s) not shown (anyone may take them): `lockgate lock list --all` shows them, `lockgate lock prune` removes them\n", res.Expired)
		}
		for _, r := range res.Rows {
			if r.Corrupt {
				fmt.Fprintf(a.stdio.Err, "lockgate: corrupt lock record %s: %s\n", safetext.Field(r.Location), safetext.Field(r.Error))
				a.printHints(a.carry([]string{r.Hint})...)
			}
		}
	})
}

// lockTable is `lock list`'s table, with how many keys it spells out as
// look-alikes of others.
func lockTable(rows []lockops.LockRow, now time.Time) (out [][]string, lookAlikes int) {
	out = [][]string{{"KEY", "HOLDER", "TYPE", "AGE", "EXPIRES", "STALE", "TASK", "REASON"}}
	for _, r := range rows {
		key := r.Key
		if r.LookAlike != "" {
			key += " (look-alike: " + r.LookAlike + ")"
			lookAlikes++
		}
		if r.Corrupt {
			out = append(out, []string{key, "CORRUPT", "-", "-", "-", "-", "-", "-"})
			continue
		}
		exp := duration.Until(r.ExpiresAt, now)
		if r.Expired {
			exp = "expired " + exp
		}
		out = append(out, []string{key, r.Holder, r.HolderType, duration.Format(now.Sub(r.CreatedAt)), exp, map[bool]string{true: "stale", false: "-"}[r.Stale],
			cmp.Or(r.TaskID, "-"), cmp.Or(safetext.Shorten(r.Reason), "-")})
	}
	return out, lookAlikes
}

func checkCommand() *command {
	return &command{
		usage:    "lock check KEY|PATH...",
		short:    "exit 0 when every key is free or yours, 4 when one is held by another",
		someArgs: "KEY or PATH",
		run: func(ctx context.Context, a *app, args []string) error {
			return run(ctx, a, func(e *service.Workspace) (lockops.CheckResult, error) {
				return e.Locks().Check(ctx, lockops.CheckRequest{Keys: args})
			}, func(e *service.Workspace, res lockops.CheckResult) error {
				err := a.reply(res.Statuses, func() {
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
				})
				if err != nil || !res.Held {
					return err
				}
				return &outcome.ExitError{Code: outcome.ExitLockFailed}
			})
		},
	}
}

func pruneCommand() *command {
	return &command{
		noArgs:     true,
		usage:      "lock prune",
		short:      "remove the records of expired locks (each logged as taken over and released)",
		takesLocks: true,
		run: func(ctx context.Context, a *app, _ []string) error {
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			// What was pruned before an error is said on stderr even under
			// --json.
			pruned, err := e.Locks().Prune(ctx)
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
	var req lockops.ClearRequest
	return &command{
		usage: "lock clear TARGET --force | --record FILE --force",
		short: "remove any lock (key, task id, workflow, claim) or unreadable record file; prints what it removed",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&req.Force, "force", false, "required: clearing removes another worker's lock")
			fs.StringVar(&req.Record, "record", "", "remove the unreadable record `FILE` (as `lock list` names it) of the file or git store")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			switch {
			case req.Record != "" && len(args) != 0:
				return service.Usagef("lock clear: give a TARGET or --record FILE, not both")
			case req.Record == "" && len(args) != 1:
				return service.Usagef("lock clear: give exactly one TARGET (a key, a task id, workflow or claim)")
			case req.Record == "":
				req.Target = args[0]
			}
			if err := req.Check(); err != nil {
				return err
			}
			return run(ctx, a, func(e *service.Workspace) (lockops.ClearResult, error) { return e.Locks().Clear(ctx, req) },
				func(e *service.Workspace, res lockops.ClearResult) error {
					return a.showCleared(e, req.Record != "", res)
				})
		},
	}
}

// showCleared says what clear removed: a corrupt record (on stderr, even
// under --json; byRecord: named by --record), or the lock with its owner,
// age and reason.
func (a *app) showCleared(e *service.Workspace, byRecord bool, res lockops.ClearResult) error {
	switch {
	case res.Corrupt && byRecord:
		fmt.Fprintf(a.stdio.Err, "cleared in %s: removed corrupt record %s\n", e.StoreLabel(), safetext.Field(res.Record))
	case res.Corrupt:
		fmt.Fprintf(a.stdio.Err, "cleared %s in %s: removed corrupt record %s\n", safetext.Field(res.Key), e.StoreLabel(), safetext.Field(res.Record))
	}
	return a.reply(res, func() {
		if res.Corrupt {
			return
		}
		f, l := safetext.Field, res.Cleared
		fmt.Fprintf(a.stdio.Out, "cleared %s\n  owner:      %s (%s, session %s)\n  created_at: %s\n  age:        %s\n  expires_at: %s\n  store:      %s\n",
			f(l.Key), f(l.Holder), f(l.HolderType), f(l.Session), stamp(l.CreatedAt), duration.Format(res.Age), stamp(l.ExpiresAt), res.Store)
		if l.Reason != "" {
			fmt.Fprintf(a.stdio.Out, "  reason:     %s\n", f(l.Reason))
		}
	})
}

func sessionCommand() *command {
	return &command{usage: "session <command>", short: "this session's locks (restore them on the Redis store)", sub: map[string]*command{
		"restore": {
			takesLocks: true,
			usage:      "session restore",
			short:      "Redis: re-acquire this session's persisted locks; skip (and say why) what cannot be",
			noArgs:     true,
			run: func(ctx context.Context, a *app, _ []string) error {
				e, err := a.workspace(ctx)
				if err != nil {
					return err
				}
				res, err := e.Locks().RestoreSession(ctx)
				var usage *service.UsageError
				if errors.As(err, &usage) {
					return err
				}
				for _, s := range res.Skipped {
					fmt.Fprintf(a.stdio.Err, "lockgate: warning: not restored: %s: %s\n", s.Key, s.Reason)
				}
				// What was restored is reported even when some could not be.
				if jerr := a.reply(res, func() {
					for _, k := range res.Restored {
						fmt.Fprintf(a.stdio.Err, "restored %s\n", k)
					}
					if err == nil {
						fmt.Fprintf(a.stdio.Err, "session %s: %d restored, %d skipped, in %s\n", res.Session, len(res.Restored), len(res.Skipped), e.StoreLabel())
						return
					}
					// A count of nothing beside an error would read as an
					// empty history: say the restore failed, and what the
					// history keeps for the next run.
					fmt.Fprintf(a.stdio.Err, "session %s: restore failed, in %s: %d restored, %d skipped", res.Session, e.StoreLabel(), len(res.Restored), len(res.Skipped))
					if len(res.Pending) > 0 {
						fmt.Fprintf(a.stdio.Err, ", not restored (kept in the history; run it again): %s", safetext.Field(strings.Join(res.Pending, ", ")))
					}
					fmt.Fprintln(a.stdio.Err)
				}); jerr != nil {
					return jerr
				}
				return err
			},
		},
	}}
}
