package cli

import (
	"context"
	"fmt"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
)

// app is one run of lockgate: parsed globals and, loaded on demand, the
// workspace: the repository, its config and its lock store.
type app struct {
	stdio   Stdio
	globals Globals
	env     *service.Workspace
	// waitHint, set by commands that can wait for a held lock, renders
	// the command line that waits for D.
	waitHint func(d string) string
	// partial is what a failed command did before it failed, printed with
	// the error object under --json.
	partial map[string]any
	// purpose is what the command does with the lock store it opens;
	// noStore, that it opens none (see command.noStore).
	purpose service.Purpose
	noStore bool
	// style is stderr's colour, decided once (styled).
	style  termstyle.Style
	styled bool
}

// load loads the workspace the command works on, once.
func (a *app) load(ctx context.Context) (*service.Workspace, error) {
	if a.env == nil {
		e, err := service.Load(ctx, a.options())
		if err != nil {
			return nil, err
		}
		a.env = e
	}
	return a.env, nil
}

// options are the workspace options the globals give.
func (a *app) options() service.Options {
	g := a.globals
	return service.Options{
		Dir: g.Dir, ConfigFile: g.ConfigFile, As: g.As, WorkerType: g.WorkerType, Session: g.Session,
		Store: g.Store, AllowStoreMismatch: g.AllowStoreMismatch, Getenv: getenv, Notify: a.notify,
	}
}

// open loads the workspace and opens its lock store for the command's
// purpose.
func (a *app) open(ctx context.Context) (*service.Workspace, error) {
	e, err := a.load(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.Open(ctx, a.purpose); err != nil {
		return nil, err
	}
	return e, nil
}

// notify prints what the workspace says on the side, on stderr.
func (a *app) notify(level, msg string, hints ...string) {
	switch level {
	case "":
		fmt.Fprintf(a.stdio.Err, "lockgate: %s\n", safetext.Text(msg))
	case "warning":
		fmt.Fprintf(a.stdio.Err, "lockgate: %s %s\n", a.paint(termstyle.Warning, "warning:"), safetext.Text(msg))
	default:
		fmt.Fprintf(a.stdio.Err, "lockgate: %s: %s\n", level, safetext.Text(msg))
	}
	a.printHints(a.carry(hints)...)
}
