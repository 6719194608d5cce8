package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/model/locks"
)

// A session's history is the hash P+"h:"+session: one field per lock key
// the session acquired and has not released, whose value is a copy of the
// record as stored. Acquire and Update write it, Release and Remove delete
// the entry; an expired lock stays in it (and so does one taken over by
// someone else), which is what Restore looks at.

// History returns the locks session acquired (or refreshed) and did not
// release, sorted by key, whether or not they are still held. An entry that
// cannot be read as a lock record has Err set (a *locks.CorruptError).
func (s *Store) History(ctx context.Context, session string) ([]locks.Entry, error) {
	entries, _, err := s.history(ctx, session)
	return entries, err
}

// history returns History's entries and the raw values by key.
func (s *Store) history(ctx context.Context, session string) ([]locks.Entry, map[string]string, error) {
	op := "history " + session
	octx, cancel := s.opCtx(ctx)
	defer cancel()
	m, err := s.rdb.HGetAll(octx, s.histKey(session)).Result()
	if err != nil {
		if isWrongType(err) {
			return []locks.Entry{{Name: s.histKey(session), Err: &locks.CorruptError{
				Path: s.display + " " + s.histKey(session), Err: errors.New("history is not a hash")}}}, nil, nil
		}
		return nil, nil, s.fail(ctx, op, err)
	}
	out := make([]locks.Entry, 0, len(m))
	for key, v := range m {
		out = append(out, s.historyEntry(session, key, v))
	}
	sortEntries(out)
	return out, m, nil
}

func (s *Store) historyEntry(session, key, v string) locks.Entry {
	name := s.histKey(session) + " " + key
	e := locks.Entry{Name: name}
	e.Key = key
	rec, err := parseValue(key, v)
	switch {
	case err != nil:
	case rec.Session != session:
		err = fmt.Errorf("history of session %q holds a record of session %q", session, rec.Session)
	case rec.Token == "":
		err = errors.New("record has no token")
	}
	if err != nil {
		e.Err = &locks.CorruptError{Key: key, Path: s.display + " " + name, Err: err}
		return e
	}
	e.Lock = rec
	return e
}

// RestoreRequest is one lock Restore asks to re-acquire.
type RestoreRequest struct {
	// Lock is the persisted record: key, holder, reason, action, task.
	Lock locks.Lock
	// TTL is what to acquire it for: the time it had left when that is
	// positive, else its original TTL (expires_at - created_at).
	TTL time.Duration
}

// Skip is a history entry Restore did not re-acquire, and why.
type Skip struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// RestoreResult says what Restore did with each history entry.
type RestoreResult struct {
	Restored []string `json:"restored"`
	Skipped  []Skip   `json:"skipped"`
	// Pending are the keys a failed Restore did not get to: they stay in
	// the history for the next one.
	Pending []string `json:"pending,omitempty"`
}

// ErrInvalid marks an entry that can never be restored (say, a key the
// repository's configuration refuses) when wrapped in the error of
// Restore's acquire function: Restore drops it from the history instead of
// trying again next time.
var ErrInvalid = errors.New("invalid history entry")

