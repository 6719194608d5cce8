package workflow

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/lockgate/lockgate/workflow/journal"
)

// EventSink receives lock events; *journal.Journal is one.
type EventSink interface {
	Append(evs ...journal.Event) error
}

// Manager builds the operations users see — all-or-nothing multi-key
// acquire, owner-checked release and refresh, waiting — on a Store.
type Manager struct {
	Store  Store
	Events EventSink // nil: events are not recorded
	Now    func() time.Time
	Host   string
	PID    int
	// EmitErr collects journal failures; the lock operations still happened.
	EmitErr error
	// RequestID and TraceID are stamped on every record and event this
	// Manager makes (audit context).
	RequestID, TraceID string
	// WaitPoll is how long a --wait on a store that signals releases (a
	// Waiter) waits for the signal before trying again anyway; 0 means
	// DefaultWaitPoll. The wait also ends when the lock it waits for
	// expires, which no store signals. Other stores are polled every few
	// milliseconds.
	WaitPoll time.Duration
}

// DefaultWaitPoll is Manager.WaitPoll's default.
const DefaultWaitPoll = 200 * time.Millisecond

func (m *Manager) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Request describes an acquisition.
type Request struct {
	Keys   []string // canonical keys
	Owner  Owner
	TTL    time.Duration
	Reason string
	Action string // what the lock is for: "lock", "claim", "pause", …
	TaskID string
	// TaskTTL, with TaskID, sets an activity lock's task sub-lock.
	TaskTTL time.Duration
	// Wait is how long to wait for held keys to become free: woken by
	// the release on stores that signal it (Waiter), else polling.
	Wait time.Duration
	// EventAction overrides the journal action of a fresh acquisition.
	EventAction string
	// ExactTTL: a key the owner already holds gets exactly TTL from now,
	// even when that is sooner than its expiry (the user asked for this
	// TTL). Otherwise renewing never shortens a lock.
	ExactTTL bool
}

// Result is one key's outcome.
type Result struct {
	Lock Lock
	// Renewed: the owner already held the key; its expiry was extended.
	Renewed bool
	// TookOver is the expired record this acquisition replaced.
	TookOver *Lock
	// was is a renewed lock before the renewal, put back when the
	// acquisition fails as a whole.
	was Lock
}

// NewToken returns a random owner token.
func NewToken() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Acquire takes every key of req or none. A key the owner already holds is
// renewed. A key overlapping a live lock of someone else (a pattern over a
// path, say) is refused like the key itself.
func (m *Manager) Acquire(ctx context.Context, req Request) ([]Result, error) {
	keys := slices.Clone(req.Keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if len(keys) == 0 {
		return nil, errors.New("no keys to acquire")
	}
	deadline := time.Now().Add(req.Wait)
	backoff := 500 * time.Microsecond
	waiter, _ := m.Store.(Waiter)
	var sub *subscription
	defer func() { sub.stop() }()
	for {
		res, err := m.tryAcquire(ctx, req, keys)
		var held *HeldError
		if err == nil || !errors.As(err, &held) || req.Wait <= 0 {
			if err == nil {
				m.recordAcquire(req, res)
			}
			return res, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, &TimeoutError{Held: held, Wait: req.Wait}
		}
		if waiter != nil {
			key := held.Lock.Key
			if sub == nil || sub.key != key || sub.released() {
				// Listen first, then try again: a release between the
				// failed try and the subscription is not missed.
				sub.stop()
				sub, err = subscribe(ctx, waiter, key)
				if err == nil {
					continue
				}
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				// A store that cannot signal now is polled instead.
				waiter = nil
			} else {
				// An expiry is not signalled: wake for it (a millisecond
				// late, as stores may keep it to the millisecond).
				untilExpiry := held.Lock.ExpiresAt.Sub(m.now()) + time.Millisecond
				wait := min(m.waitPoll(), left, max(untilExpiry, time.Millisecond))
				if err := sub.wait(ctx, wait); err != nil {
					return nil, err
				}
				continue
			}
		}
		// Short jittered polls: a waiter sees a release within a few ms.
		sleep := min(backoff/2+rand.N(backoff), left)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(sleep):
		}
		backoff = min(backoff*2, 8*time.Millisecond)
	}
}

