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

	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
)

// Stdio is where a command reads and writes.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
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
		// Events an earlier command left unpushed go with this one.
		a.env.PushPendingEvents(ctx)
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
	// d[j] is the distance of a's first i bytes to b's first j.
	d := make([]int, len(b)+1)
	for j := range d {
		d[j] = j
	}
	for i := range len(a) {
		diag := d[0] // d[j] of the row before, for i-1 and j-1
		d[0] = i + 1
		for j := range len(b) {
			sub := diag + 1
			if a[i] == b[j] {
				sub = diag
			}
			diag, d[j+1] = d[j+1], min(d[j+1]+1, d[j]+1, sub)
		}
	}
	return d[len(b)]
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
	// usage names the whole path ("lock acquire KEY..."): keep what
	// follows this command's name.
	use, fields := name, strings.Fields(c.usage)
	if i := slices.Index(fields, name); i >= 0 {
		use = strings.Join(fields[i:], " ")
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
		cc.SetUsageFunc(groupUsage(cc))
	}
	for _, n := range slices.Sorted(maps.Keys(c.sub)) {
		cc.AddCommand(a.cobraCommand(ctx, strings.TrimSpace(parent+" "+name), n, c.sub[n]))
	}
	return cc
}

// cobraUsage is cobra's own usage text, of whichever command it is given.
var cobraUsage = (&cobra.Command{}).UsageFunc()

// groupUsage is the usage of the command group g, which runs nothing
// itself: one line, "lockgate lock [command]". Cobra would print the
// group's own use line too, since the group has a run function (it
// reports a missing or mistyped subcommand); the usage is printed as if it
// had none. The group's subcommands inherit the function, and get cobra's
// usage unchanged.
func groupUsage(g *cobra.Command) func(*cobra.Command) error {
	return func(c *cobra.Command) error {
		if c != g {
			return cobraUsage(c)
		}
		run := c.RunE
		c.RunE = nil
		defer func() { c.RunE = run }()
		return cobraUsage(c)
	}
}

// getenv is os.Getenv; one place so tests can see what is read.
var getenv = os.Getenv

// Shell completion beyond commands and flags: the keys this worker holds
// (release, refresh), work package ids (claim, --package) and scope
// profiles (--profile). Completion must never fail loudly: what cannot be
// read completes to nothing.

// completeWith completes the candidates of kind "of" of the workspace open
// gives (loaded, or with its lock store open).
func (a *app) completeWith(ctx context.Context, of lockops.CandidateKind, open func(context.Context) (*service.Workspace, error)) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		e, err := open(ctx)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out, err := e.Locks().Candidates(ctx, lockops.CandidatesRequest{Of: of, Prefix: toComplete})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// addCompletions attaches the completions of the command at path: held
// keys need the lock store, package ids and profiles only the workspace.
func (a *app) addCompletions(ctx context.Context, path string, cc *cobra.Command) {
	packages := a.completeWith(ctx, lockops.PackageIDs, a.load)
	switch path {
	case "lock release", "lock refresh":
		cc.ValidArgsFunction = a.completeWith(ctx, lockops.HeldKeys, a.workspace)
	case "claim", "done", "release-package", "retry":
		cc.ValidArgsFunction = packages
	}
	if cc.Flags().Lookup("package") != nil {
		_ = cc.RegisterFlagCompletionFunc("package", packages)
	}
	if cc.Flags().Lookup("profile") != nil {
		_ = cc.RegisterFlagCompletionFunc("profile", a.completeWith(ctx, lockops.ScopeProfiles, a.load))
	}
}
