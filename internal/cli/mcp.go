package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
			s, err := a.newMCPService(ctx)
			if err != nil {
				return err
			}
			defer s.stop()
			t := &mcp.IOTransport{Reader: io.NopCloser(a.stdio.In), Writer: nopWriteCloser{a.stdio.Out},
				MaxLineLength: maxMCPMessage}
			if err := s.server(ctx).Run(ctx, t); err != nil && ctx.Err() == nil {
				return fmt.Errorf("mcp: %w", err)
			}
			return nil
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpService answers the MCP tools of one server process. Its env (config,
// store, journal) is opened once; each call works on a copy that carries
// the caller's identity (its request id is in the call's context), so
// calls may run concurrently.
type mcpService struct {
	a    *app
	e    *service.Workspace
	stop func()
}

func (a *app) newMCPService(ctx context.Context) (*mcpService, error) {
	e, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	return &mcpService{a: a, e: e, stop: e.Background()}, nil
}

// maxMCPMessage bounds one message from the client (a tool call and its
// arguments); a longer one ends the session with an error.
const maxMCPMessage = 16 << 20
