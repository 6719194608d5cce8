package cli

import (
	"context"
	"runtime/debug"

	"github.com/lockgate/lockgate/frontend/mcpserver"
)

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
			return mcpserver.Serve(ctx, e, version(), a.stdio.In, a.stdio.Out)
		},
	}
}
