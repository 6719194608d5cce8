package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/service/hooks"
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

func (o *InstallOptions) names() ([]string, error) {
	if len(o.Hooks) == 0 {
		return hooks.DefaultHooks, nil
	}
	for _, h := range o.Hooks {
		if !slices.Contains(hooks.Known, h) {
			return nil, service.Usagef("unknown hook %q: want one of %s", h, strings.Join(hooks.Known, ", "))
		}
	}
	return o.Hooks, nil
}

// hooksDir is where git runs this repository's hooks, refusing a
// core.hooksPath set outside the repository unless asked: installing there
// would put lockgate in every repository that shares it.
func (a *app) hooksDir(ctx context.Context, e *service.Workspace, allowGlobal bool) (string, error) {
	dir := e.Repo.Toplevel
	if dir == "" {
		dir = e.Repo.GitDir
	}
	value, origin, err := gitexec.ConfigOrigin(ctx, dir, "core.hooksPath")
	if err != nil {
		return "", err
	}
	if value != "" && !allowGlobal && !a.repoLocalOrigin(e, dir, origin) {
		return "", service.Usagef("core.hooksPath is %s, set in %s: hooks installed there run in every repository that uses it.\n"+
			"  Use a repository-local setting (git config core.hooksPath …) or pass --global-hooks-path to install there anyway",
			value, strings.TrimPrefix(origin, "file:"))
	}
	return gitexec.HooksDir(ctx, dir)
}

func (a *app) repoLocalOrigin(e *service.Workspace, dir, origin string) bool {
	f, ok := strings.CutPrefix(origin, "file:")
	if !ok {
		return false // command line, environment: not a file of this repository
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(dir, f)
	}
	for _, d := range []string{e.Repo.CommonDir, e.Repo.GitDir} {
		if rel, err := filepath.Rel(d, f); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

func selfPath() string {
	// Not resolved through symlinks: a packaged symlink survives upgrades.
	p, err := os.Executable()
	if err != nil {
		return "lockgate"
	}
	return p
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

// hookTargets resolves which hooks to (un)install and where.
func (a *app) hookTargets(ctx context.Context, o *InstallOptions) (dir string, names []string, err error) {
	if names, err = o.names(); err != nil {
		return "", nil, err
	}
	e, err := a.load(ctx)
	if err != nil {
		return "", nil, err
	}
	dir, err = a.hooksDir(ctx, e, o.GlobalHooksDir)
	return dir, names, err
}

func (a *app) install(ctx context.Context, o *InstallOptions) error {
	dir, names, err := a.hookTargets(ctx, o)
	if err != nil {
		return err
	}
	res, err := hooks.Install(dir, selfPath(), names)
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
			if agent != "" {
				if len(o.Hooks) > 0 {
					return service.Usagef("uninstall: --agent and --hook are separate steps")
				}
				e, err := a.load(ctx)
				if err != nil {
					return err
				}
				if e.Repo.Toplevel == "" {
					return service.Usagef("uninstall --agent: needs a working tree")
				}
				return a.removeAgent(e.Repo.Toplevel, agent)
			}
			dir, names, err := a.hookTargets(ctx, o)
			if err != nil {
				return err
			}
			res, err := hooks.Uninstall(dir, names)
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
