package cli

import (
	"context"
	"fmt"
	"net/url"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
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
	// hook is the git hook the command runs ("" for other commands).
	hook string
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
		Hook: a.hook,
	}
}

// workspace is the workspace the command works on: loaded and, unless the
// command reads no lock store (command.noStore), with its lock store open
// for the command's purpose.
func (a *app) workspace(ctx context.Context) (*service.Workspace, error) {
	e, err := a.load(ctx)
	if err != nil || a.noStore {
		return e, err
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

// outcome classifies err for this command: the lock in its way and the
// hints that resolve it, with the user's directory, the command's wait
// and the store's record locations.
func (a *app) outcome(err error) outcome.Outcome {
	c := outcome.Context{UserDir: a.userDir(), Wait: a.waitHint}
	if a.env != nil {
		c.Now, c.Where = a.env.Now(), a.env.RecordWhere()
	}
	return outcome.Of(err, c)
}

// printOutcome prints, as hint lines on stderr, what stands in the way of
// the error o classifies and how to resolve it, with the user's options;
// it returns the lines that resolve it.
func (a *app) printOutcome(o outcome.Outcome) []string {
	hints := a.carry(o.Hints)
	if o.Detail != "" {
		a.printHints(o.Detail)
	}
	a.printHints(hints...)
	return hints
}

// carry writes into the lockgate commands of hint lines the global
// options given on this command line (hint.Carry): -C, -c and --store,
// which say where it ran, and --as, --worker-type and --session, which
// say as whom. What came from the environment is not repeated: the shell
// the hint is pasted into has it still.
func (a *app) carry(lines []string) []string {
	g := a.globals
	var where, who []string
	if g.Dir != "" && a.env != nil {
		where = append(where, "-C", hint.Quote(a.env.Dir()))
	}
	if g.ConfigFile != "" && a.env != nil && a.env.ConfigPath() != "" {
		where = append(where, "-c", hint.Quote(a.env.ConfigPath()))
	}
	// A password is not printed: such a store is named in the environment.
	if u, err := url.Parse(g.Store); g.Store != "" && (err != nil || u.User == nil) {
		where = append(where, "--store", hint.Quote(g.Store))
	}
	if g.AllowStoreMismatch {
		where = append(where, "--allow-store-mismatch")
	}
	for _, o := range []struct{ flag, v string }{{"--as", g.As}, {"--worker-type", g.WorkerType}, {"--session", g.Session}} {
		if o.v != "" {
			who = append(who, o.flag, hint.Quote(o.v))
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = hint.Carry(l, where, who)
	}
	return out
}

// carryReport carries the options into the hints of a hook's report.
func (a *app) carryReport(r *service.Report) {
	for i := range r.Violations {
		if h := r.Violations[i].Hint; h != "" {
			r.Violations[i].Hint = a.carry([]string{h})[0]
		}
	}
}

// userDir is the user's directory for hints (see env.userDir); "" before
// the repository is known.
func (a *app) userDir() string {
	if a.env == nil {
		return ""
	}
	return a.env.UserDir()
}
