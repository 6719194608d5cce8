package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

// InstallOptions are `install`'s flags.
type InstallOptions struct {
	Hooks          []string
	GlobalHooksDir bool
}

// AddFlags registers the options on fs.
func (o *InstallOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.Hooks, "hook", nil, "hook `NAME` to (un)install; repeatable (default: pre-commit, pre-merge-commit, commit-msg, pre-push)")
	fs.BoolVar(&o.GlobalHooksDir, "global-hooks-path", false, "install even though core.hooksPath comes from a global or system config")
}

// request is the service's request for the options.
func (o *InstallOptions) request() service.HookInstall {
	// Not resolved through symlinks: a packaged symlink survives upgrades.
	self, err := os.Executable()
	if err != nil {
		self = "lockgate"
	}
	return service.HookInstall{Hooks: o.Hooks, GlobalHooksPath: o.GlobalHooksDir, Command: self}
}

func installCommand() *command {
	o := &InstallOptions{}
	return &command{
		usage: "install [--hook NAME]...",
		short: "install git hook shims (keeps and chains existing hooks; honours core.hooksPath)",
		flags: o.AddFlags,
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("install takes no arguments")
			}
			return a.install(ctx, o)
		},
	}
}

func (a *app) install(ctx context.Context, o *InstallOptions) error {
	req := o.request()
	if err := req.Validate(); err != nil {
		return err
	}
	e, err := a.load(ctx)
	if err != nil {
		return err
	}
	res, err := e.InstallHooks(ctx, req)
	if a.globals.JSON && err == nil {
		return writeJSON(a.stdio.Out, res)
	}
	for _, r := range res {
		verb := "installed"
		if r.Updated {
			verb = "updated"
		}
		fmt.Fprintf(a.stdio.Err, "%s %s hook: %s\n", verb, r.Hook, r.Path)
		if r.Chained != "" {
			fmt.Fprintf(a.stdio.Err, "  the previous hook is kept as %s and runs first\n", r.Chained)
		}
	}
	return err
}

func uninstallCommand() *command {
	o := &InstallOptions{}
	var agent string
	return &command{
		usage: "uninstall [--hook NAME]... | --agent claude-code",
		short: "remove lockgate's hook shims and restore the hooks they chained (or, with --agent, its entries in the agent's settings)",
		flags: func(fs *pflag.FlagSet) {
			o.AddFlags(fs)
			fs.StringVar(&agent, "agent", "", "remove only lockgate's entries from coding agent `NAME`'s settings")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("uninstall takes no arguments")
			}
			req := o.request()
			if agent != "" && len(o.Hooks) > 0 {
				return service.Usagef("uninstall: --agent and --hook are separate steps")
			}
			if err := req.Validate(); err != nil {
				return err
			}
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			if agent != "" {
				if e.WorkTree() == "" {
					return service.Usagef("uninstall --agent: needs a working tree")
				}
				return a.removeAgent(e.WorkTree(), agent)
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