// Restore re-acquires the locks in session's history, in key order, by
// calling acquire for each (AcquireWith builds one on a locks.Manager,
// which renews a lock the session still holds). It skips, with a reason
// each:
//
//   - entries that cannot be read (dropped from the history);
//   - entries that were lost: another acquisition of the key was granted
//     since (the key's fence counter passed the entry's), so another holder
//     had or has it; re-taking it silently would hide that (dropped);
//   - entries acquire refused (held through an overlapping lock, say); they
//     stay in the history unless the error wraps ErrInvalid.
//
// An unavailable store, a rate limit or the end of ctx stops Restore: it
// returns what it did so far, the keys it did not get to (Pending; they
// stay in the history, as does the entry whose acquisition failed) and
// the error. The history lives in Redis, so
// Restore after a restart of Redis finds it only when Redis persists its
// data (appendonly yes); without persistence there is nothing to restore.
func (s *Store) Restore(ctx context.Context, session string, acquire func(context.Context, RestoreRequest) error) (RestoreResult, error) {
	var res RestoreResult
	entries, raw, err := s.history(ctx, session)
	if err != nil {
		return res, err
	}
	var drop []any // pairs of key and "f<fence>" or "v<whole value>"
	defer func() {
		if len(drop) > 0 {
			octx, cancel := s.opCtx(context.WithoutCancel(ctx))
			defer cancel()
			_ = historyDropScript.redisScript().Run(octx, s.rdb, []string{s.histKey(session)}, drop...).Err()
		}
	}()
	var valid []locks.Entry
	for _, e := range entries {
		if e.Err != nil {
			res.Skipped = append(res.Skipped, Skip{Key: e.Key, Reason: fmt.Sprintf("invalid history entry, dropped: %v", e.Err)})
			drop = append(drop, e.Key, "v"+raw[e.Key])
			continue
		}
		valid = append(valid, e)
	}
	// One round trip: each key's record and fence counter now.
	octx, cancel := s.opCtx(ctx)
	defer cancel()
	p := s.rdb.Pipeline()
	recs := make([]*redis.StringCmd, len(valid))
	fences := make([]*redis.StringCmd, len(valid))
	members := make([]string, len(valid))
	for i, e := range valid {
		// The entry's field is its record's member: the identity of its
		// key, or its spelling when written without case folding.
		members[i] = strings.TrimPrefix(e.Name, s.histKey(session)+" ")
		recs[i] = p.Get(octx, s.recKey(members[i]))
		fences[i] = p.HGet(octx, s.kFences, members[i])
	}
	if len(valid) > 0 {
		_, _ = p.Exec(octx) // each command keeps its own error
	}
	now := time.Now()
	// pending keeps the keys from i on, when Restore stops at entry i.
	pending := func(i int) []string {
		keys := make([]string, 0, len(valid)-i)
		for _, e := range valid[i:] {
			keys = append(keys, e.Lock.Key)
		}
		return keys
	}
	for i, e := range valid {
		rec := e.Lock
		v, err := recs[i].Result()
		var cur locks.Lock
		found := err == nil
		switch {
		case errors.Is(err, redis.Nil), isWrongType(err):
		case err != nil:
			res.Pending = pending(i)
			return res, s.fail(ctx, "restore "+session, err)
		default:
			if cur, err = parseValue(members[i], v); err != nil {
				found = false
			}
		}
		counter, err := fences[i].Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			res.Pending = pending(i)
			return res, s.fail(ctx, "restore "+session, err)
		}
		mine := found && cur.Token == rec.Token
		if !mine && counter > int64(rec.Fence) {
			res.Skipped = append(res.Skipped, Skip{Key: rec.Key, Reason: lostReason(cur, found, now, rec.Fence, counter)})
			drop = append(drop, members[i], "f"+strconv.FormatUint(rec.Fence, 10))
			continue
		}
		ttl := rec.ExpiresAt.Sub(now)
		if ttl <= 0 {
			ttl = rec.ExpiresAt.Sub(rec.CreatedAt)
		}
		if ttl <= 0 {
			res.Skipped = append(res.Skipped, Skip{Key: rec.Key, Reason: "invalid history entry, dropped: it expires before it was created"})
			drop = append(drop, members[i], "f"+strconv.FormatUint(rec.Fence, 10))
			continue
		}
		err = acquire(ctx, RestoreRequest{Lock: rec, TTL: ttl})
		switch {
		case err == nil:
			res.Restored = append(res.Restored, rec.Key)
		case stops(ctx, err):
			res.Pending = pending(i)
			return res, err
		case errors.Is(err, ErrInvalid):
			res.Skipped = append(res.Skipped, Skip{Key: rec.Key, Reason: err.Error() + "; dropped from the history"})
			drop = append(drop, members[i], "f"+strconv.FormatUint(rec.Fence, 10))
		default:
			res.Skipped = append(res.Skipped, Skip{Key: rec.Key, Reason: err.Error()})
		}
	}
	slices.SortFunc(res.Skipped, func(a, b Skip) int { return strings.Compare(a.Key, b.Key) })
	return res, nil
}

// stops reports an error after which no other entry can be restored either.
func stops(ctx context.Context, err error) bool {
	var unavailable *locks.UnavailableError
	var limited *locks.RateLimitedError
	return ctx.Err() != nil || errors.As(err, &unavailable) || errors.As(err, &limited) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func lostReason(cur locks.Lock, found bool, now time.Time, had uint64, counter int64) string {
	base := fmt.Sprintf("lost: granted again since (fence %d, now %d)", had, counter)
	if found && !cur.Expired(now) {
		return fmt.Sprintf("lost: held by %s (%s, session %s) until %s", cur.Holder, cur.HolderType,
			cur.Session, cur.ExpiresAt.UTC().Format(time.RFC3339))
	}
	return base + "; acquire it again if it is still needed"
}

// AcquireWith returns an acquire function for Restore that re-acquires
// through m as me, with the persisted reason, action and task (and the task
// sub-lock's original TTL), so that the journal records it like any other
// acquisition and a lock me still holds is renewed. canon, when not nil,
// checks a key against the repository's rules (lockkey.Canonical with its
// options); a key it refuses or rewrites is invalid (ErrInvalid).
func AcquireWith(m *locks.Manager, me locks.Owner, canon func(string) (string, error)) func(context.Context, RestoreRequest) error {
	return func(ctx context.Context, req RestoreRequest) error {
		key := req.Lock.Key
		if canon != nil {
			c, err := canon(key)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			if c != key {
				return fmt.Errorf("%w: key %q is not canonical (%q)", ErrInvalid, key, c)
			}
		}
		var taskTTL time.Duration
		if l := req.Lock; l.TaskID != "" && l.TaskAcquired != nil && l.TaskExpires != nil {
			taskTTL = l.TaskExpires.Sub(*l.TaskAcquired)
		}
		_, err := m.Acquire(ctx, locks.Request{
			Keys: []string{key}, Owner: me, TTL: req.TTL, Reason: req.Lock.Reason,
			Action: req.Lock.Action, TaskID: req.Lock.TaskID, TaskTTL: taskTTL,
		})
		return err
	}
}
