package cli

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/service"
)

func workflowSyncCommand() *command {
	var req service.SyncRequest
	return &command{
		noArgs: true,
		usage:  "workflow sync [--push | --no-push]",
		short:  "commit journal events not yet on the workflow branch (and push per workflow.auto_push)",
		flags:  func(fs *pflag.FlagSet) { pushFlags(fs, &req) },
		run: func(ctx context.Context, a *app, _ []string) error {
			if err := checkPushFlags("workflow sync", req); err != nil {
				return err
			}
			return run(ctx, a, func(e *service.Workspace) (*service.Synced, error) { return e.SyncWorkflow(ctx, req) },
				func(_ *service.Workspace, r *service.Synced) error {
					return a.reply(r, func() {
						fmt.Fprintf(a.stdio.Err, "%s: %d events committed (%d already there)", r.Branch, r.Committed, r.Already)
						if r.Others > 0 {
							fmt.Fprintf(a.stdio.Err, "; %d of other workers left in the journal for them to sign", r.Others)
						}
						if r.Pushed {
							fmt.Fprintf(a.stdio.Err, "; pushed to %s", r.Remote)
						}
						fmt.Fprintln(a.stdio.Err)
					})
				})
		},
	}
}

func workflowMigrateCommand() *command {
	var req service.SyncRequest
	return &command{
		noArgs: true,
		usage:  "workflow migrate [--push | --no-push]",
		short:  "move a workflow branch of format 1 to format 2 in place (and push per workflow.auto_push)",
		flags:  func(fs *pflag.FlagSet) { pushFlags(fs, &req) },
		run: func(ctx context.Context, a *app, _ []string) error {
			if err := checkPushFlags("workflow migrate", req); err != nil {
				return err
			}
			return run(ctx, a, func(e *service.Workspace) (*service.Migrated, error) { return e.MigrateWorkflow(ctx, req) },
				func(_ *service.Workspace, r *service.Migrated) error {
					return a.reply(r, func() {
						switch {
						case r.Merge != "":
							fmt.Fprintf(a.stdio.Err, "%s: %s's branch was moved to format 2 already: took it (%.12s), merged with this clone's own events (%.12s)", r.Branch, r.Remote, r.Merged, r.Merge)
						case r.Merged != "":
							fmt.Fprintf(a.stdio.Err, "%s: %s's branch was moved to format 2 already: took it (%.12s)", r.Branch, r.Remote, r.Merged)
						case r.Base == "":
							fmt.Fprintf(a.stdio.Err, "%s: already of format 2 (or not started), nothing to migrate", r.Branch)
						default:
							fmt.Fprintf(a.stdio.Err, "%s: moved to format 2 on top of %.12s", r.Branch, r.Base)
						}
						if r.Pushed {
							fmt.Fprintf(a.stdio.Err, "; pushed to %s", r.Remote)
						}
						fmt.Fprintln(a.stdio.Err)
					})
				})
		},
	}
}

// pushFlags are --push and --no-push of the workflow commands.
func pushFlags(fs *pflag.FlagSet, req *service.SyncRequest) {
	fs.BoolVar(&req.Push, "push", false, "push the branch even when workflow.auto_push is off")
	fs.BoolVar(&req.NoPush, "no-push", false, "do not push, whatever workflow.auto_push says")
}

func checkPushFlags(cmd string, req service.SyncRequest) error {
	if req.Push && req.NoPush {
		return service.Usagef("%s: --push and --no-push contradict each other", cmd)
	}
	return nil
}

func logCommand() *command {
	var req service.LogRequest
	return &command{
		noArgs: true,
		// The log needs no lock store (which may be down).
		noStore: true,
		usage:   "log [--since D] [--until D|TIME] [--worker W] [--action A] [--key K] [--json]",
		short:   "lock events, newest last",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &req.Since, "since", "only events of the last `D`")
			fs.Var(&untilValue{ago: &req.UntilAgo, at: &req.Until}, "until", "only events before `D|TIME`: D ago, or an RFC 3339 time")
			fs.StringVar(&req.Worker, "worker", "", "only events of worker `W`")
			fs.StringVar(&req.Action, "action", "", "only events with action `A` (lock_acquire, lock_clear, …)")
			fs.StringVar(&req.Key, "key", "", "only events on lock key `K`, exactly as it was locked: a pattern (src/**) finds the events of that pattern's locks, not of the paths it matches")
		},
		run: func(ctx context.Context, a *app, _ []string) error {
			if req.Since < 0 {
				return service.Usagef("--since must not be negative")
			}
			return run(ctx, a, func(e *service.Workspace) ([]service.LogEvent, error) { return e.Log(ctx, req) },
				func(_ *service.Workspace, evs []service.LogEvent) error {
					return a.reply(evs, func() {
						rows := [][]string{{"TIME", "WORKER", "TYPE", "ACTION", "KEY", "DETAILS"}}
						for _, ev := range evs {
							rows = append(rows, []string{stamp(ev.Timestamp), ev.Worker, ev.WorkerType, ev.Action, cmp.Or(ev.Key, "-"), cmp.Or(ev.Details, "-")})
						}
						table(a.stdio.Out, rows)
					})
				})
		},
	}
}

// untilValue is --until: a duration back from now (90s, 2h, 1d) or an
// RFC 3339 time; the one given sets its field and clears the other.
type untilValue struct {
	ago *time.Duration
	at  *time.Time
}

func (u *untilValue) String() string {
	switch {
	case u.at != nil && !u.at.IsZero():
		return u.at.UTC().Format(time.RFC3339)
	case u.ago != nil && *u.ago != 0:
		return duration.Format(*u.ago)
	}
	return ""
}

func (u *untilValue) Set(s string) error {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		*u.at, *u.ago = t, 0
		return nil
	}
	d, err := duration.Parse(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is neither a duration (90s, 2h, 1d) nor an RFC 3339 time (2026-01-02T15:04:05Z)", s)
	}
	*u.ago, *u.at = d, time.Time{}
	return nil
}

func (u *untilValue) Type() string { return "D|TIME" }
