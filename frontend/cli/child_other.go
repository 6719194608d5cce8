//go:build !linux

package cli

import "syscall"

// groupAttrs put a command in a process group of its own. Only Linux can
// stop a child when its parent dies; elsewhere a command outlives a
// crashed lockgate, and its claim expires under it.
func groupAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
