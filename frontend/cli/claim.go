package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
)

// ClaimOptions are `claim`'s flags.
type ClaimOptions struct {
	Packages string
	TTL      time.Duration
	Wait     time.Duration
}

// AddFlags registers the options on fs.
func (o *ClaimOptions) AddFlags(fs *pflag.FlagSet) {
	packagesFlag(fs, &o.Packages)
	durationVar(fs, &o.TTL, "ttl", "lock lifetime (default: the package's ttl, else by worker type)")
	durationVar(fs, &o.Wait, "wait", "with WP: wait up to `D` for its locks")
}

func claimCommand() *command {
	o := &ClaimOptions{}
	return &command{
		takesLocks: true,
		usage:      "claim [WP] [--packages FILE]",
		short:      "claim a work package: its task lock and all its locks (without WP, the next ready one)",
		flags:      o.AddFlags,
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 1 {
				return service.Usagef("claim: give at most one work package id")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			r := service.ClaimRequest{PackageRequest: service.PackageRequest{Packages: o.Packages}, TTL: o.TTL, Wait: o.Wait}
			if len(args) == 1 {
				r.ID = args[0]
				a.waitHint = func(d string) string { return hint.Line(hint.WaitClaim, d, r.ID) }
			}
			c, err := e.ClaimWork(ctx, r)
			var none *service.NoFreePackageError
			if errors.As(err, &none) && none.Last != "" {
				// Without WP, --wait only waits for the claim lock: the
				// hint waits for the package that was tried last.
				a.waitHint = func(d string) string { return hint.Line(hint.WaitClaim, d, none.Last) }
			}
			switch {
			case err != nil:
				return err
			case c.Drained:
				return a.reportDrained(e, c.Queue)
			}
			return a.reportClaim(e, c)
		},
	}
}

// reportDrained says that nothing is left to claim: every package is done
// or failed. It prints no package id, so that a loop reading the id stops.
func (a *app) reportDrained(e *service.Workspace, q *service.Queue) error {
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, map[string]any{"package": "", "status": "drained", "counts": q.Counts, "store": e.StoreName()})
	}
	fmt.Fprintf(a.stdio.Err, "claim: nothing left to claim in %s: %d done, %d failed\n", q.Path, q.Counts[service.PackageDone], q.Counts[service.PackageFailed])
	return nil
}

func (a *app) reportClaim(e *service.Workspace, c service.Claimed) error {
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, map[string]any{"package": c.ID, "status": "claimed", "locks": acquiredViews(c.Locks), "store": e.StoreName()})
	}
	fmt.Fprintf(a.stdio.Out, "%s\n", safetext.Field(c.ID))
	fmt.Fprintf(a.stdio.Err, "claimed %s: %d locks in %s until %s\n", safetext.Field(service.PackageLabel(c.ID, c.Title)), len(c.Locks), e.StoreLabel(), stamp(c.Locks[0].Lock.ExpiresAt))
	return nil
}

func doneCommand() *command {
	var packages string
	var how service.Finish
	return &command{
		usage: "done WP [--commit REV] [--failed REASON] [--packages FILE]",
		short: "finish a claimed work package: mark it done (or failed) and release its locks",
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &packages)
			fs.Var(once(&how.Commit), "commit", "the commit that finished it (default: HEAD)")
			fs.Var(once(&how.Failed), "failed", "mark it failed for `REASON` instead: claims skip it until `lockgate retry`")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("done: give exactly one work package id")
			}
			if how.Failed != "" && how.Commit != "" {
				return service.Usagef("done: --commit names what finished a package done; a failed one names no commit")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			res, err := e.FinishPackage(ctx, service.FinishRequest{PackageRequest: service.PackageRequest{Packages: packages, ID: args[0]}, Finish: how})
			for _, k := range res.Kept {
				fmt.Fprintf(a.stdio.Err, "kept %s: %s\n", safetext.Field(k.Key), k.Why)
			}
			if err == nil {
				if how.Failed != "" {
					fmt.Fprintf(a.stdio.Err, "%s failed: %s\n", safetext.Field(args[0]), safetext.Field(how.Failed))
				} else {
					fmt.Fprintf(a.stdio.Err, "%s done%s\n", safetext.Field(args[0]), service.AtCommit(res.Record.Commit))
				}
			}
			a.reportRelease(e, res.ReleaseResult, err)
			return err
		},
	}
}
