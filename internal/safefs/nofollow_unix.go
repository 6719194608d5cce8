//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package safefs

import (
	"io/fs"
	"syscall"
)

// noFollow makes open(2) refuse a symbolic link as the last component.
const noFollow = syscall.O_NOFOLLOW

// refuseLink is not needed where open(2) takes O_NOFOLLOW.
func refuseLink(string) error { return nil }

// owner is the uid that owns fi.
func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
