package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/service"
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
	if g.Color == "" {
		g.Color = termstyle.Auto
	}
	fs.StringVar(&g.Color, "color", g.Color, "colour on stderr: auto (on a terminal, unless NO_COLOR is set), always or never")
}

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
	// takes. Either is checked before run, with the command's path in the
	// message.
	noArgs bool
	oneArg string
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
	ctx = service.WithRequest(ctx, service.TraceID(getenv("TRACEPARENT")))
	err := a.main(ctx, args)
	o := a.outcome(err)
	if err != nil {
		a.reportError(err, o)
	}
	if a.env != nil {
		a.env.Close()
	}
	return o.Exit
}

func (a *app) main(ctx context.Context, args []string) error {
	root := a.rootCommand(ctx, firstCommand(args))
	root.SetArgs(args)
	_, err := root.ExecuteC()
	var re *runError
	if errors.As(err, &re) {
		return re.err // the command's own error, as it returned it
	}
	if err != nil {
		// Cobra's: an unknown command or flag, a bad flag value.
		return service.Usagef("%s", strings.TrimSpace(err.Error()))
	}
	return nil
}

// firstCommand is the first argument that is not a global option (the
// command's name), or "" when the global options cannot be read.
func firstCommand(args []string) string {
	var g Globals
	fs := pflag.NewFlagSet("lockgate", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SetOutput(io.Discard)
	g.AddFlags(fs)
	fs.BoolP("help", "h", false, "")
	fs.Bool("version", false, "")
	if fs.Parse(args) != nil || fs.NArg() == 0 {
		return ""
	}
	return fs.Arg(0)
}

// flagSuggestion names the closest flag of cmd to an unknown one ("";
// did you mean --wait?"), "" when none is close. pflag and cobra suggest
// commands, not flags.
func flagSuggestion(cmd *cobra.Command, err error) string {
	_, name, ok := strings.Cut(err.Error(), "unknown flag: --")
	if !ok {
		return ""
	}
	best, dist := "", 3 // at most two edits away
	visit := func(f *pflag.Flag) {
		if d := editDistance(name, f.Name); d < dist {
			best, dist = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" {
		return ""
	}
	return "; did you mean --" + best + "?"
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// runError marks what a command's run returned, apart from the errors
// cobra makes while it reads the command line (usage errors, exit 2).
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }

// rootCommand builds the command tree of lockgate on cobra: help and
// `help COMMAND`, --version, shell completion and suggestions for
// mistyped commands come from it.
//
// Only the command the arguments name is built when they name one (a hook
// runs on every commit: the whole tree, every flag of every command, costs
// it a few tenths of a millisecond); help, completion and a mistyped name
// get the whole tree.
func (a *app) rootCommand(ctx context.Context, only string) *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:           "lockgate",
		Short:         "locks and git hooks for many workers changing one repository",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if showVersion && len(args) == 0 {
				return runVersion(ctx, a, nil)
			}
			return a.noCommand(c, args, "no command given (see `lockgate --help`)")
		},
	}
	root.SetIn(a.stdio.In)
	root.SetOut(a.stdio.Out)
	root.SetErr(a.stdio.Err)
	// Not cobra's Version: its version template would link text/template,
	// whose reflection keeps every method of every type in the binary.
	root.Flags().BoolVar(&showVersion, "version", false, "print the version")
	a.globals.AddFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return service.Usagef("%v%s", err, flagSuggestion(c, err))
	})
	cmds := commands()
	names := []string{only}
	if cmds[only] == nil {
		names = slices.Sorted(maps.Keys(cmds))
	}
	for _, name := range names {
		root.AddCommand(a.cobraCommand(ctx, "", name, cmds[name]))
	}
	return root
}

// noCommand is the error for a command line that names no command to run
// under c: with args, a mistyped one (with cobra's suggestions of the
// closest); without, none, and c's help goes to stderr before missing.
func (a *app) noCommand(c *cobra.Command, args []string, missing string) error {
	if len(args) == 0 {
		c.SetOut(a.stdio.Err)
		_ = c.Help()
		return &runError{service.Usagef("%s", missing)}
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	c.SuggestionsMinimumDistance = 2
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return &runError{service.Usagef("%s (see `%s --help`)", msg, c.CommandPath())}
}

// cobraCommand is c as a cobra command named name, under the command
// path parent ("" at the top).
func (a *app) cobraCommand(ctx context.Context, parent, name string, c *command) *cobra.Command {
	use := name
	if fields := strings.Fields(c.usage); len(fields) > 0 {
		// usage names the whole path ("lock acquire KEY..."): keep what
		// follows this command's name.
		if i := slices.Index(fields, name); i >= 0 {
			use = strings.Join(fields[i:], " ")
		}
	}
	cc := &cobra.Command{Use: use, Short: c.short, Long: c.long, Args: cobra.ArbitraryArgs, DisableFlagsInUseLine: true}
	if c.flags != nil {
		c.flags(cc.Flags())
	}
	a.addCompletions(ctx, strings.TrimSpace(parent+" "+name), cc)
	cc.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if c.jsonErrors != nil && c.jsonErrors() {
			a.globals.JSON = true
		}
		return service.Usagef("%s: %v%s", strings.TrimPrefix(cmd.CommandPath(), "lockgate "), err, flagSuggestion(cmd, err))
	})
	if c.run != nil {
		cc.RunE = a.runE(ctx, c)
	} else {
		cc.RunE = func(cmd *cobra.Command, args []string) error {
			return a.noCommand(cmd, args, strings.TrimPrefix(cmd.CommandPath(), "lockgate ")+": missing subcommand")
		}
	}
	for _, n := range slices.Sorted(maps.Keys(c.sub)) {
		cc.AddCommand(a.cobraCommand(ctx, strings.TrimSpace(parent+" "+name), n, c.sub[n]))
	}
	return cc
}

// getenv is os.Getenv; one place so tests can see what is read.
var getenv = os.Getenv
