package hookcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/internal/version"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/session"
)

// Own are the hooks the hook binary runs itself: the ones git runs on
// every commit and push. The others (pre-receive on a server, the post-*
// hooks) it hands to lockgate.
var Own = []string{"pre-commit", "pre-merge-commit", "commit-msg", "pre-push", "reference-transaction"}

// isFlag reports an argument the command line of `lockgate hook` reads as
// a flag, or as the end of flags (--).
func isFlag(arg string) bool { return len(arg) > 1 && arg[0] == '-' }

// contracts are the session's contracts of the hooks of Own.
var contracts = map[string]func(*session.Workspace, context.Context, session.HookInput) (*session.Report, error){
	"pre-commit":            (*session.Workspace).PreCommit,
	"pre-merge-commit":      (*session.Workspace).PreMergeCommit,
	"commit-msg":            (*session.Workspace).CommitMsg,
	"pre-push":              (*session.Workspace).PrePush,
	"reference-transaction": (*session.Workspace).ReferenceTransaction,
}

// FullBinaryEnv names the lockgate the hook binary hands hooks to, when
// set; else the lockgate next to the hook binary, else lockgate on PATH.
const FullBinaryEnv = "LOCKGATE_FULL_BIN"

const usage = `usage: lockgate-hook <hook> [args...]

Runs git hook <hook> as ` + "`lockgate hook <hook>`" + ` does, with the same arguments,
stdin, output and exit codes, in a binary that links only what the hooks
need. It runs pre-commit, pre-merge-commit, commit-msg, pre-push and
reference-transaction itself, and hands the others (and a clone on the
git store) to lockgate.
`

// Main runs the hook binary with args (without the program name) and
// returns the exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	if len(args) == 0 {
		fmt.Fprint(stdio.Err, usage)
		return outcome.ExitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdio.Out, usage)
		return outcome.ExitOK
	case "--version", "version":
		fmt.Fprintf(stdio.Out, "lockgate-hook %s\n", version.String())
		return outcome.ExitOK
	}
	name := args[0]
	if !slices.Contains(Own, name) || slices.ContainsFunc(args[1:], isFlag) {
		// Git gives a hook no flags: help, `--` and a mistyped flag are
		// lockgate's command line to answer, as `lockgate hook` answers.
		return handOver(ctx, args, stdio.In, stdio)
	}
	// What lockgate would be given if the hook is handed over: stdin
	// is read once, here, for the hooks that read it.
	in := stdio.In
	if name == "pre-push" || name == "reference-transaction" {
		b, err := io.ReadAll(stdio.In)
		if err != nil {
			fmt.Fprintf(stdio.Err, "lockgate: %s: read stdin: %v\n", name, err)
			return outcome.ExitUnavailable
		}
		in = bytes.NewReader(b)
		stdio.In = bytes.NewReader(b)
	}
	// What the run says waits here until it is known that the run is
	// this binary's to finish.
	var said bytes.Buffer
	c := newConsole(stdio.Err, &said)
	run := &Run{Name: name, Args: args[1:], Stdio: Stdio{In: stdio.In, Out: stdio.Out, Err: &said}, Console: c,
		Options:   session.Options{Getenv: os.Getenv, Notify: c.notify, Hook: name},
		WriteJSON: func(any) error { return errors.New("the hook binary prints no JSON") }}
	var e *session.Workspace
	run.Load = func(ctx context.Context) (*session.Workspace, Contract, error) {
		var err error
		e, err = session.Load(ctx, run.Options)
		if err != nil {
			return nil, nil, err
		}
		return e, func(ctx context.Context, in session.HookInput) (*session.Report, error) {
			return contracts[name](e, ctx, in)
		}, nil
	}
	err := run.Do(ctx)
	if e != nil {
		e.Close()
	}
	if session.NeedsMore(err) {
		return handOver(ctx, args, in, stdio)
	}
	_, _ = stdio.Err.Write(said.Bytes())
	c.w = stdio.Err
	o := outcome.Of(err, outcomeContext(e))
	if err != nil {
		c.reportError(err, o)
	}
	return o.Exit
}

func outcomeContext(e *session.Workspace) outcome.Context {
	if e == nil {
		return outcome.Context{}
	}
	return outcome.Context{UserDir: e.UserDir(), Now: e.Now(), Where: e.RecordWhere()}
}

// console prints what a hook run says on stderr, as lockgate does.
type console struct {
	style termstyle.Style
	w     io.Writer
}

func newConsole(stderr io.Writer, w io.Writer) *console {
	f, _ := stderr.(*os.File)
	st, err := termstyle.For("auto", os.Getenv, f)
	if err != nil {
		st = termstyle.Style{}
	}
	return &console{style: st, w: w}
}

func (c *console) Paint(role termstyle.Role, text string) string { return c.style.Paint(role, text) }

// CarryReport: the hook binary takes no options to carry into hints.
func (c *console) CarryReport(*session.Report) {}

func (c *console) notify(level, msg string, hints ...string) {
	switch level {
	case "":
		fmt.Fprintf(c.w, "lockgate: %s\n", safetext.Text(msg))
	case "warning":
		fmt.Fprintf(c.w, "lockgate: %s %s\n", c.Paint(termstyle.Warning, "warning:"), safetext.Text(msg))
	default:
		fmt.Fprintf(c.w, "lockgate: %s: %s\n", level, safetext.Text(msg))
	}
	c.printHints(hints...)
}

func (c *console) printHints(lines ...string) {
	hint.PrintAs(c.w, c.Paint(termstyle.Hint, "hint:"), lines...)
}

// reportError prints err and what resolves it, as lockgate does.
func (c *console) reportError(err error, o outcome.Outcome) {
	var exit *outcome.ExitError
	if errors.As(err, &exit) {
		return // already reported
	}
	fmt.Fprintf(c.w, "%s %s\n", c.Paint(termstyle.Error, "lockgate:"), safetext.Text(err.Error()))
	if o.Detail != "" {
		c.printHints(o.Detail)
	}
	c.printHints(o.Hints...)
}
