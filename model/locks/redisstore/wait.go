package redisstore

import (
	"context"

	"github.com/lockgate/lockgate/model/locks"
)

var _ locks.Waiter = (*Store)(nil)

// WaitRelease subscribes to key's release channel and returns a channel
// that is closed when the key is next released or removed (Release, Remove
// publish the key in the same script that deletes it), or when ctx ends.
// It returns once the subscription is active, so a release that happens
// after WaitRelease returns is never missed: subscribe, then try to
// acquire, then wait. A lock that merely expires publishes nothing, so a
// waiter still needs a timeout (the lock's expiry) or a slow poll.
//
// Each call holds one connection until the channel is closed; cancel ctx
// to give it back early.
func (s *Store) WaitRelease(ctx context.Context, key string) (<-chan struct{}, error) {
	op := "wait " + key
	octx, cancel := s.opCtx(ctx)
	ps := s.rdb.Subscribe(octx, s.channel(s.id(key)))
	_, err := ps.Receive(octx) // the subscription's confirmation
	cancel()
	if err != nil {
		_ = ps.Close()
		return nil, s.fail(ctx, op, err)
	}
	done := make(chan struct{})
	msgs := ps.Channel()
	go func() {
		defer close(done)
		defer ps.Close()
		select {
		case <-msgs:
		case <-ctx.Done():
		}
	}()
	return done, nil
}
