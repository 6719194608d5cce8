//go:build !linux

package gitexec

import (
	"os/exec"
	"syscall"
)

// dieWithParent: only Linux can stop a child when its parent dies; there
// the git store's Seal is what keeps a late push from landing.
func dieWithParent(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
}
