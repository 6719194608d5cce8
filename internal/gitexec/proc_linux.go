package gitexec

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel stop cmd when this process dies (SIGTERM,
// which git answers by removing its lock files), and puts it in a process
// group of its own, so that stopping it stops what it started too (a local
// transport's receive-pack): a push or fetch must not outlive the lockgate
// command that decided it, nor its timeout.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
}
