//go:build !unix

package agenttest

import "os/exec"

// killGroup leaves cancellation to exec's default (killing the process).
func killGroup(cmd *exec.Cmd) {}

// reapGroup does nothing here.
func reapGroup(cmd *exec.Cmd) {}
