package cli

import (
	"github.com/lockgate/lockgate/internal/outcome"
	"github.com/lockgate/lockgate/internal/service"
	"github.com/lockgate/lockgate/locks"

	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/internal/termstyle"
)

// Stdio is where a command reads and writes.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Globals are the options every command accepts, before or after its name.
type Globals struct {
	Dir        string
	ConfigFile string
	As         string
	WorkerType string
	Session    string
	Store      string
	// AllowStoreMismatch lets a command take locks in a store other than
	// the one this clone's hooks read.
	AllowStoreMismatch bool
	JSON               bool
	Verbose            bool
	Help               bool
	// Color is --color: auto, always or never.
	Color string
	// configGiven: -c was given, before or after the command name; a
	// second one is refused, not silently preferred.
	configGiven bool
}

// AddFlags registers the global options on fs. Current values are the
// defaults, so registering again after the command name keeps what was
// given before it.
func (g *Globals) AddFlags(fs *pflag.FlagSet) {
	fs.StringVarP(&g.Dir, "dir", "C", g.Dir, "run as if lockgate was started in `DIR`")
	fs.VarP(&onceString{p: &g.ConfigFile, set: &g.configGiven}, "config", "c", "config `FILE` (default: .lockgate.yaml at the repository root)")
	fs.StringVar(&g.As, "as", g.As, "worker id (default $LOCKGATE_WORKER, else user@HOST)")
	fs.StringVar(&g.WorkerType, "worker-type", g.WorkerType, "human or agent (default $LOCKGATE_WORKER_TYPE, else human)")
	fs.StringVar(&g.Session, "session", g.Session, "session id (default $LOCKGATE_SESSION, else the worker id)")
	fs.StringVar(&g.Store, "store", g.Store, "lock store for this command: file, git, redis or redis://… (default $LOCKGATE_STORE, else this clone's, as lockgate store show says)")
	fs.BoolVar(&g.AllowStoreMismatch, "allow-store-mismatch", g.AllowStoreMismatch, "take locks with --store/$LOCKGATE_STORE even where this clone's hooks do not look")
	fs.BoolVar(&g.JSON, "json", g.JSON, "print data as JSON on stdout")
	fs.BoolVarP(&g.Verbose, "verbose", "v", g.Verbose, "log what lockgate does on stderr")
	fs.BoolVarP(&g.Help, "help", "h", g.Help, "show help")
	if g.Color == "" {
		g.Color = termstyle.Auto
	}
	fs.StringVar(&g.Color, "color", g.Color, "colour on stderr: auto (on a terminal, unless NO_COLOR is set), always or never")
}

// command is one runnable (sub)command.
type command struct {
	usage string // after "lockgate "
	short string
	// flags adds the command's own flags; nil for none.
	flags func(fs *pflag.FlagSet)
	run   func(ctx context.Context, a *app, args []string) error
	sub   map[string]*command
	// takesLocks: the command takes locks, so a store the clone's hooks
	// do not read is refused.
	takesLocks bool
	// keepDash passes a "--" argument through to run, for commands that
	// take a command line after it.
	keepDash bool
	// jsonErrors, when it reports true after the flags are read, prints
	// errors as an error object on stdout as --json does (check --format
	// json).
	jsonErrors func() bool
}

// Main runs lockgate with args (without the program name) and returns the
// exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	a := &app{stdio: stdio}
	// One run is one request: its records and events carry its id.
	ctx = locks.WithAudit(ctx, locks.Audit{RequestID: locks.NewToken()[:16], TraceID: service.TraceID(getenv("TRACEPARENT"))})
	err := a.main(ctx, args)
	if err != nil {
		a.reportError(err)
	}
	if a.env != nil {
		a.env.Close()
	}
	return a.outcome(err).Exit
}

