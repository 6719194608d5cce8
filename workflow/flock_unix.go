//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package workflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/lockgate/lockgate/internal/safefs"
)

// lockWriters takes an exclusive flock(2) on path, waiting for it until
// ctx ends or maxWait passes, and returns the function that releases it.
// It returns ok=false (and no error) when the lock could not be had in
// time, or its file cannot be created (a read-only git directory), or the
// file system does not support flock: the caller then writes with
// compare-and-swap alone, which stays correct, only slower under
// contention. A symbolic link planted at path or its directory is an
// error naming it, never followed. The kernel drops the lock when its
// holder dies, so a killed writer never blocks the others.
func lockWriters(ctx context.Context, path string, maxWait time.Duration) (unlock func(), ok bool, err error) {
	var unsafe *safefs.UnsafePathError
	if err := safefs.MkdirAll(filepath.Dir(path), 0o755, 1); err != nil {
		if errors.As(err, &unsafe) {
			return nil, false, err
		}
		return nil, false, nil
	}
	f, err := safefs.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		if errors.As(err, &unsafe) {
			return nil, false, fmt.Errorf("workflow branch writer lock: %w", err)
		}
		return nil, false, nil
	}
	deadline := time.Now().Add(maxWait)
	for wait := 200 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		ferr := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case ferr == nil:
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, true, nil
		case errors.Is(ferr, syscall.EWOULDBLOCK) || errors.Is(ferr, syscall.EINTR):
		default: // ENOLCK, EOPNOTSUPP, ENOSYS: no flock here
			f.Close()
			return nil, false, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, false, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, false, ctx.Err()
		case <-t.C:
		}
	}
}
