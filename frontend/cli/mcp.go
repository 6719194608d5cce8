package cli

import (
	"context"
	"runtime/debug"

	"github.com/lockgate/lockgate/frontend/mcpserver"

	"github.com/lockgate/lockgate/service"
)

func mcpCommand() *command {
	return &command{
		takesLocks: true,
		usage:      "mcp",
		short:      "serve the lock API to coding agents as MCP tools over stdio",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("mcp takes no arguments")
			}
			if getenv("GOGC") == "" {
				// A long-lived server with a few MB of live heap would collect
				// every few calls at the default; a larger step costs little
				// memory and a good part of each call's time.
				debug.SetGCPercent(400)
			}
			a.purpose.Server = true
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			return mcpserver.Serve(ctx, e, version(), a.stdio.In, a.stdio.Out)
		},
	}
}
