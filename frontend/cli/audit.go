package cli

import (
	"context"
	"fmt"

	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"
)

func workflowCommand() *command {
	return &command{usage: "workflow <command>", short: "the workflow branch: commit the journal's events to it and push it", sub: map[string]*command{
		"sync": workflowSyncCommand(),
	}}
}

func workflowSyncCommand() *command {
	var push, noPush bool
	return &command{
		usage: "workflow sync [--push | --no-push]",
		short: "commit journal events not yet on the workflow branch (and push per workflow.auto_push)",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&push, "push", false, "push the branch even when workflow.auto_push is off")
			fs.BoolVar(&noPush, "no-push", false, "do not push, whatever workflow.auto_push says")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("workflow sync takes no arguments")
			}
			if push && noPush {
				return service.Usagef("workflow sync: --push and --no-push contradict each other")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			w, err := e.BranchWriter(ctx)()
			if err != nil {
				return err
			}
			res, err := w.Sync(ctx, e.Journal)
			if err != nil {
				return fmt.Errorf("workflow sync: %w (the events stay in the journal)", err)
			}
			a.env.WarnSkipped(e.Journal.Path(), res.Corrupt)
			pushed := false
			if (e.Cfg.Workflow.AutoPush || push) && !noPush {
				if err := w.Push(ctx); err != nil {
					return err
				}
				pushed = true
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, map[string]any{"branch": w.Branch(), "journal": res.Journal,
					"already": res.Present, "committed": res.Committed, "commits": res.Commits, "pushed": pushed})
			}
			fmt.Fprintf(a.stdio.Err, "%s: %d events committed (%d already there)", w.Branch(), res.Committed, res.Present)
			if pushed {
				fmt.Fprintf(a.stdio.Err, "; pushed to %s", e.Cfg.Workflow.Remote)
			}
			fmt.Fprintln(a.stdio.Err)
			return nil
		},
	}
}
