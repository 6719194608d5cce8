// Command lockgate-hook runs lockgate's git hooks in a binary that links
// only what they need, so that a commit pays for no more than its checks:
// `lockgate-hook NAME ARGS…` is `lockgate hook NAME ARGS…`, and hands to
// lockgate what only lockgate links (docs/hooks.md, The hook binary).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/lockgate/lockgate/frontend/hookcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := hookcli.Main(ctx, os.Args[1:], hookcli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
