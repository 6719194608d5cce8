//go:build !linux

package filestore

import (
	"errors"
	"os"
	"syscall"
)

// datasync flushes f; on darwin os.File.Sync uses F_FULLFSYNC, which is
// what survives a power loss there.
func datasync(f *os.File) error { return f.Sync() }

// syncDir makes the entries of directory d durable where the platform can
// sync a directory; some file systems refuse, and then there is nothing more
// to do.
func syncDir(d *os.File) error {
	err := d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
