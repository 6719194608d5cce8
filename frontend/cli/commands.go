package cli

import (
	"context"
	"fmt"
	"runtime/debug"
)

func commands() map[string]*command {
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
		"workflow":        workflowCommand(),
		"session":         sessionCommand(),
		"store":           storeCommand(),
		"ports":           portsCommand(),
		"plan":            planCommand(),
		"mcp":             mcpCommand(),
		"guard": {usage: "guard <command>", short: "checks coding agents run before they edit a file", sub: map[string]*command{
			"edit":        guardEditCommand(),
			"claude-code": guardClaudeCodeCommand(),
		}},
		"version": {usage: "version", short: "print the version", noArgs: true, run: runVersion},
	}
}

// Version is set at build time with -ldflags "-X …/frontend/cli.Version=v1.2.3".
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func runVersion(_ context.Context, a *app, _ []string) error {
	v := version()
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, map[string]string{"version": v})
	}
	fmt.Fprintf(a.stdio.Out, "lockgate %s\n", v)
	return nil
}
