// Command readfloor is the least a git hook written in Go that reads what
// git gives it can do: read its stdin to the end and, given a file as its
// last argument (commit-msg's message), read that file. The hook
// benchmarks time it beside lockgate-hook, as the floor of the hooks that
// run no git of their own before they answer.
package main

import (
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		os.Exit(1)
	}
	if n := len(os.Args); n > 1 {
		if _, err := os.ReadFile(os.Args[n-1]); err != nil && !os.IsNotExist(err) {
			os.Exit(1)
		}
	}
}