func (m *Manager) waitPoll() time.Duration {
	if m.WaitPoll > 0 {
		return m.WaitPoll
	}
	return DefaultWaitPoll
}

// subscription is a Waiter's wait for one key's release.
type subscription struct {
	key    string
	ch     <-chan struct{}
	cancel context.CancelFunc
}

func subscribe(ctx context.Context, w Waiter, key string) (*subscription, error) {
	sctx, cancel := context.WithCancel(ctx)
	ch, err := w.WaitRelease(sctx, key)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("wait for %s: %w", key, err)
	}
	return &subscription{key: key, ch: ch, cancel: cancel}, nil
}

// released reports whether the key was released since the subscription
// began (or the subscription ended).
func (s *subscription) released() bool {
	select {
	case <-s.ch:
		return true
	default:
		return false
	}
}

// wait blocks until the key is released, d has passed or ctx ends.
func (s *subscription) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-s.ch:
	case <-t.C:
	}
	return nil
}

func (s *subscription) stop() {
	if s != nil {
		s.cancel()
	}
}

func (m *Manager) tryAcquire(ctx context.Context, req Request, keys []string) ([]Result, error) {
	now := m.now()
	var done []Result
	rollback := func() {
		for _, r := range done {
			if r.Renewed {
				_, _ = m.Store.Update(ctx, r.was)
			} else {
				_ = m.Store.Release(ctx, r.Lock.Key, r.Lock.Token)
			}
		}
	}
	for _, key := range keys {
		r, err := m.acquireOne(ctx, req, key, now)
		if err != nil {
			rollback()
			return nil, fmt.Errorf("cannot lock %s: %w", key, err)
		}
		done = append(done, r)
		// Create first, then look for overlapping holders: two workers
		// racing for `src/**` and `src/a.py` both see each other and both
		// back off, never both win.
		if err := m.checkOverlap(ctx, key, req.Owner, now); err != nil {
			rollback()
			return nil, fmt.Errorf("cannot lock %s: %w", key, err)
		}
	}
	return done, nil
}

func (m *Manager) acquireOne(ctx context.Context, req Request, key string, now time.Time) (Result, error) {
	rec := Lock{
		Key: key, Holder: req.Owner.Holder, HolderType: req.Owner.HolderType,
		Session: req.Owner.Session, Action: req.Action, PID: m.PID, Host: m.Host,
		CreatedAt: now.UTC(), ExpiresAt: now.Add(req.TTL).UTC(), Reason: req.Reason,
		TaskID: req.TaskID, Token: NewToken(), RequestID: m.RequestID, TraceID: m.TraceID,
	}
	setTask(&rec, req, now)
	stored, prev, err := m.Store.Acquire(ctx, rec, now)
	if err == nil {
		return Result{Lock: stored, TookOver: prev}, nil
	}
	var held *HeldError
	if !errors.As(err, &held) || !held.Lock.OwnedBy(req.Owner) {
		return Result{}, err
	}
	// Ours already: renew it, keeping its token and fence.
	cur := held.Lock
	cur.ExpiresAt = renewedExpiry(cur.ExpiresAt, now, req.TTL, req.ExactTTL)
	if req.Reason != "" {
		cur.Reason = req.Reason
	}
	if req.TaskID != "" {
		cur.TaskID = req.TaskID
		setTask(&cur, req, now)
	}
	updated, err := m.Store.Update(ctx, cur)
	if err != nil {
		return Result{}, err
	}
	return Result{Lock: updated, Renewed: true, was: held.Lock}, nil
}

// renewedExpiry is the expiry of a lock renewed at now for ttl: never
// sooner than cur unless exact.
func renewedExpiry(cur, now time.Time, ttl time.Duration, exact bool) time.Time {
	exp := now.Add(ttl).UTC()
	if !exact && cur.After(exp) {
		return cur
	}
	return exp
}

