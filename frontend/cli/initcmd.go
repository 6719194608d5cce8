package cli

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/service/agentsetup"
)

//go:embed starter.lockgate.yaml
var starterConfig []byte

func initCommand() *command {
	var force, noInstall bool
	var agent string
	o := &InstallOptions{}
	return &command{
		usage: "init [--force] [--no-install] [--agent claude-code]",
		short: "write a starter .lockgate.yaml at the repository root and install the hooks (and an agent's guard)",
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&agent, "agent", "", "also set up coding agent `NAME` (claude-code: pre-edit guard in .claude/settings.json, MCP server in .mcp.json)")
			fs.BoolVar(&force, "force", false, "overwrite an existing .lockgate.yaml")
			fs.BoolVar(&noInstall, "no-install", false, "do not install the git hooks")
			fs.BoolVar(&o.GlobalHooksDir, "global-hooks-path", false, "install even though core.hooksPath comes from a global or system config")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("init takes no arguments")
			}
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			if e.Repo.Toplevel == "" {
				return service.Usagef("init: needs a working tree (this is a bare repository)")
			}
			if agent != "" {
				if err := agentsetup.Check(agent); err != nil {
					return err
				}
			}
			path := filepath.Join(e.Repo.Toplevel, ".lockgate.yaml")
			flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			// Never through a link: --force must not overwrite where it points.
			f, err := safefs.OpenFile(path, flag, 0o644)
			switch {
			case errors.Is(err, os.ErrExist):
				// A teammate following the quick start in a repository set
				// up before (or adding an agent): the team's file stays,
				// this clone gets the hooks.
				fmt.Fprintf(a.stdio.Err, "kept %s (the repository's policy; `lockgate init --force` replaces it with the starter file)\n", path)
			case err != nil:
				return fmt.Errorf("init: %w", err)
			default:
				if _, err := f.Write(starterConfig); err != nil {
					f.Close()
					return fmt.Errorf("init: write %s: %w", path, err)
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("init: write %s: %w", path, err)
				}
				fmt.Fprintf(a.stdio.Err, "wrote %s; check it with `lockgate validate`\n", path)
			}
			if !noInstall {
				if err := a.install(ctx, o); err != nil {
					return err
				}
			}
			if agent != "" {
				return a.setupAgent(e.Repo.Toplevel, agent)
			}
			return nil
		},
	}
}
