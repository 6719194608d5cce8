package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

func claimCommand() *command {
	var req queue.ClaimRequest
	return &command{
		takesLocks: true,
		usage:      "claim [WP] [--ttl D] [--wait D] [--packages FILE]",
		short:      "claim a work package: its task lock and all its locks (without WP, the next ready one)",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &req.Packages)
			durationVar(fs, &req.TTL, "ttl", "lock lifetime (default: the package's ttl, else by worker type)")
			durationVar(fs, &req.Wait, "wait", "with WP: wait up to `D` for its locks")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 1 {
				return service.Usagef("claim: give at most one work package id")
			}
			if len(args) == 1 {
				req.ID = args[0]
				a.waitHint = func(d string) string { return hint.Line(hint.WaitClaim, d, req.ID) }
			}
			a.purpose.Settles = true
			return run(ctx, a, func(e *service.Workspace) (queue.Claimed, error) {
				c, err := e.Queue().ClaimWork(ctx, req)
				var none *queue.NoFreePackageError
				if errors.As(err, &none) && none.Last != "" {
					// Without WP, --wait only waits for the claim lock: the
					// hint waits for the package that was tried last.
					a.waitHint = func(d string) string { return hint.Line(hint.WaitClaim, d, none.Last) }
				}
				return c, err
			}, func(e *service.Workspace, c queue.Claimed) error { return a.showClaim(ctx, e, c) })
		},
	}
}

// showClaim prints the id of the package claimed on stdout, for a loop
// to read, and what the claim took on stderr. With nothing left to claim
// (every package done or failed) it prints no id, so that the loop stops.
// The claim's events are on the remote first (a.settle): a worker's
// commits are verified against them.
func (a *app) showClaim(ctx context.Context, e *service.Workspace, c queue.Claimed) error {
	if q := c.Queue; c.Drained {
		out := map[string]any{"package": "", "status": "drained", "counts": q.Counts, "store": e.StoreName()}
		a.settle(ctx, e, out)
		return a.reply(out, func() {
			fmt.Fprintf(a.stdio.Err, "claim: nothing left to claim in %s: %d done, %d failed\n", q.Path, q.Counts[queue.PackageDone], q.Counts[queue.PackageFailed])
		})
	}
	out := map[string]any{"package": c.ID, "status": "claimed", "locks": session.AcquiredViews(c.Locks), "store": e.StoreName()}
	a.settle(ctx, e, out)
	return a.reply(out, func() {
		fmt.Fprintf(a.stdio.Out, "%s\n", safetext.Field(c.ID))
		fmt.Fprintf(a.stdio.Err, "claimed %s: %d locks in %s until %s\n", safetext.Field(session.PackageLabel(c.ID, c.Title)), len(c.Locks), e.StoreLabel(), stamp(c.Locks[0].Lock.ExpiresAt))
	})
}

func doneCommand() *command {
	var req queue.FinishRequest
	return &command{
		oneArg: "work package id",
		usage:  "done WP [--commit REV] [--failed REASON] [--packages FILE]",
		short:  "finish a claimed work package: mark it done (or failed) and release its locks",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &req.Packages)
			fs.Var(once(&req.Commit), "commit", "the commit that finished it (default: HEAD)")
			fs.Var(once(&req.Failed), "failed", "mark it failed for `REASON` instead: claims skip it until `lockgate retry`")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if req.Failed != "" && req.Commit != "" {
				return service.Usagef("done: --commit names what finished a package done; a failed one names no commit")
			}
			req.ID = args[0]
			return a.release(ctx, func(e *service.Workspace) (queue.Finished, error) { return e.Queue().FinishPackage(ctx, req) }, func(f queue.Finished) {
				if req.Failed != "" {
					fmt.Fprintf(a.stdio.Err, "%s failed: %s\n", safetext.Field(req.ID), safetext.Field(req.Failed))
				} else {
					fmt.Fprintf(a.stdio.Err, "%s done%s\n", safetext.Field(req.ID), queue.AtCommit(f.Record.Commit))
				}
			})
		},
	}
}