func (a *app) main(ctx context.Context, args []string) error {
	fs := pflag.NewFlagSet("lockgate", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SetOutput(io.Discard)
	a.globals.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return service.Usagef("%v", err)
	}
	rest := fs.Args()
	if len(rest) == 0 {
		a.printHelp(nil, "")
		if a.globals.Help {
			return nil
		}
		return service.Usagef("no command given")
	}
	path := []string{}
	cmds := commands()
	var cmd *command
	for len(rest) > 0 {
		c, ok := cmds[rest[0]]
		if !ok {
			break
		}
		cmd, path, rest = c, append(path, rest[0]), rest[1:]
		if c.sub == nil {
			break
		}
		cmds = c.sub
	}
	if cmd == nil {
		return service.Usagef("unknown command %q (see `lockgate --help`)", rest[0])
	}
	if cmd.run == nil {
		if len(rest) > 0 && (rest[0] == "-h" || rest[0] == "--help" || rest[0] == "help") {
			a.globals.Help = true // help goes to stdout
			a.printHelp(cmd.sub, strings.Join(path, " "))
			return nil
		}
		if len(rest) == 0 {
			a.printHelp(cmd.sub, strings.Join(path, " "))
			return service.Usagef("%s: missing subcommand", strings.Join(path, " "))
		}
		return service.Usagef("unknown command %q (see `lockgate %s --help`)", strings.Join(append(path, rest[0]), " "), strings.Join(path, " "))
	}
	a.purpose.TakesLocks = cmd.takesLocks
	sub := pflag.NewFlagSet("lockgate "+strings.Join(path, " "), pflag.ContinueOnError)
	sub.SetOutput(io.Discard)
	a.globals.AddFlags(sub)
	if cmd.flags != nil {
		cmd.flags(sub)
	}
	err := sub.Parse(rest)
	if cmd.jsonErrors != nil && cmd.jsonErrors() {
		a.globals.JSON = true
	}
	if err != nil {
		return service.Usagef("%s: %v", strings.Join(path, " "), err)
	}
	if _, err := a.styleOf(); err != nil {
		return service.Usagef("%v", err)
	}
	if a.globals.Help {
		fmt.Fprintf(a.stdio.Out, "usage: lockgate %s\n\n%s\n\nflags:\n%s", cmd.usage, cmd.short, sub.FlagUsages())
		return nil
	}
	args = sub.Args()
	if n := sub.ArgsLenAtDash(); cmd.keepDash && n >= 0 {
		args = append(append(append([]string(nil), args[:n]...), "--"), args[n:]...)
	}
	return cmd.run(ctx, a, args)
}

func (a *app) printHelp(cmds map[string]*command, prefix string) {
	if cmds == nil {
		cmds = commands()
	}
	w := a.stdio.Err
	if a.globals.Help {
		w = a.stdio.Out
	}
	fmt.Fprintf(w, "usage: lockgate [-C DIR] [-c FILE] [--as W] [--worker-type T] [--session S] [--store URL] [--json] [--color WHEN] %s\n\ncommands:\n", strings.TrimSpace(prefix+" <command>"))
	var lines []string
	var walk func(m map[string]*command)
	walk = func(m map[string]*command) {
		for _, c := range m {
			if c.run != nil {
				lines = append(lines, fmt.Sprintf("  %-44s %s", c.usage, c.short))
			}
			if c.sub != nil {
				walk(c.sub)
			}
		}
	}
	walk(cmds)
	sort.Strings(lines)
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}

// reportError prints err on stderr the way a user should read it and,
// under --json, as an error object on stdout (with what the command did
// before it failed).
func (a *app) reportError(err error) {
	var exit *outcome.ExitError
	if errors.As(err, &exit) {
		return // already reported
	}
	fmt.Fprintf(a.stdio.Err, "%s %s\n", a.paint(termstyle.Error, "lockgate:"), safetext.Text(err.Error()))
	detail, hints := a.explain(err)
	if detail != "" {
		a.printHints(detail)
	}
	a.printHints(hints...)
	if a.globals.JSON {
		out := map[string]any{}
		for k, v := range a.partial {
			out[k] = v
		}
		out["error"] = a.outcome(err).Object(err, strings.Join(hints, "; "))
		_ = writeJSON(a.stdio.Out, out)
	}
}

// getenv is os.Getenv; one place so tests can see what is read.
var getenv = os.Getenv

// styleOf decides, once, whether stderr gets colour (--color, NO_COLOR,
// TERM, a terminal).
func (a *app) styleOf() (termstyle.Style, error) {
	if a.styled {
		return a.style, nil
	}
	f, _ := a.stdio.Err.(*os.File)
	st, err := termstyle.For(a.globals.Color, getenv, f)
	if err != nil {
		return termstyle.Style{}, err
	}
	a.style, a.styled = st, true
	return st, nil
}

// paint colours text for stderr by role (nothing when colour is off).
func (a *app) paint(role termstyle.Role, text string) string {
	st, _ := a.styleOf()
	return st.Paint(role, text)
}

// paintRole is paint for hooks.Report.WriteStyled.
func (a *app) paintRole(role, text string) string { return a.paint(termstyle.Role(role), text) }

// printHints prints hint lines on stderr.
func (a *app) printHints(lines ...string) {
	hint.PrintAs(a.stdio.Err, a.paint(termstyle.Hint, "hint:"), lines...)
}
