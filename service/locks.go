package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/redisstore"
)

// CompleteRequest fills in what every lock acquisition shares: the
// canonical keys, the default TTL, and the task sub-lock of an activity.
func (e *Workspace) CompleteRequest(req *locks.Request, keys []lockkey.Key) error {
	req.Keys = Canonicals(keys)
	if req.TTL == 0 {
		ttl, err := e.DefaultTTL(keys)
		if err != nil {
			return err
		}
		req.TTL = ttl
	}
	if req.TaskID == "" {
		return nil
	}
	if err := CheckID("task", req.TaskID); err != nil {
		return err
	}
	for _, k := range keys {
		if k.Kind == lockkey.KindActivity {
			req.TaskTTL = e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask)
		}
	}
	return nil
}

// RefreshKeys extends each key to ttl from now — exactly, as the user named
// it — or, when ttl is 0, by its own default TTL without shortening it,
// returning the locks refreshed before any error. The keys refreshed
// change in one change of the store: on the git store, one push.
func (e *Workspace) RefreshKeys(ctx context.Context, keys []lockkey.Key, ttl time.Duration) ([]locks.Lock, error) {
	rs := make([]locks.Renewal, len(keys))
	for i, k := range keys {
		rs[i] = locks.Renewal{Key: k.Canonical, TTL: ttl}
		if ttl == 0 {
			t, err := e.DefaultTTL([]lockkey.Key{k})
			if err != nil {
				return nil, err
			}
			rs[i].TTL = t
		}
	}
	return e.Mgr.RefreshEach(ctx, rs, e.Me, e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask), ttl != 0)
}

// DefaultTTL is the default lifetime of a set of keys, on every store:
// locks.durations by worker type, an activity among them lasting as long
// as an activity. On Redis, LOCK_TTL_MS, the variable other lock clients
// of that server read, overrides it when set; a value that is not a whole
// positive number of milliseconds is invalid input, never a silent
// default.
func (e *Workspace) DefaultTTL(keys []lockkey.Key) (time.Duration, error) {
	if e.Redis != nil {
		ttl, ok, err := redisstore.TTLFromEnv(e.getenv)
		if err != nil {
			return 0, Usagef("%v", err)
		}
		if ok {
			return ttl, nil
		}
	}
	ttl := e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask)
	for _, k := range keys {
		ttl = max(ttl, e.TTLFor(k))
	}
	return ttl, nil
}

func CheckID(what, id string) error {
	if id == "" || strings.ContainsAny(id, " /:") {
		return Usagef("invalid %s id %q", what, id)
	}
	if err := safetext.Check(what+" id", id); err != nil {
		return Usagef("%v", err)
	}
	return nil
}

// RestoreSession re-acquires the locks the Redis store keeps in this
// session's history and still can; it skips, and says why, those it
// cannot. The file store keeps locks on disk across restarts and has
// nothing to restore.
func (e *Workspace) RestoreSession(ctx context.Context) (redisstore.RestoreResult, error) {
	if e.Redis == nil {
		return redisstore.RestoreResult{}, Usagef("session restore needs the Redis store (`lockgate store use redis://…`); the file and git stores keep locks across restarts by themselves")
	}
	opts := e.KeyOptions()
	canon := func(k string) (string, error) { return lockkey.Canonical(k, opts) }
	res, err := e.Redis.Restore(ctx, e.Me.Session, redisstore.AcquireWith(e.Mgr, e.Me, canon))
	if res.Restored == nil {
		res.Restored = []string{}
	}
	if res.Skipped == nil {
		res.Skipped = []redisstore.Skip{}
	}
	return res, err
}

// Pruned is one expired record `lock prune` removed.
type Pruned struct {
	LockView
	ExpiredFor time.Duration `json:"-"`
}

// Prune removes the records whose locks have expired. Each is taken over
// first — which a store does only while the record is still expired, so
// that a lock refreshed or taken meanwhile is never removed — then
// released: both are logged (lock_takeover naming the expired holder,
// lock_release).
func (e *Workspace) Prune(ctx context.Context) ([]Pruned, error) {
	entries, err := e.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	now := e.Now()
	var out []Pruned
	for _, en := range entries {
		if en.Err != nil || !en.Expired(now) {
			continue
		}
		res, err := e.Mgr.Acquire(ctx, locks.Request{Keys: []string{en.Key}, Owner: e.Me, TTL: time.Minute,
			Action: "prune", Reason: "prune an expired lock", ExactTTL: true})
		if errors.As(err, new(*locks.HeldError)) {
			continue // taken or refreshed since it was listed: a live lock
		}
		if err != nil {
			return out, fmt.Errorf("prune %s: %w", en.Key, err)
		}
		if len(res) != 1 || res[0].TookOver == nil {
			// It was gone, or ours: give back what was just taken.
			if _, err := e.Mgr.Release(ctx, []string{en.Key}, e.Me, false); err != nil {
				return out, fmt.Errorf("prune %s: %w", en.Key, err)
			}
			continue
		}
		if _, err := e.Mgr.Release(ctx, []string{en.Key}, e.Me, false); err != nil {
			return out, fmt.Errorf("prune %s: taken over, not released: %w", en.Key, err)
		}
		out = append(out, Pruned{LockView: ViewOf(*res[0].TookOver), ExpiredFor: now.Sub(res[0].TookOver.ExpiresAt)})
	}
	return out, nil
}
