package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
)

// Pre-edit guards ask, before a file is edited, what the pre-commit hook
// would answer when it is committed (service.Workspace.CheckPaths).

func guardEditCommand() *command {
	return &command{
		usage:   "guard edit PATH...",
		short:   "exit 0 when this worker may edit PATH (free or its own, in scope, not paused); 1 with the reason otherwise",
		noStore: true,
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) == 0 {
				return service.Usagef("guard edit: give at least one PATH")
			}
			return run(ctx, a, func(e *service.Workspace) (*service.PathCheckResult, error) {
				return e.CheckPaths(ctx, service.PathCheck{Paths: args})
			},
				func(_ *service.Workspace, res *service.PathCheckResult) error {
					return a.finishReport(res.Report, "edit", "")
				})
		},
	}
}

func guardClaudeCodeCommand() *command {
	return &command{
		usage: "guard claude-code",
		short: "Claude Code PreToolUse hook: reads the payload on stdin; exit 2 blocks the edit with the reason on stderr",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return a.blockEdit(service.Usagef("guard claude-code takes no arguments (the payload comes on stdin)"))
			}
			// The caller is a coding agent unless told otherwise.
			if a.globals.WorkerType == "" && getenv("LOCKGATE_WORKER_TYPE") == "" {
				a.globals.WorkerType = "agent"
			}
			in, err := service.ReadEditPayload(a.stdio.In)
			if err != nil {
				return a.blockEdit(err)
			}
			if in.Path == "" {
				return nil // not an edit: nothing to guard
			}
			if in.Cwd != "" && a.globals.Dir == "" {
				if !filepath.IsAbs(in.Cwd) {
					return a.blockEdit(fmt.Errorf("payload cwd %q is not absolute", in.Cwd))
				}
				a.globals.Dir = in.Cwd
			}
			e, err := a.load(ctx)
			if err != nil {
				return a.blockEdit(err)
			}
			res, err := e.CheckPaths(ctx, service.PathCheck{Paths: []string{in.Path}})
			if err != nil {
				return a.blockEdit(err)
			}
			r := res.Report
			for _, w := range r.Warnings {
				fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s\n", w)
			}
			if r.OK {
				return nil
			}
			a.carryReport(r)
			r.WriteStyled(a.stdio.Err, in.Tool+" of "+safetext.Field(safetext.Shorten(res.Paths[0])), a.paintRole)
			return &outcome.ExitError{Code: claudeBlock}
		},
	}
}

// claudeBlock is the exit code with which a Claude Code hook blocks a tool
// call; any other non-zero code lets the call go ahead.
const claudeBlock = 2

// blockEdit refuses an edit the guard could not vouch for: in Claude Code's
// protocol only exit 2 blocks, so every failure must end there.
func (a *app) blockEdit(err error) error {
	fmt.Fprintf(a.stdio.Err, "lockgate: edit blocked: %s\n", safetext.Text(err.Error()))
	a.printOutcome(a.outcome(err))
	return &outcome.ExitError{Code: claudeBlock}
}
