package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

func verifyCommand() *command {
	var req service.VerifyRequest
	format := "text"
	return &command{
		noStore: true,
		usage:   "verify [--range A..B | --staged] [--fetch] [--format text|json|github]",
		short:   "prove commits against the lock log: made by their authors under no one else's lock (exit 1 violations, 3 log incomplete)",
		flags: func(fs *pflag.FlagSet) {
			fs.Var(once(&req.Range), "range", "verify every commit of `A..B` (as git rev-list; default: HEAD's commits on no remote-tracking ref)")
			fs.BoolVar(&req.Staged, "staged", false, "verify the staged change as a commit made now")
			fs.BoolVar(&req.Fetch, "fetch", false, "fetch the workflow branch from workflow.remote first")
			fs.Var(once(&format), "format", "output: text, json or github (workflow annotations)")
			fs.BoolVar(&req.AllowEmpty, "allow-empty", false, "accept a range with no commit that changes a file instead of exit 2")
		},
		jsonErrors: func() bool { return format == "json" },
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("verify: unexpected arguments %q", args)
			}
			if err := req.Validate(); err != nil {
				return err
			}
			if err := reportFormat("verify", format); err != nil {
				return err
			}
			return run(ctx, a, func(e *service.Workspace) (*service.Report, error) { return e.Verify(ctx, req) },
				func(_ *service.Workspace, r *service.Report) error { return a.finishReport(r, "verify", format) })
		},
	}
}
