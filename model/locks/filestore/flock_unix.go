//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package filestore

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// flock takes an exclusive flock on f. A background context blocks in the
// kernel; a cancellable one polls so that ctx can end the wait.
func flock(ctx context.Context, f *os.File) error {
	fd := int(f.Fd())
	for {
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		break
	}
	if ctx.Done() == nil {
		for {
			err := syscall.Flock(fd, syscall.LOCK_EX)
			if err == nil {
				return nil
			}
			if !errors.Is(err, syscall.EINTR) {
				return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
			}
		}
	}
	// Critical sections last well under a millisecond: poll briefly.
	wait := 20 * time.Microsecond
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
		err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		wait = min(wait*2, time.Millisecond)
		timer.Reset(wait)
	}
}

func funlock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
