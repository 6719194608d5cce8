package locks

import (
	"context"
	"fmt"
	"time"
)

// How a holder keeps its locks alive: the renewals of `lock hold` and of
// the work loop's claim retry, back off and give up by the same rules.

// The first retry of a renewal the store could not confirm comes after
// retryFirst, each next one after twice as long, at most retryMax.
const (
	retryFirst = 250 * time.Millisecond
	retryMax   = 2 * time.Second
)

// NextBackoff is the wait before the next renewal after one more the
// store could not confirm, b the wait before it (0: none failed yet).
func NextBackoff(b time.Duration) time.Duration {
	return min(max(2*b, retryFirst), retryMax)
}

// RetryWait is how long to wait before the next renewal: every after a
// confirmed one (backoff 0), else backoff, never past deadline.
func RetryWait(every, backoff time.Duration, deadline, now time.Time) time.Duration {
	if backoff == 0 {
		return every
	}
	return max(min(backoff, deadline.Sub(now)), 0)
}

// UntilDeadline bounds a renewal attempt by deadline, read on the
// caller's clock (now): an attempt that hangs must not outlast the
// locks. The time left carries over to the system's clock, which the
// context reads. Past the deadline ctx is left as it is.
func UntilDeadline(ctx context.Context, deadline, now time.Time) (context.Context, context.CancelFunc) {
	if left := deadline.Sub(now); left > 0 {
		return context.WithTimeout(ctx, left)
	}
	return ctx, func() {}
}

// HoldMargin is how long before the locks' expiry a hold whose renewals
// were not confirmed gives up: the command is stopped before another can
// take a lapsed lock, even with the clocks of the hosts a little apart.
func HoldMargin(ttl time.Duration) time.Duration {
	return min(max(ttl/10, 500*time.Millisecond), 5*time.Second)
}

// ExpiringError is a hold's locks, or a work loop's claim, that could not
// be renewed before their expiry (less a margin): the store stayed
// unavailable, so they may lapse and be taken by another while the
// command runs.
type ExpiringError struct {
	// Expires is the locks' last confirmed expiry.
	Expires time.Time
	// Err is the last renewal's error.
	Err error
}

func (e *ExpiringError) Error() string {
	return fmt.Sprintf("could not renew the locks before they expire at %s: %v",
		e.Expires.UTC().Format(time.RFC3339), e.Err)
}

func (e *ExpiringError) Unwrap() error { return e.Err }
