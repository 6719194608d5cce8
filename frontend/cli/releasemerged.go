package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
)

func releaseMergedCommand() *command {
	var req lockops.ReleaseMergedRequest
	return &command{
		noArgs: true,
		usage:  "release-merged --range BEFORE..AFTER [--branch B] [--dry-run]",
		short:  "release the locks whose holder's work just landed on the branch (locks.release_on_merge)",
		flags: func(fs *pflag.FlagSet) {
			fs.Var(once(&req.Range), "range", "the commits `BEFORE..AFTER` that just landed (a push's old and new value)")
			fs.Var(once(&req.Branch), "branch", "the branch `B` they landed on (default: the range's base branch, else the CI's branch, else HEAD's)")
			fs.BoolVar(&req.DryRun, "dry-run", false, "say what would be released; release nothing")
		},
		run: func(ctx context.Context, a *app, _ []string) error {
			if req.Range == "" {
				return service.Usagef("release-merged: give --range BEFORE..AFTER")
			}
			return run(ctx, a, func(e *service.Workspace) (lockops.ReleaseMergedResult, error) {
				return e.Locks().ReleaseMerged(ctx, req)
			},
				func(_ *service.Workspace, res lockops.ReleaseMergedResult) error {
					return a.reply(res, func() { a.showMerged(res) })
				})
		},
	}
}

// showMerged says what release-merged released and kept, and why.
func (a *app) showMerged(res lockops.ReleaseMergedResult) {
	if !res.Enabled {
		fmt.Fprintln(a.stdio.Err, "lockgate: locks.release_on_merge is off: nothing released (set it to true in .lockgate.yaml)")
		return
	}
	verb := "released"
	if res.DryRun {
		verb = "would release"
	}
	for _, m := range res.Released {
		fmt.Fprintf(a.stdio.Err, "%s %s of %s: its work (%s) is on %s in %s\n", verb, safetext.Field(m.Key), safetext.Field(m.Holder),
			strings.Join(shorts(m.Commits), ", "), safetext.Field(res.Branch), shorts([]string{m.Merge})[0])
	}
	for _, m := range res.Kept {
		fmt.Fprintf(a.stdio.Err, "kept %s of %s: %s has commits on it that %s does not have yet (%s)\n", safetext.Field(m.Key), safetext.Field(m.Holder),
			safetext.Field(m.Holder), safetext.Field(res.Branch), strings.Join(shorts(m.Unmerged), ", "))
	}
	if len(res.Released)+len(res.Kept) == 0 {
		fmt.Fprintf(a.stdio.Err, "lockgate: no lock's work landed in %s\n", safetext.Field(res.Range))
	}
}

// shorts is each commit name cut to 12 digits.
func shorts(shas []string) []string {
	out := make([]string, len(shas))
	for i, s := range shas {
		out[i] = s[:min(len(s), 12)]
	}
	return out
}
