package mcpserver

import (
	"context"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lockgate/lockgate/service"
)

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// Serve answers MCP requests on in and out (newline-delimited JSON-RPC,
// the stdio transport) until in ends or ctx is cancelled. e is the opened
// workspace the tools work on, once for the server; each call works on a
// copy that carries the caller's identity (its request id is in the call's
// context), so calls may run concurrently. version is lockgate's, which
// the server reports.
func Serve(ctx context.Context, e *service.Workspace, version string, in io.Reader, out io.Writer) error {
	stop := e.Background()
	defer stop()
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}, MaxLineLength: maxMessage}
	if err := newServer(ctx, e, version).Run(ctx, t); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// maxMessage bounds one message from the client (a tool call and its
// arguments); a longer one ends the session with an error.
const maxMessage = 16 << 20
