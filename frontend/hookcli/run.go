package hookcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/session"
)

// Stdio is where a hook reads and writes.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Console is how a front end prints on stderr: in colour or not, and with
// its command line's options carried into the hints it prints.
type Console interface {
	Paint(role termstyle.Role, text string) string
	CarryReport(r *session.Report)
}

// Contract is one hook's contract, run on the workspace it was loaded
// with.
type Contract func(ctx context.Context, in session.HookInput) (*session.Report, error)

// Run is one run of a git hook.
type Run struct {
	// Name is the hook; Args what git gives it.
	Name string
	Args []string
	// Stdio is the hook's; Console prints on Stdio.Err.
	Stdio   Stdio
	Console Console
	// Options are the workspace's (the bypass reads them when the
	// workspace cannot be loaded).
	Options session.Options
	// JSON prints the report on stdout as JSON too (--json).
	JSON bool
	// Load loads the workspace and returns Name's contract on it; the
	// workspace is nil when it could not be loaded.
	Load func(ctx context.Context) (*session.Workspace, Contract, error)
	// WriteJSON writes a value as JSON on stdout.
	WriteJSON func(v any) error
}

// Do runs the hook on what git gives it, unless LOCKGATE_SKIP skips it,
// and prints its report. A refusal is an *outcome.ExitError (exit 1, or
// 3 when the lock log could not judge everything).
func (r *Run) Do(ctx context.Context) error {
	if err := session.HookArgs(r.Name, r.Args); err != nil {
		return err
	}
	getenv := r.Options.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	in := session.HookInput{Args: r.Args, Stdin: r.Stdio.In, Getenv: getenv, Environ: os.Environ()}
	if r.Name == "reference-transaction" {
		// Most transactions (fetches, tags, checkouts, the commits the
		// commit hooks judged) need no repository, config or store: they
		// are let through before any is read, and no bypass is logged.
		tx, err := session.ReadRefTransaction(ctx, r.Options.Dir, r.Args, r.Stdio.In)
		if err != nil {
			return err
		}
		if tx.Empty() {
			return nil
		}
		in.Transaction = tx
	}
	e, run, loadErr := r.Load(ctx)
	if strings.HasPrefix(r.Name, "post-") {
		// After the fact: nothing to refuse, and git would report a
		// failure as the checkout's or merge's own.
		if loadErr != nil {
			fmt.Fprintf(r.Stdio.Err, "lockgate: warning: %s: %v\n", r.Name, loadErr)
			return nil
		}
		rep, err := run(ctx, in)
		if err != nil {
			fmt.Fprintf(r.Stdio.Err, "lockgate: warning: %s: %v\n", r.Name, err)
			return nil
		}
		for _, w := range rep.Warnings {
			fmt.Fprintf(r.Stdio.Err, "lockgate: warning: %s\n", w)
		}
		return nil
	}
	if loadErr != nil {
		e = nil
	}
	switch b := session.BypassHook(ctx, e, r.Options, r.Name); {
	case b.Invalid != "":
		fmt.Fprintf(r.Stdio.Err, "lockgate: LOCKGATE_SKIP=%q is not 1, true or yes: the checks run\n", b.Invalid)
	case b.Unrecorded != nil:
		fmt.Fprintf(r.Stdio.Err, "lockgate: LOCKGATE_SKIP not honoured: the bypass cannot be recorded: %v\n", b.Unrecorded)
	case b.Skipped:
		fmt.Fprintf(r.Stdio.Err, "lockgate: LOCKGATE_SKIP is set: %s checks skipped (recorded as hook_bypass)\n", r.Name)
		return nil
	}
	if loadErr != nil {
		return &session.HookError{Hook: r.Name, Err: loadErr}
	}
	rep, err := run(ctx, in)
	if err != nil {
		return err
	}
	return r.Finish(rep, r.Name, "")
}

// Finish prints a report — as JSON on stdout under --json or format
// json, as workflow annotations for format github, and for people on
// stderr unless JSON — and turns a refusal into exit 1.
func (r *Run) Finish(rep *session.Report, what, format string) error {
	r.Console.CarryReport(rep)
	switch {
	case r.JSON || format == "json":
		if err := r.WriteJSON(rep); err != nil {
			return err
		}
	case format == "github":
		rep.WriteGitHub(r.Stdio.Out)
	}
	if !r.JSON && format != "json" {
		rep.WriteStyled(r.Stdio.Err, what, func(role, text string) string { return r.Console.Paint(termstyle.Role(role), text) })
	}
	switch {
	case rep.OK:
		return nil
	case len(rep.Violations) == 0:
		// Nothing proven wrong, but the lock log could not judge
		// everything (verify): never a pass.
		return &outcome.ExitError{Code: outcome.ExitUnavailable}
	}
	return &outcome.ExitError{Code: outcome.ExitPolicy}
}
