package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

func initCommand() *command {
	var req service.InitRequest
	var noInstall bool
	var hooks service.HookInstall
	return &command{
		noArgs:  true,
		noStore: true,
		usage:   "init [--force] [--no-install] [--agent NAME]... [--signed [--signer WORKER=KEY.pub]...]",
		short:   "write a starter .lockgate.yaml at the repository root and install the hooks (and an agent's guard)",
		flags: func(fs *pflag.FlagSet) {
			fs.StringArrayVar(&req.Agents, "agent", nil, "also set up coding agent `NAME` (repeatable): "+strings.Join(service.Agents, ", "))
			fs.BoolVar(&req.Force, "force", false, "overwrite an existing .lockgate.yaml")
			fs.BoolVar(&noInstall, "no-install", false, "do not install the git hooks")
			fs.BoolVar(&req.Signed, "signed", false, "require signatures (workflow.signed: required): write .lockgate/allowed_signers with your user.signingkey and have git sign your commits")
			fs.StringArrayVar(&req.Signers, "signer", nil, "with --signed, also allow `WORKER=FILE`, a worker's SSH public key (repeatable)")
			globalHooksFlag(fs, &hooks)
		},
		run: func(ctx context.Context, a *app, _ []string) error {
			return run(ctx, a, func(e *service.Workspace) (*service.Initialized, error) { return e.Init(ctx, req) },
				func(_ *service.Workspace, r *service.Initialized) error {
					if r.Kept {
						fmt.Fprintf(a.stdio.Err, "kept %s (the repository's policy; `lockgate init --force` replaces it with the starter file)\n", r.Path)
					} else {
						fmt.Fprintf(a.stdio.Err, "wrote %s; check it with `lockgate validate`\n", r.Path)
					}
					if r.Signers != "" {
						fmt.Fprintf(a.stdio.Err, "wrote %s; commit it with .lockgate.yaml: signatures are checked by the allowed signers of the base\n", r.Signers)
					}
					if !noInstall {
						if err := a.install(ctx, hooks); err != nil {
							return err
						}
					}
					return a.eachAgent(req.Agents, func(agent string) error { return a.setupAgent(r.Root, agent, false) })
				})
		},
	}
}

func validateCommand() *command {
	return &command{
		noStore: true,
		usage:   "validate [FILE...]",
		short:   "check .lockgate.yaml and work-packages.yaml; errors name file:line",
		run: func(ctx context.Context, a *app, args []string) error {
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			v, err := e.Validate(service.ValidateRequest{Files: args})
			for _, f := range v.Valid {
				fmt.Fprintf(a.stdio.Err, "ok: %s\n", f)
			}
			files := append([]string{}, v.Valid...)
			if err != nil {
				a.partial = map[string]any{"ok": false, "files": files, "invalid": v.Invalid}
				return err
			}
			if len(v.Valid) == 0 {
				fmt.Fprintln(a.stdio.Err, "no .lockgate.yaml or work packages file: the built-in defaults apply")
			}
			return a.reply(map[string]any{"ok": true, "files": files, "defaults": len(v.Valid) == 0}, func() {})
		},
	}
}

func agentCommand() *command {
	var dryRun bool
	return &command{usage: "agent <command>", short: "set up coding agents: the pre-edit guard and the MCP server in each harness's project settings", sub: map[string]*command{
		"setup": {
			noStore:  true,
			usage:    "agent setup NAME... [--dry-run]",
			short:    "merge lockgate's guard (and MCP server) into coding agent NAME's project settings: " + strings.Join(service.Agents, ", "),
			someArgs: "NAME",
			flags: func(fs *pflag.FlagSet) {
				fs.BoolVar(&dryRun, "dry-run", false, "print the change to each file instead of writing it")
			},
			run: func(ctx context.Context, a *app, args []string) error {
				for _, agent := range args {
					if !slices.Contains(service.Agents, agent) {
						return service.Usagef("unknown agent %q: want one of %s", agent, strings.Join(service.Agents, ", "))
					}
				}
				e, err := a.workspace(ctx)
				if err != nil {
					return err
				}
				if e.WorkTree() == "" {
					return service.Usagef("agent setup: needs a working tree")
				}
				return a.eachAgent(args, func(agent string) error { return a.setupAgent(e.WorkTree(), agent, dryRun) })
			},
		},
	}}
}
