package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

// VerifyOptions are `verify`'s flags.
type VerifyOptions struct {
	service.VerifyRequest
	Format string
}

// AddFlags registers the options on fs.
func (o *VerifyOptions) AddFlags(fs *pflag.FlagSet) {
	o.Format = "text"
	fs.Var(once(&o.Range), "range", "verify every commit of `A..B` (as git rev-list; default: HEAD's commits on no remote-tracking ref)")
	fs.BoolVar(&o.Staged, "staged", false, "verify the staged change as a commit made now")
	fs.BoolVar(&o.Fetch, "fetch", false, "fetch the workflow branch from workflow.remote first")
	fs.Var(once(&o.Format), "format", "output: text, json or github (workflow annotations)")
	fs.BoolVar(&o.AllowEmpty, "allow-empty", false, "accept a range with no commit that changes a file instead of exit 2")
}

func verifyCommand() *command {
	o := &VerifyOptions{}
	return &command{
		usage:      "verify [--range A..B | --staged] [--fetch] [--format text|json|github]",
		short:      "prove commits against the lock log: made by their authors under no one else's lock (exit 1 violations, 3 log incomplete)",
		flags:      o.AddFlags,
		jsonErrors: func() bool { return o.Format == "json" },
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("verify: unexpected arguments %q", args)
			}
			if err := o.Validate(); err != nil {
				return err
			}
			if err := reportFormat("verify", o.Format); err != nil {
				return err
			}
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			r, err := e.Verify(ctx, o.VerifyRequest)
			if err != nil {
				return err
			}
			return a.finishReport(r, "verify", o.Format)
		},
	}
}
