package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
)

// hookFlags registers the options of install and uninstall on fs.
func hookFlags(fs *pflag.FlagSet, req *service.HookInstall) {
	fs.StringArrayVar(&req.Hooks, "hook", nil, "hook `NAME` to (un)install; repeatable (default: pre-commit, pre-merge-commit, commit-msg, pre-push, reference-transaction)")
	globalHooksFlag(fs, req)
}

// globalHooksFlag registers --global-hooks-path, which init takes too.
func globalHooksFlag(fs *pflag.FlagSet, req *service.HookInstall) {
	fs.BoolVar(&req.GlobalHooksPath, "global-hooks-path", false, "install even though core.hooksPath comes from a global or system config")
}

// shimCommand is the lockgate the hook shims run: this one, not resolved
// through symlinks, for a packaged symlink survives upgrades.
func shimCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "lockgate"
	}
	return self
}

func installCommand() *command {
	var req service.HookInstall
	return &command{
		noArgs:  true,
		noStore: true,
		usage:   "install [--hook NAME]...",
		short:   "install git hook shims (keeps and chains existing hooks; honours core.hooksPath)",
		flags:   func(fs *pflag.FlagSet) { hookFlags(fs, &req) },
		run:     func(ctx context.Context, a *app, _ []string) error { return a.install(ctx, req) },
	}
}

// install installs the hook shims req names and says where, even of those
// installed before an error.
func (a *app) install(ctx context.Context, req service.HookInstall) error {
	req.Command = shimCommand()
	if err := req.Validate(); err != nil {
		return err
	}
	e, err := a.workspace(ctx)
	if err != nil {
		return err
	}
	res, err := e.InstallHooks(ctx, req)
	if a.globals.JSON && err == nil {
		return writeJSON(a.stdio.Out, res)
	}
	for _, r := range res {
		if r.Skipped != "" {
			fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s hook not installed: %s\n", r.Hook, r.Skipped)
			continue
		}
		fmt.Fprintf(a.stdio.Err, "%s %s hook: %s\n", map[bool]string{false: "installed", true: "updated"}[r.Updated], r.Hook, r.Path)
		if r.Chained != "" {
			fmt.Fprintf(a.stdio.Err, "  the previous hook is kept as %s and runs first\n", r.Chained)
		}
	}
	return err
}

func uninstallCommand() *command {
	var req service.HookInstall
	var agents []string
	return &command{
		noArgs:  true,
		noStore: true,
		usage:   "uninstall [--hook NAME]... | --agent NAME",
		short:   "remove lockgate's hook shims and restore the hooks they chained (or, with --agent, its entries in the agent's settings)",
		flags: func(fs *pflag.FlagSet) {
			hookFlags(fs, &req)
			fs.StringArrayVar(&agents, "agent", nil, "remove only lockgate's entries from coding agent `NAME`'s settings (repeatable)")
		},
		run: func(ctx context.Context, a *app, _ []string) error {
			if len(agents) > 0 && len(req.Hooks) > 0 {
				return service.Usagef("uninstall: --agent and --hook are separate steps")
			}
			req.Command = shimCommand()
			if err := req.Validate(); err != nil {
				return err
			}
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			if len(agents) > 0 {
				if e.WorkTree() == "" {
					return service.Usagef("uninstall --agent: needs a working tree")
				}
				return a.eachAgent(agents, func(agent string) error { return a.removeAgent(e.WorkTree(), agent) })
			}
			res, err := e.UninstallHooks(ctx, req)
			if a.globals.JSON && err == nil {
				return writeJSON(a.stdio.Out, res)
			}
			for _, r := range res {
				switch {
				case r.Skipped != "":
					fmt.Fprintf(a.stdio.Err, "%s: %s\n", r.Hook, r.Skipped)
				case r.Restored != "":
					fmt.Fprintf(a.stdio.Err, "removed %s hook; restored the previous one\n", r.Hook)
				default:
					fmt.Fprintf(a.stdio.Err, "removed %s hook\n", r.Hook)
				}
			}
			return err
		},
	}
}

// setupAgent writes agent's settings in the worktree at root and says what
// it did with each entry; with dryRun it prints the diff of each change
// on stdout instead.
func (a *app) setupAgent(root, agent string, dryRun bool) error {
	steps, err := service.SetupAgent(root, agent, dryRun)
	if a.globals.JSON {
		if werr := writeJSONLine(a.stdio.Out, map[string]any{"agent": agent, "dry_run": dryRun, "steps": steps}); err == nil {
			err = werr
		}
		return err
	}
	for _, s := range steps {
		switch {
		case dryRun && s.Changed:
			fmt.Fprint(a.stdio.Out, s.Diff)
			fmt.Fprintf(a.stdio.Err, "%s: %s would be added\n", s.Path, s.What)
		case dryRun:
			fmt.Fprintf(a.stdio.Err, "%s: %s already there\n", s.Path, s.What)
		default:
			fmt.Fprintf(a.stdio.Err, "%s: %s %s\n", s.Path, s.What, map[bool]string{true: "added", false: "already there"}[s.Changed])
		}
	}
	return err
}

// eachAgent runs do for every agent, going on past one that fails and
// returning the first error (the others are said here): one harness's
// unreadable file does not leave the others undone.
func (a *app) eachAgent(agents []string, do func(string) error) error {
	var first error
	for _, agent := range agents {
		err := do(agent)
		switch {
		case err == nil:
		case first == nil:
			first = err
		default:
			fmt.Fprintf(a.stdio.Err, "%s %s\n", a.paint(termstyle.Error, "lockgate:"), safetext.Text(err.Error()))
		}
	}
	return first
}

// removeAgent takes lockgate's entries out of agent's settings.
func (a *app) removeAgent(root, agent string) error {
	steps, err := service.RemoveAgent(root, agent)
	if a.globals.JSON {
		if werr := writeJSONLine(a.stdio.Out, map[string]any{"agent": agent, "removed": steps}); err == nil {
			err = werr
		}
		return err
	}
	for _, s := range steps {
		fmt.Fprintf(a.stdio.Err, "%s: %s removed\n", s.Path, s.What)
	}
	return err
}
