package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the server when the test process dies
// (a timeout's panic, a SIGKILL), which skips every t.Cleanup.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
