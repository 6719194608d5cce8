package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

// command is one runnable (sub)command.
type command struct {
	usage string // after "lockgate "
	short string
	// long, when set, is what `help CMD` prints instead of short.
	long string
	// flags adds the command's own flags; nil for none.
	flags func(fs *pflag.FlagSet)
	run   func(ctx context.Context, a *app, args []string) error
	sub   map[string]*command
	// takesLocks: the command takes locks, so a store the clone's hooks
	// do not read is refused. noStore: it reads no lock store, so run
	// only loads the workspace.
	takesLocks, noStore bool
	// noArgs: the command takes no arguments; oneArg names the one it
	// takes, someArgs those it takes one or more of. Each is checked
	// before run, with the command's path in the message.
	noArgs           bool
	oneArg, someArgs string
	// keepDash passes a "--" argument through to run, for commands that
	// take a command line after it.
	keepDash bool
	// jsonErrors, when it reports true after the flags are read, prints
	// errors as an error object on stdout as --json does (check --format
	// json).
	jsonErrors func() bool
}

// runE runs c for cobra: the options that decide how its error is shown
// and which store it opens first, then its arguments' count, then c.run.
func (a *app) runE(ctx context.Context, c *command) func(cmd *cobra.Command, args []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if c.jsonErrors != nil && c.jsonErrors() {
			a.globals.JSON = true
		}
		if _, err := a.styleOf(); err != nil {
			return &runError{service.Usagef("%v", err)}
		}
		a.purpose.TakesLocks, a.noStore = c.takesLocks, c.noStore
		if n := cmd.ArgsLenAtDash(); c.keepDash && n >= 0 {
			args = append(append(append([]string(nil), args[:n]...), "--"), args[n:]...)
		}
		path := strings.TrimPrefix(cmd.CommandPath(), "lockgate ")
		switch {
		case c.noArgs && len(args) > 0:
			return &runError{service.Usagef("%s takes no arguments", path)}
		case c.oneArg != "" && len(args) != 1:
			return &runError{service.Usagef("%s: give exactly one %s", path, c.oneArg)}
		case c.someArgs != "" && len(args) == 0:
			return &runError{service.Usagef("%s: give at least one %s", path, c.someArgs)}
		}
		if err := c.run(ctx, a, args); err != nil {
			return &runError{err}
		}
		return nil
	}
}

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

// reply shows a result: v as JSON on stdout under --json, else what text
// prints.
func (a *app) reply(v any, text func()) error {
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, v)
	}
	text()
	return nil
}
