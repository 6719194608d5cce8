package queue

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/lockgate/lockgate/model/locks"
)

// contended reports an error that says only that other workers kept the
// store busy: the global claim lock held past a claim's wait, or a git
// store that other writers changed first on every try. A worker loop
// waits and tries again; it never ends for it.
func contended(err error) bool {
	var held *locks.HeldError
	return errors.As(err, new(*locks.ContendedError)) || errors.As(err, &held) && held.Lock.Key == claimLockKey
}

// contentionTries bounds the tries of one change of the queue that other
// workers keep winning: about half a minute of backing off
// (locks.NextBackoff).
const contentionTries = 20

// throughContention runs op, and again while the store says other writers
// changed it first (a *locks.ContendedError, after which nothing was
// changed), backing off between tries; its last error. Every change of a
// package's state goes through it, so that workers racing for the queue
// wait their turn instead of failing.
func throughContention(ctx context.Context, op func() error) error {
	var backoff time.Duration
	for try := 1; ; try++ {
		err := op()
		if !errors.As(err, new(*locks.ContendedError)) || try == contentionTries {
			return err
		}
		backoff = locks.NextBackoff(backoff)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1))):
		}
	}
}

// retried is throughContention for an op with a result.
func retried[T any](ctx context.Context, op func() (T, error)) (T, error) {
	var out T
	err := throughContention(ctx, func() (err error) {
		out, err = op()
		return err
	})
	return out, err
}
