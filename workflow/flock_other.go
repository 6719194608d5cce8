//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package workflow

import (
	"context"
	"time"
)

// lockWriters is unavailable without flock(2): writers rely on
// compare-and-swap alone.
func lockWriters(context.Context, string, time.Duration) (func(), bool, error) {
	return nil, false, nil
}
