package locktest

import (
	"context"
	"errors"

	"github.com/lockgate/lockgate/model/locks"
)

// DownFor is a store that is unavailable for its next N reads and
// writes of a record, then answers again: a failover, a restart.
type DownFor struct {
	locks.Store
	N int
}

func (s *DownFor) down() error {
	if s.N == 0 {
		return nil
	}
	s.N--
	return &locks.UnavailableError{Store: "test", Err: errors.New("connection refused")}
}

// Get fails while the store is down.
func (s *DownFor) Get(ctx context.Context, key string) (locks.Lock, error) {
	if err := s.down(); err != nil {
		return locks.Lock{}, err
	}
	return s.Store.Get(ctx, key)
}

// Update fails while the store is down.
func (s *DownFor) Update(ctx context.Context, l locks.Lock) (locks.Lock, error) {
	if err := s.down(); err != nil {
		return locks.Lock{}, err
	}
	return s.Store.Update(ctx, l)
}

// Unlistable is a store whose listing fails, as a Redis server that went
// away does.
type Unlistable struct{ locks.Store }

// List fails.
func (Unlistable) List(context.Context) ([]locks.Entry, error) {
	return nil, &locks.UnavailableError{Store: "test", Err: errors.New("connection refused")}
}
