package filestore

import (
	"os"
	"syscall"
)

// datasync flushes f's data (and the size needed to read it back) without
// the unrelated metadata a full fsync would also write.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}

// syncDir makes the entries of directory d durable.
func syncDir(d *os.File) error { return d.Sync() }