func setTask(l *Lock, req Request, now time.Time) {
	if req.TaskID == "" || req.TaskTTL <= 0 {
		return
	}
	acq, exp := now.UTC(), now.Add(req.TaskTTL).UTC()
	l.TaskAcquired, l.TaskExpires = &acq, &exp
}

func (m *Manager) checkOverlap(ctx context.Context, key string, me Owner, now time.Time) error {
	entries, err := m.Store.Overlapping(ctx, key)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Key == key && e.Err == nil {
			continue
		}
		if e.Err != nil {
			return e.Err // a corrupt record is never free
		}
		if !e.OwnedBy(me) && !e.Expired(now) {
			return &HeldError{Lock: e.Lock, Where: m.Store.Where(e.Key)}
		}
	}
	return nil
}

func (m *Manager) recordAcquire(req Request, res []Result) {
	var evs []journal.Event
	for _, r := range res {
		action := journal.ActionAcquire
		switch {
		case r.Renewed:
			action = journal.ActionRefresh
		case r.TookOver != nil:
			action = journal.ActionTakeover
		case req.EventAction != "":
			action = req.EventAction
		}
		ev := m.event(req.Owner, action, r.Lock)
		if r.TookOver != nil {
			ev.Details = fmt.Sprintf("took over expired lock of %s (expired %s)",
				r.TookOver.Holder, r.TookOver.ExpiresAt.Format(time.RFC3339))
		}
		evs = append(evs, ev)
	}
	m.emit(evs...)
}

func (m *Manager) event(o Owner, action string, l Lock) journal.Event {
	ev := journal.Event{
		Worker: o.Holder, WorkerType: o.HolderType, Session: o.Session,
		Action: action, Key: l.Key, TaskID: l.TaskID, Details: l.Reason,
	}
	if id, ok := activityID(l.Key); ok {
		ev.ActivityID = id
	}
	return ev
}

func activityID(key string) (string, bool) {
	const p = "activity:"
	if len(key) > len(p) && key[:len(p)] == p {
		return key[len(p):], true
	}
	return "", false
}

// Emit records events of the caller's own (claims, pauses).
func (m *Manager) Emit(evs ...journal.Event) { m.emit(evs...) }

// emit records events; a journal failure must not undo a lock operation
// that already happened, so it is reported through EmitErr.
func (m *Manager) emit(evs ...journal.Event) {
	if m.Events == nil || len(evs) == 0 {
		return
	}
	for i := range evs {
		if evs[i].RequestID == "" {
			evs[i].RequestID = m.RequestID
		}
		if evs[i].TraceID == "" {
			evs[i].TraceID = m.TraceID
		}
	}
	if err := m.Events.Append(evs...); err != nil {
		m.EmitErr = errors.Join(m.EmitErr, err)
	}
}

// Release removes the owner's locks on keys. With force, another's lock is
// removed too and the removed record returned. A key that holds no lock is
// reported in Missing, not as an error: release is idempotent.
func (m *Manager) Release(ctx context.Context, keys []string, me Owner, force bool) (ReleaseResult, error) {
	var out ReleaseResult
	for _, key := range keys {
		cur, err := m.Store.Get(ctx, key)
		if errors.Is(err, ErrNotFound) {
			out.Missing = append(out.Missing, key)
			continue
		}
		var corrupt *CorruptError
		if errors.As(err, &corrupt) && force {
			if _, err := m.Store.Remove(ctx, key); err != nil && !errors.As(err, &corrupt) {
				return out, err
			}
			out.Removed = append(out.Removed, Lock{Key: key})
			m.emit(journal.Event{Worker: me.Holder, WorkerType: me.HolderType, Session: me.Session,
				Action: journal.ActionClear, Key: key, Details: "removed corrupt record"})
			continue
		}
		if err != nil {
			return out, err
		}
		if !cur.OwnedBy(me) && !force {
			return out, &NotOwnerError{Lock: cur, Op: "release"}
		}
		if err := m.Store.Release(ctx, key, cur.Token); err != nil {
			return out, fmt.Errorf("release %s: %w", key, err)
		}
		ev := m.event(me, journal.ActionRelease, cur)
		if !cur.OwnedBy(me) {
			ev.Details = fmt.Sprintf("forced: was held by %s (%s, session %s) since %s",
				cur.Holder, cur.HolderType, cur.Session, cur.CreatedAt.Format(time.RFC3339))
			out.Forced = append(out.Forced, cur)
		}
		m.emit(ev)
		out.Removed = append(out.Removed, cur)
	}
	return out, nil
}

