package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/config"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/locks"
)

// ClaimOptions are `claim`'s flags.
type ClaimOptions struct {
	Packages string
	TTL      time.Duration
	Wait     time.Duration
}

// AddFlags registers the options on fs.
func (o *ClaimOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Var(once(&o.Packages), "packages", "work packages `FILE` (default: work_packages of the config)")
	durationVar(fs, &o.TTL, "ttl", "lock lifetime (default: the package's ttl, else by worker type)")
	durationVar(fs, &o.Wait, "wait", "with WP: wait up to `D` for its locks")
}

func claimCommand() *command {
	o := &ClaimOptions{}
	return &command{
		takesLocks: true,
		usage:      "claim [WP] [--packages FILE]",
		short:      "claim a work package: its task lock and all its locks (the next free one without WP)",
		flags:      o.AddFlags,
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 1 {
				return service.Usagef("claim: give at most one work package id")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			wps, err := e.LoadPackages(o.Packages)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				wp, ok := wps.Find(args[0])
				if !ok {
					return service.Usagef("no work package %q in %s", args[0], wps.Path)
				}
				a.waitHint = func(d string) string { return hint.Line(hint.WaitClaim, d, wp.ID) }
				res, err := e.ClaimPackage(ctx, wp, service.Claim{TTL: o.TTL, Wait: o.Wait})
				return a.reportClaim(wp, res, err)
			}
			wp, res, err := e.ClaimNext(ctx, wps, service.Claim{TTL: o.TTL, Wait: o.Wait})
			var none *service.NoFreePackageError
			if errors.As(err, &none) {
				// Without WP, --wait only waits for the claim lock: the
				// hint waits for the package that was tried last.
				a.waitHint = func(d string) string { return hint.Line(hint.WaitClaim, d, none.Last) }
			}
			return a.reportClaim(wp, res, err)
		},
	}
}

func (a *app) reportClaim(wp *config.WorkPackage, res []locks.Result, err error) error {
	if err != nil {
		return err
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, map[string]any{"package": wp.ID, "locks": acquiredViews(res), "store": a.env.StoreName()})
	}
	fmt.Fprintf(a.stdio.Out, "%s\n", safetext.Field(wp.ID))
	fmt.Fprintf(a.stdio.Err, "claimed %s (%s): %d locks in %s until %s\n", safetext.Field(wp.ID), safetext.Field(wp.Title), len(res), a.env.StoreLabel(), stamp(res[0].Lock.ExpiresAt))
	return nil
}

func doneCommand() *command {
	var packages string
	return &command{
		usage: "done WP [--packages FILE]",
		short: "finish a claimed work package: release its locks",
		flags: func(fs *pflag.FlagSet) {
			fs.Var(once(&packages), "packages", "work packages `FILE` (default: work_packages of the config)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("done: give exactly one work package id")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			res, err := e.FinishPackage(ctx, packages, args[0])
			for _, k := range res.Kept {
				fmt.Fprintf(a.stdio.Err, "kept %s: %s\n", safetext.Field(k.Key), k.Why)
			}
			a.reportRelease(e, res.ReleaseResult, err)
			return err
		},
	}
}
