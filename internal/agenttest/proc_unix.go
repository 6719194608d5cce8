//go:build unix

package agenttest

import (
	"os/exec"
	"syscall"
)

// killGroup runs the harness in its own process group and has the
// context's cancellation kill the whole group: the CLIs start node
// processes, shells and hooks of their own.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// reapGroup kills what the harness left running in its process group
// (language servers, background shells) after it exited.
func reapGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