// ReleaseResult lists what Release did.
type ReleaseResult struct {
	Removed []Lock
	Forced  []Lock // removed although held by someone else
	Missing []string
}

// Refresh extends the owner's locks to ttl from now (and a task sub-lock
// to taskTTL), never shortening one unless exact (the user named the TTL).
func (m *Manager) Refresh(ctx context.Context, keys []string, me Owner, ttl, taskTTL time.Duration, exact bool) ([]Lock, error) {
	now := m.now()
	var out []Lock
	for _, key := range keys {
		cur, err := m.Store.Get(ctx, key)
		if errors.Is(err, ErrNotFound) {
			return out, fmt.Errorf("refresh %s: %w", key, err)
		}
		if err != nil {
			return out, err
		}
		if !cur.OwnedBy(me) {
			return out, &NotOwnerError{Lock: cur, Op: "refresh"}
		}
		cur.ExpiresAt = renewedExpiry(cur.ExpiresAt, now, ttl, exact)
		if cur.TaskID != "" && cur.TaskExpires != nil && taskTTL > 0 {
			exp := renewedExpiry(*cur.TaskExpires, now, taskTTL, exact)
			cur.TaskExpires = &exp
		}
		updated, err := m.Store.Update(ctx, cur)
		if err != nil {
			return out, fmt.Errorf("refresh %s: %w", key, err)
		}
		m.emit(m.event(me, journal.ActionRefresh, updated))
		out = append(out, updated)
	}
	return out, nil
}

// Clear removes whatever lock is on key (forced, logged) and returns it.
func (m *Manager) Clear(ctx context.Context, key string, me Owner) (Lock, error) {
	removed, err := m.Store.Remove(ctx, key)
	var corrupt *CorruptError
	if err != nil && !errors.As(err, &corrupt) {
		return Lock{}, err
	}
	ev := m.event(me, journal.ActionClear, Lock{Key: key})
	if corrupt != nil {
		ev.Details = "removed corrupt record"
	} else {
		ev.Details = fmt.Sprintf("cleared lock of %s (%s, session %s) created %s",
			removed.Holder, removed.HolderType, removed.Session, removed.CreatedAt.Format(time.RFC3339))
	}
	m.emit(ev)
	return removed, err
}

// Status is one key's answer to Check.
type Status struct {
	Key string `json:"key"`
	// State is "free", "mine" or "held".
	State string `json:"state"`
	// Locks are the live locks of others on or overlapping the key, or the
	// owner's own lock when State is "mine".
	Locks []Lock `json:"locks,omitempty"`
}

// Check reports, for each key, whether it is free, held by me, or held by
// someone else (directly or through an overlapping lock).
func (m *Manager) Check(ctx context.Context, keys []string, me Owner) ([]Status, error) {
	now := m.now()
	var out []Status
	for _, key := range keys {
		entries, err := m.Store.Overlapping(ctx, key)
		if err != nil {
			return nil, err
		}
		st := Status{Key: key, State: "free"}
		var mine []Lock
		for _, e := range entries {
			if e.Err != nil {
				return nil, e.Err
			}
			if e.Expired(now) {
				continue
			}
			if e.OwnedBy(me) {
				mine = append(mine, e.Lock)
				continue
			}
			st.State = "held"
			st.Locks = append(st.Locks, e.Lock)
		}
		if st.State == "free" && len(mine) > 0 {
			st.State, st.Locks = "mine", mine
		}
		out = append(out, st)
	}
	return out, nil
}
