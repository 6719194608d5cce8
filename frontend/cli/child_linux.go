package cli

import "syscall"

// groupAttrs put a command in a process group of its own and have the
// kernel send it SIGTERM when lockgate dies (even by SIGKILL): a command
// whose claim is no longer kept alive must not go on working unnoticed.
func groupAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
