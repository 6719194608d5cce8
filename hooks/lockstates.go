package hooks

import (
	"context"
	"errors"
	"time"
)

// LockStates reads states of the git store's lock table (the commits its
// ref names) for the checks of a push to that ref. The service hands in
// the git store's own readers: the hook engine knows the Store interface,
// never a store, so that a hook links no store it does not use.
type LockStates struct {
	// Follows reports whether state to is a later state of the table
	// than from, and why not when it is not.
	Follows func(ctx context.Context, dir, from, to string) (later bool, why string, err error)
	// Unlogged says why to, a later state than from, drops a live lock
	// of from unannounced; none when it drops none.
	Unlogged func(ctx context.Context, dir, from, to string, now time.Time) ([]string, error)
	// Released names the holders of the locks state commit releases.
	Released func(ctx context.Context, dir, commit string) ([]string, error)
}

// ErrNoLockStates refuses to judge a push to the lock table's ref that
// the runner was given no reader of its states for.
var ErrNoLockStates = errors.New("cannot judge a state of the git store's lock table: this check was given no reader of its states")

func (s LockStates) follows(ctx context.Context, dir, from, to string) (bool, string, error) {
	if s.Follows == nil {
		return false, "", ErrNoLockStates
	}
	return s.Follows(ctx, dir, from, to)
}

func (s LockStates) unlogged(ctx context.Context, dir, from, to string, now time.Time) ([]string, error) {
	if s.Unlogged == nil {
		return nil, ErrNoLockStates
	}
	return s.Unlogged(ctx, dir, from, to, now)
}

func (s LockStates) released(ctx context.Context, dir, commit string) ([]string, error) {
	if s.Released == nil {
		return nil, ErrNoLockStates
	}
	return s.Released(ctx, dir, commit)
}
