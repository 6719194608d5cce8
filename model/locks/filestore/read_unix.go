//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"os"
	"syscall"
)

// readSmall reads the whole file at path into buf (grown when too small),
// never through a symbolic link, with three system calls, where os.ReadFile needs up to six: List reads
// thousands of records, and on a virtual machine every call counts.
func readSmall(path string, buf []byte) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.ELOOP || err == syscall.EMLINK {
		return nil, &os.PathError{Op: "open", Path: path, Err: errLink} // see errLink
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, max(cap(buf), 512))...)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		// A short read of a regular file is its end; a full buffer may
		// not be, so read on.
		if n == 0 || len(buf) < cap(buf) {
			return buf, nil
		}
	}
}
