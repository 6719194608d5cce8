package gitexec

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel stop cmd when this process dies (SIGTERM,
// which git answers by removing its lock files): a push or fetch must not
// outlive the lockgate command that decided it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
