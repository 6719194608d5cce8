package lockops

import (
	"context"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/redisstore"
	"github.com/lockgate/lockgate/service/session"
)

// completeRequest fills in what every lock acquisition shares: the
// canonical keys, the default TTL, and the task sub-lock of an activity.
func (e *Handler) completeRequest(req *locks.Request, keys []lockkey.Key) error {
	req.Keys = session.Canonicals(keys)
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
	if err := checkID("task", req.TaskID); err != nil {
		return err
	}
	for _, k := range keys {
		if k.Kind == lockkey.KindActivity {
			req.TaskTTL = e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask)
		}
	}
	return nil
}

// DefaultTTL is the default lifetime of a set of keys, on every store:
// locks.durations by worker type, an activity among them lasting as long
// as an activity. On Redis, LOCK_TTL_MS, the variable other lock clients
// of that server read, overrides it when set; a value that is not a whole
// positive number of milliseconds is invalid input, never a silent
// default.
func (e *Handler) DefaultTTL(keys []lockkey.Key) (time.Duration, error) {
	if e.Redis != nil {
		ttl, ok, err := redisstore.TTLFromEnv(e.Getenv)
		if err != nil {
			return 0, session.Usagef("%v", err)
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

// checkID refuses an id of a task or package (what) that would not
// print or parse as one: empty, with a space, '/' or ':', or unsafe text.
func checkID(what, id string) error {
	if id == "" || strings.ContainsAny(id, " /:") {
		return session.Usagef("invalid %s id %q", what, id)
	}
	if err := safetext.Check(what+" id", id); err != nil {
		return session.Usagef("%v", err)
	}
	return nil
}

// RestoreSession re-acquires the locks the Redis store keeps in this
// session's history and still can; it skips, and says why, those it
// cannot. The file store keeps locks on disk across restarts and has
// nothing to restore.
func (e *Handler) RestoreSession(ctx context.Context) (SessionRestore, error) {
	if e.Redis == nil {
		return SessionRestore{}, session.Usagef("session restore needs the Redis store (`lockgate store use redis://…`); the file and git stores keep locks across restarts by themselves")
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
	return SessionRestore{RestoreResult: res, Session: e.Me.Session}, err
}

// SessionRestore is what `session restore` did: the keys restored and
// those skipped, with why, in the session named.
type SessionRestore struct {
	redisstore.RestoreResult
	Session string `json:"-"`
}

// Pruned is one expired record `lock prune` removed.
type Pruned struct {
	session.LockView
	ExpiredFor time.Duration `json:"-"`
}
