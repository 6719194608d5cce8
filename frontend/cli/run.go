package cli

import (
	"context"

	"github.com/lockgate/lockgate/service"
)

// run makes a command's one request of the service: it loads the
// workspace and, unless the command reads no lock store (command.noStore),
// opens the store for the command's purpose; do makes the request and,
// when it succeeds, show renders the result (a.reply: JSON under --json,
// text otherwise). An error goes back to Main as it is: Main closes the
// workspace, prints the error with its hints (and the error object under
// --json) and turns it into the exit code.
func run[R any](ctx context.Context, a *app, do func(*service.Workspace) (R, error), show func(*service.Workspace, R) error) error {
	e, err := a.workspace(ctx)
	if err != nil {
		return err
	}
	r, err := do(e)
	if err != nil {
		return err
	}
	return show(e, r)
}

// workspace is the workspace the command works on: loaded and, unless the
// command reads no lock store, with the store open.
func (a *app) workspace(ctx context.Context) (*service.Workspace, error) {
	if a.noStore {
		return a.load(ctx)
	}
	return a.open(ctx)
}

// reply shows a result: v as JSON on stdout under --json, else what text
// prints.
func (a *app) reply(v any, text func()) error {
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, v)
	}
	text()
	return nil
}
