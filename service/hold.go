package service

import (
	"context"
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
// every Interval while the command runs, and Release once it has exited.
type Hold struct {
	e     *Workspace
	req   locks.Request
	taken []string
	// Dir is the directory the command runs in.
	Dir string
}

// HoldLocks takes the locks r names for a command about to run. A lock
// held before the hold is renewed, never shortened, and outlives it: the
// hold gives back only what it took.
func (e *Workspace) HoldLocks(ctx context.Context, r HoldRequest) (*Hold, error) {
	keys, err := e.ParseKeys(r.Keys)
	if err != nil {
		return nil, err
	}
	req := locks.Request{Owner: e.me, TTL: r.TTL, Reason: r.Reason, Action: "hold", Wait: r.Wait}
	if err := e.completeRequest(&req, keys); err != nil {
		return nil, err
	}
	res, err := e.mgr.Acquire(ctx, req)
	if err != nil {
		return nil, err
	}
	h := &Hold{e: e, req: req, Dir: e.cwd}
	for _, r := range res {
		if !r.Renewed {
			h.taken = append(h.taken, r.Lock.Key)
		}
	}
	return h, nil
}

// Keys are the keys held, canonical.
func (h *Hold) Keys() []string { return h.req.Keys }

// Interval is how often Refresh must run: a third of the locks' lifetime,
// so that two refreshes may fail to arrive before a lock lapses.
func (h *Hold) Interval() time.Duration { return h.req.TTL / 3 }

// Refresh renews every lock of the hold for its lifetime from now. Its
// error means a lock was lost: the command no longer runs under it.
func (h *Hold) Refresh(ctx context.Context) error {
	_, err := h.e.mgr.Refresh(ctx, h.req.Keys, h.e.me, h.req.TTL, 0, false)
	return err
}

// Release gives back the locks the hold took, even when ctx was
// cancelled: they must not outlive the command.
func (h *Hold) Release(ctx context.Context) error {
	if len(h.taken) == 0 {
		return nil
	}
	_, err := h.e.mgr.Release(context.WithoutCancel(ctx), h.taken, h.e.me, false)
	return err
}
