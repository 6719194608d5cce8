package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

// VerifyOptions are `verify`'s flags.
type VerifyOptions struct {
	Range      string
	Staged     bool
	Fetch      bool
	Format     string
	AllowEmpty bool
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
			if o.Staged && o.Range != "" {
				return service.Usagef("verify: give --staged or --range, not both")
			}
			if err := reportFormat("verify", o.Format); err != nil {
				return err
			}
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			// The policy of the commits' base judges them (JudgeByBase).
			revArgs := []string{"HEAD", "--not", "--remotes"}
			switch {
			case o.Staged && e.Repo.Toplevel == "":
				return service.Usagef("verify --staged: a bare repository has no staged change")
			case o.Staged:
				revArgs = nil
				err = e.JudgeByHead(ctx)
			case o.Range != "":
				if err := verifyRange(ctx, e.Root(), "verify", o.Range); err != nil {
					return err
				}
				revArgs = []string{o.Range}
				err = e.JudgeByBase(ctx, o.Range)
			default:
				err = e.JudgeByBase(ctx, "")
			}
			if err != nil {
				return err
			}
			h, err := e.LogRunner(ctx, "")
			if err != nil {
				return err
			}
			if o.Fetch {
				if err := e.FetchLockLog(ctx); err != nil {
					return err
				}
			}
			r, err := e.Verify(ctx, h, revArgs)
			if err != nil {
				return err
			}
			if r.Paths == 0 && r.OK && !o.AllowEmpty && !o.Staged {
				what := "HEAD has no commit that changes a file and is on no remote-tracking ref; name the commits with --range A..B"
				if o.Range != "" {
					what = "--range " + o.Range + " changes no file (no commits, or none that changes a file)"
				}
				return service.Usagef("verify: %s; pass --allow-empty to accept that", what)
			}
			if o.Staged && r.Paths == 0 && !o.AllowEmpty {
				return service.Usagef("verify: nothing is staged; pass --allow-empty to accept that")
			}
			return a.finishReport(r, "verify", o.Format)
		},
	}
}
