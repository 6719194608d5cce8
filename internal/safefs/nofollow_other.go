//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package safefs

import (
	"io/fs"
	"os"
)

// noFollow: open has no such flag here; refuseLink looks first instead.
const noFollow = 0

// refuseLink refuses a symbolic link at name (racy, but the best this
// platform offers).
func refuseLink(name string) error {
	if fi, err := os.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return &UnsafePathError{Path: name, Problem: "is a symbolic link"}
	}
	return nil
}

// owner: ownership is not checked on this platform.
func owner(fs.FileInfo) (int, bool) { return 0, false }
