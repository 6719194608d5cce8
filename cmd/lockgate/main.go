// Command lockgate coordinates many workers in one git repository: locks on
// files and logical resources, and git hooks that enforce them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/lockgate/lockgate/frontend/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
