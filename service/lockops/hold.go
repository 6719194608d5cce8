package lockops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockgate/lockgate/model/locks"
)

// HoldRequest is `lock hold`: locks kept while a command runs.
type HoldRequest struct {
	Keys []string
	// TTL is the locks' lifetime, renewed every third of it (0: by
	// worker type, or LOCK_TTL_MS on Redis); Wait how long to wait for
	// held keys.
	TTL, Wait time.Duration
	Reason    string
}

// Hold is locks kept for a command the front end runs: it calls Refresh
// after each Next while the command runs, and Release once it has exited.
type Hold struct {
	e     *Handler
	req   locks.Request
	taken []string
	// expires is the earliest expiry of the hold's locks the store last
	// confirmed: a renewal not confirmed by then (less locks.HoldMargin) ends
	// the hold.
	expires time.Time
	// unconfirmed is the error of the renewals that failed since the last
	// one that was confirmed; backoff the wait before the next attempt.
	unconfirmed error
	backoff     time.Duration
	// Dir is the directory the command runs in.
	Dir string
}

// Hold takes the locks r names for a command about to run. A lock
// held before the hold is renewed, never shortened, and outlives it: the
// hold gives back only what it took.
func (e *Handler) Hold(ctx context.Context, r HoldRequest) (*Hold, error) {
	keys, err := e.ParseKeys(r.Keys)
	if err != nil {
		return nil, err
	}
	req := locks.Request{Owner: e.Me, TTL: r.TTL, Reason: r.Reason, Action: "hold", Wait: r.Wait, OnWait: e.sayWaiting(r.Wait)}
	if err := e.completeRequest(&req, keys); err != nil {
		return nil, err
	}
	res, err := e.Mgr.Acquire(ctx, req)
	if err != nil {
		return nil, err
	}
	h := &Hold{e: e, req: req, Dir: e.Cwd}
	held := make([]locks.Lock, len(res))
	for i, r := range res {
		if !r.Renewed {
			h.taken = append(h.taken, r.Lock.Key)
		}
		held[i] = r.Lock
	}
	h.confirm(held)
	// The grant returns only once its event is recorded (and, with
	// workflow.auto_push, pushed), which on a slow remote can outlast a
	// short lock: a renewal due by now is made before the command starts,
	// so that it never starts under a lock that lapsed meanwhile and
	// another worker took.
	if !h.e.Now().Before(h.expires.Add(-2 * h.Interval())) {
		if err := h.Refresh(ctx); err != nil {
			_ = h.Release(ctx)
			return nil, fmt.Errorf("the locks lapsed before the command could start (recording the grant took longer than a third of --ttl): %w", err)
		}
	}
	return h, nil
}

// confirm notes the renewal the store confirmed for the hold's locks:
// their earliest expiry, and no failed attempt since.
func (h *Hold) confirm(held []locks.Lock) {
	h.expires = time.Time{}
	for _, l := range held {
		if h.expires.IsZero() || l.ExpiresAt.Before(h.expires) {
			h.expires = l.ExpiresAt
		}
	}
	h.unconfirmed, h.backoff = nil, 0
}

// Keys are the keys held, canonical.
func (h *Hold) Keys() []string { return h.req.Keys }

// Interval is how often Refresh must run: a third of the locks' lifetime,
// so that two refreshes may fail to arrive before a lock lapses.
func (h *Hold) Interval() time.Duration { return h.req.TTL / 3 }

// Next is how long to wait before the next Refresh: Interval after a
// confirmed renewal; after one the store could not confirm, a backoff
// that grows from 250 ms to 2 s, never past the instant
// the hold gives up (Refresh then says so).
func (h *Hold) Next() time.Duration {
	return locks.RetryWait(h.Interval(), h.backoff, h.deadline(), h.e.Now())
}

// Unconfirmed is the error of the renewals that failed since the last one
// the store confirmed (nil when the last was): the locks are held until
// their expiry, and Refresh is trying again.
func (h *Hold) Unconfirmed() error { return h.unconfirmed }

// Expires is the earliest expiry of the hold's locks the store last
// confirmed.
func (h *Hold) Expires() time.Time { return h.expires }

// deadline is when a hold whose renewals were not confirmed gives up.
func (h *Hold) deadline() time.Time { return h.expires.Add(-locks.HoldMargin(h.req.TTL)) }

// Refresh renews every lock of the hold for its lifetime from now. When
// the store is unavailable (a failover, a restart, a lost connection) the
// locks are still held until their expiry: Refresh returns nil, notes the
// error (Unconfirmed) and is to be called again after Next. Its error
// means the command no longer runs under the locks: one was lost (another
// holds it, its record is gone, its fence changed: the store's error), or
// none could be renewed before their expiry less a margin
// (*locks.ExpiringError).
func (h *Hold) Refresh(ctx context.Context) error {
	deadline := h.deadline()
	if h.unconfirmed != nil && !h.e.Now().Before(deadline) {
		return &locks.ExpiringError{Expires: h.expires, Err: h.unconfirmed}
	}
	rctx, cancel := locks.UntilDeadline(ctx, deadline, h.e.Now())
	defer cancel()
	// Past the deadline with no failure before (this process was not
	// running, say) the store is asked all the same: it tells a lock
	// another took from one still held.
	ls, err := h.e.Mgr.Refresh(rctx, h.req.Keys, h.e.Me, h.req.TTL, 0, false)
	if err == nil {
		h.confirm(ls)
		return nil
	}
	var unavailable *locks.UnavailableError
	var taken *locks.NotOwnerError
	switch {
	case errors.As(err, &taken):
		// Lapsed and taken by another: a lock lost (exit 4) that names
		// its holder, not another's lock this worker may not touch.
		return &locks.HeldError{Lock: taken.Lock}
	case !errors.As(err, &unavailable) && !errors.Is(err, context.DeadlineExceeded):
		return err // lost, or an answer lockgate cannot judge: stop
	}
	if ctx.Err() != nil {
		return err
	}
	h.unconfirmed = err
	if !h.e.Now().Before(deadline) {
		return &locks.ExpiringError{Expires: h.expires, Err: err}
	}
	h.backoff = locks.NextBackoff(h.backoff)
	return nil
}

// Release gives back the locks the hold took, even when ctx was
// cancelled: they must not outlive the command.
func (h *Hold) Release(ctx context.Context) error {
	if len(h.taken) == 0 {
		return nil
	}
	_, err := h.e.Mgr.Release(context.WithoutCancel(ctx), h.taken, h.e.Me, false)
	return err
}
