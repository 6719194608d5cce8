// Command gitfloor is the least a pre-commit hook written in Go can do: run
// `git diff --cached --name-status -z -M` and copy its output. The hook
// benchmark times it beside lockgate, as the floor of any Go hook that asks
// git for the staged change.
package main

import (
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command("git", "diff", "--cached", "--name-status", "-z", "-M")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.Exit(1)
	}
}
