package cli

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/lockgate/lockgate/frontend/mcpserver"
	"github.com/lockgate/lockgate/internal/version"
)

func commands() map[string]*command {
	guard := map[string]*command{"edit": guardEditCommand(), "watch": guardWatchCommand()}
	guardHarnessCommands(guard)
	return map[string]*command{
		"lock": {usage: "lock <command>", short: "take, release, refresh, list, check, clear, prune and hold locks", sub: map[string]*command{
			"acquire": acquireCommand(),
			"release": releaseCommand(),
			"refresh": refreshCommand(),
			"list":    listCommand(),
			"check":   checkCommand(),
			"clear":   clearCommand(),
			"prune":   pruneCommand(),
			"hold":    holdCommand(),
		}},
		"board":           boardCommand(),
		"claim":           claimCommand(),
		"done":            doneCommand(),
		"packages":        packagesCommand(),
		"release-package": releasePackageCommand(),
		"release-merged":  releaseMergedCommand(),
		"retry":           retryCommand(),
		"work":            workCommand(),
		"pause":           pauseCommand(),
		"unpause":         unpauseCommand(),
		"log":             logCommand(),
		"init":            initCommand(),
		"validate":        validateCommand(),
		"hook":            hookCommand(),
		"install":         installCommand(),
		"uninstall":       uninstallCommand(),
		"check":           checkChangeCommand(),
		"verify":          verifyCommand(),
		"workflow": {usage: "workflow <command>", short: "the workflow branch: commit the journal's events to it and push it, or move it to the current format", sub: map[string]*command{
			"sync":    workflowSyncCommand(),
			"migrate": workflowMigrateCommand(),
		}},
		"session": sessionCommand(),
		"store":   storeCommand(),
		"ports": {usage: "ports <command>", short: "lease free TCP ports to workers, so that parallel servers do not collide", sub: map[string]*command{
			"allocate": portsAllocateCommand(),
			"refresh":  portsRefreshCommand(),
			"release":  portsReleaseCommand(),
			"list":     portsListCommand(),
		}},
		"plan":    planCommand(),
		"mcp":     mcpCommand(),
		"serve":   serveCommand(),
		"agent":   agentCommand(),
		"guard":   {usage: "guard <command>", short: "checks coding agents run before they edit a file", sub: guard},
		"version": {usage: "version", short: "print the version", noArgs: true, run: runVersion},
	}
}

func runVersion(_ context.Context, a *app, _ []string) error {
	v := version.String()
	return a.reply(map[string]string{"version": v}, func() { fmt.Fprintf(a.stdio.Out, "lockgate %s\n", v) })
}

func mcpCommand() *command {
	return &command{
		takesLocks: true,
		noArgs:     true,
		usage:      "mcp",
		short:      "serve the lock API to coding agents as MCP tools over stdio",
		run: func(ctx context.Context, a *app, _ []string) error {
			if getenv("GOGC") == "" {
				// A long-lived server with a few MB of live heap would collect
				// every few calls at the default; a larger step costs little
				// memory and a good part of each call's time.
				debug.SetGCPercent(400)
			}
			a.purpose.Server = true
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			return mcpserver.Serve(ctx, e, version.String(), a.stdio.In, a.stdio.Out)
		},
	}
}
