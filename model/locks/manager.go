package locks

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// EventSink records lock events; *journal.Journal is one. A change to
// the store is written down first (Intend), made, then recorded (Append):
// a change whose events cannot be recorded is not made, and one whose
// writer dies before recording it is recorded by the next Manager that
// recovers (Recover).
type EventSink interface {
	Intend(data []byte) (*journal.Intent, error)
	Append(evs ...journal.Event) error
	Recover(settle func(data []byte) ([]journal.Event, error)) error
}

// Manager builds the operations users see — all-or-nothing multi-key
// acquire, owner-checked release and refresh, waiting — on a Store.
type Manager struct {
	Store  Store
	Events EventSink // nil: events are not recorded
	Now    func() time.Time
	Host   string
	PID    int
	// StoreName names Store in the events (journal.Event.Store).
	StoreName string
	// WaitPoll is how long a --wait on a store that signals releases (a
	// Waiter) waits for the signal before trying again anyway; 0 means
	// DefaultWaitPoll. The wait also ends when the lock it waits for
	// expires, which no store signals. Other stores are polled every few
	// milliseconds.
	WaitPoll time.Duration
	// PerBranch (locks.per_branch) compares every path or pattern key
	// with the branch locks (lockkey.BranchKey) of its paths too: a lock
	// without a branch holds on every branch, so it and a branch lock of
	// a common path exclude each other. A branch lock's key is always
	// compared with the locks without a branch.
	PerBranch bool
	// Lasting reports records kept for good once written (a finished
	// work package's task record: others remember that it is there), and
	// LastingRemoved, when set, is called before and after every release
	// or clear that removes one, or a record that cannot be read (it may
	// have been one), so that what was remembered is forgotten.
	Lasting        func(Lock) bool
	LastingRemoved func(ctx context.Context) error

	recovered atomic.Bool // the intents of dead writers were settled
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
	// OnWait, when set, is told each lock the request waits for, once per
	// key and grant: whoever waits wants to know on whom, and until when.
	OnWait func(held Lock)
	// EventAction overrides the journal action of a fresh acquisition.
	EventAction string
	// ExactTTL: a key the owner already holds gets exactly TTL from now,
	// even when that is sooner than its expiry (the user asked for this
	// TTL). Otherwise renewing never shortens a lock.
	ExactTTL bool
	// KeepHeld: a key the owner already holds keeps its reason and task;
	// the request only extends it (a claim renews what was held before
	// it without making it its own).
	KeepHeld bool
	// Events are recorded with the acquisition's own, when it succeeds.
	Events []journal.Event
	// Settled, when set, names records of the owner's that the request
	// must not renew: they are held like another's (a finished work
	// package's task record, which keeps its state).
	Settled func(Lock) bool
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
// path, say) is refused like the key itself. Events that cannot be recorded
// refuse the acquisition (a *JournalError) and leave no lock taken.
func (m *Manager) Acquire(ctx context.Context, req Request) ([]Result, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	keys := slices.Clone(req.Keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	if len(keys) == 0 {
		return nil, errors.New("no keys to acquire")
	}
	// One event per key, its id in the record and the intent: the record
	// shows whether the change was made.
	plan := make([]intentEvent, 0, len(keys)+len(req.Events))
	for _, key := range keys {
		ev := m.event(req.Owner, cmp.Or(req.EventAction, journal.ActionAcquire), Lock{Key: key, TaskID: req.TaskID, Reason: req.Reason})
		ev.ID = journal.NewID()
		plan = append(plan, intentEvent{Event: ev, Proof: &proof{Key: key, EventID: ev.ID, Token: NewToken()}})
	}
	for _, ev := range req.Events {
		plan = append(plan, intentEvent{Event: ev})
	}
	ch, err := m.begin(ctx, plan)
	if err != nil {
		return nil, err
	}
	res, at, dirty, undone, err := m.acquire(ctx, req, keys, plan)
	if err != nil {
		if len(undone) > 0 {
			if rerr := ch.record(undone); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		ch.end(dirty)
		return nil, err
	}
	if err := ch.record(acquireEvents(plan, res, at)); err != nil {
		// Undo it; the intent stays for what could not be undone, which
		// the next Manager records.
		made := false
		for _, r := range res {
			if m.undo(context.WithoutCancel(ctx), r) != nil {
				made = true
			}
		}
		var je *JournalError
		if errors.As(err, &je) {
			je.Made = made
		}
		ch.end(true)
		return nil, err
	}
	ch.end(false)
	return res, nil
}

// acquire tries until every key is taken, the wait ends or a try fails
// otherwise; at is when the try that took them ran. dirty: a failed
// acquisition may have left a change behind (a renewal, or a lock its
// rollback could not release). undone are the events of the expired locks
// that failed tries took over and gave back, to be logged either way.
func (m *Manager) acquire(ctx context.Context, req Request, keys []string, plan []intentEvent) (_ []Result, at time.Time, dirty bool, undone []journal.Event, _ error) {
	deadline := time.Now().Add(req.Wait)
	backoff := 500 * time.Microsecond
	waiter, _ := m.Store.(Waiter)
	var sub *subscription
	defer func() { sub.stop() }()
	waitingOn := "" // the grant OnWait was last told of
	for {
		res, at, d, u, err := m.tryAcquire(ctx, req, keys, plan)
		dirty = dirty || d
		undone = append(undone, u...)
		var held *HeldError
		if err == nil || !errors.As(err, &held) || req.Wait <= 0 {
			return res, at, dirty, undone, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, at, dirty, undone, &TimeoutError{Held: held, Wait: req.Wait}
		}
		if on := fmt.Sprint(held.Lock.Key, "\x00", held.Lock.Fence, "\x00", held.Lock.Session); req.OnWait != nil && on != waitingOn {
			waitingOn = on
			req.OnWait(held.Lock)
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
					return nil, at, dirty, undone, ctx.Err()
				}
				// A store that cannot signal now is polled instead.
				waiter = nil
			} else {
				// An expiry is not signalled: wake for it (a millisecond
				// late, as stores may keep it to the millisecond).
				untilExpiry := held.Lock.ExpiresAt.Sub(m.now()) + time.Millisecond
				wait := min(m.waitPoll(), left, max(untilExpiry, time.Millisecond))
				if err := sub.wait(ctx, wait); err != nil {
					return nil, at, dirty, undone, err
				}
				continue
			}
		}
		// Short jittered polls: a waiter sees a release within a few ms;
		// a store far away (the git store) says how often to ask.
		if p, ok := m.Store.(Poller); ok {
			backoff = max(backoff, p.PollEvery())
		}
		sleep := min(backoff/2+rand.N(backoff), left)
		select {
		case <-ctx.Done():
			return nil, at, dirty, undone, ctx.Err()
		case <-time.After(sleep):
		}
		backoff = min(backoff*2, 8*time.Millisecond)
	}
}

// Poller is implemented by stores that each try costs a round trip to a
// remote: a --wait asks them no more often than every PollEvery.
type Poller interface {
	PollEvery() time.Duration
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

// tryAcquire makes one try; now is the time it read, inside the store's
// change (after a remote table was read): the time of the grant. On a store
// without transactions a failed try gives back what it took; undone are
// the events of the expired locks among them, which are gone from the
// store with their fences spent.
func (m *Manager) tryAcquire(ctx context.Context, req Request, keys []string, plan []intentEvent) (_ []Result, now time.Time, dirty bool, undone []journal.Event, _ error) {
	var done []Result
	atomic, maybe, err := m.apply(ctx, func(s Store) error {
		now = m.now()
		done = done[:0]
		for i, key := range keys {
			r, err := m.acquireOne(ctx, s, req, key, *plan[i].Proof, now)
			if err != nil {
				return fmt.Errorf("cannot lock %s: %w", key, err)
			}
			done = append(done, r)
			// Create first, then look for overlapping holders: two workers
			// racing for `src/**` and `src/a.py` both see each other and
			// both back off, never both win.
			if err := m.checkOverlap(ctx, s, key, req.Owner, now); err != nil {
				return fmt.Errorf("cannot lock %s: %w", key, err)
			}
		}
		return nil
	})
	if err == nil {
		return done, now, false, nil, nil
	}
	if atomic {
		// Nothing was changed, unless the store could not tell whether
		// its change went through: then the intent stays, and the next
		// Manager asks the store.
		return nil, now, maybe, nil, err
	}
	for _, r := range done {
		if m.undo(ctx, r) != nil {
			dirty = true
			continue
		}
		if r.TookOver != nil {
			undone = append(undone, m.undoneTakeover(req, r, now)...)
		}
	}
	return nil, now, dirty, undone, err
}

// undoneTakeover is what the log says of an expired lock a failed try took
// over and gave back: without it the expired holder's record vanishes from
// the store unexplained and the next grant's fence skips one.
func (m *Manager) undoneTakeover(req Request, r Result, at time.Time) []journal.Event {
	l := Lock{Key: r.Lock.Key, TaskID: req.TaskID, Reason: req.Reason}
	take := m.event(req.Owner, journal.ActionTakeover, l)
	take.Details = fmt.Sprintf("took over expired lock of %s (expired %s)",
		r.TookOver.Holder, r.TookOver.ExpiresAt.Format(time.RFC3339))
	give := m.event(req.Owner, journal.ActionRelease, l)
	give.Details = "given back: the acquisition it was part of was refused"
	evs := []journal.Event{take, give}
	for i := range evs {
		evs[i].ID = journal.NewID()
		evs[i].Timestamp = at.UTC()
		evs[i].Fence, evs[i].ExpiresAt = grantOf(r.Lock)
	}
	evs[1].ExpiresAt = nil // a release ends the grant, as Release logs it
	return evs
}

// apply runs fn on the store. On a Transactor it runs in one Transact, so
// that fn's changes are made all at once or not at all (atomic); then
// maybe reports an error after which the store cannot say whether the
// change was made (an UncertainError: the remote did not answer a push).
// On other stores each change fn makes is made at once.
func (m *Manager) apply(ctx context.Context, fn func(s Store) error) (atomic, maybe bool, err error) {
	tx, ok := m.Store.(Transactor)
	if !ok {
		return false, false, fn(m.Store)
	}
	err = tx.Transact(ctx, fn)
	return true, errors.As(err, new(*UncertainError)), err
}

// undo takes back one key of an acquisition: a fresh lock is released, a
// renewed one put back as it was.
func (m *Manager) undo(ctx context.Context, r Result) error {
	if r.Renewed {
		_, err := m.Store.Update(ctx, r.was)
		return err
	}
	return m.Store.Release(ctx, r.Lock.Key, r.Lock.Token)
}

func (m *Manager) acquireOne(ctx context.Context, s Store, req Request, key string, p proof, now time.Time) (Result, error) {
	audit := AuditOf(ctx)
	rec := Lock{
		Key: key, Holder: req.Owner.Holder, HolderType: req.Owner.HolderType,
		Session: req.Owner.Session, Action: req.Action, PID: m.PID, Host: m.Host,
		CreatedAt: now.UTC(), ExpiresAt: now.Add(req.TTL).UTC(), Reason: req.Reason,
		TaskID: req.TaskID, Token: p.Token, RequestID: audit.RequestID, TraceID: audit.TraceID, EventID: p.EventID,
	}
	setTask(&rec, req, now)
	stored, prev, err := s.Acquire(ctx, rec, now)
	if err == nil {
		return Result{Lock: stored, TookOver: prev}, nil
	}
	var held *HeldError
	if !errors.As(err, &held) || !held.Lock.OwnedBy(req.Owner) {
		return Result{}, err
	}
	if req.Settled != nil && req.Settled(held.Lock) {
		return Result{}, err
	}
	// Ours already: renew it, keeping its token and fence.
	cur := held.Lock
	cur.ExpiresAt = renewedExpiry(cur.ExpiresAt, now, req.TTL, req.ExactTTL)
	cur.EventID = p.EventID
	if req.Reason != "" && !req.KeepHeld {
		cur.Reason = req.Reason
	}
	if req.TaskID != "" && !req.KeepHeld {
		cur.TaskID = req.TaskID
		setTask(&cur, req, now)
	}
	updated, err := s.Update(ctx, cur)
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

func (m *Manager) checkOverlap(ctx context.Context, s Store, key string, me Owner, now time.Time) error {
	entries, err := m.overlapping(ctx, s, key)
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
			return &HeldError{Lock: e.Lock, Where: s.Where(e.Key)}
		}
	}
	return nil
}

// overlapping is s.Overlapping(key) and, across the line between
// branch locks and locks without a branch (PerBranch), the records of
// the other side whose paths overlap key's.
func (m *Manager) overlapping(ctx context.Context, s Store, key string) ([]Entry, error) {
	entries, err := s.Overlapping(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, inner, ok := lockkey.SplitBranch(key); ok {
		more, err := s.Overlapping(ctx, inner)
		if err != nil {
			return nil, err
		}
		return append(entries, more...), nil
	}
	if !m.PerBranch || !lockkey.IsPathLike(key) {
		return entries, nil
	}
	branched, err := s.InNamespace(ctx, lockkey.BranchNamespace)
	if err != nil {
		return nil, err
	}
	for _, e := range branched {
		_, inner, ok := lockkey.SplitBranch(e.Key)
		if e.Err != nil || !ok || lockkey.OverlapFoldCase(inner, key) {
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// acquireEvents are the events of a successful acquisition made at at:
// the planned ones, a renewal as a refresh and a takeover as such. They
// carry the time of the grant, not of the request: a request that waited
// for a release is logged after it.
func acquireEvents(plan []intentEvent, res []Result, at time.Time) []journal.Event {
	evs := make([]journal.Event, 0, len(plan))
	for i, r := range res {
		ev := plan[i].Event
		ev.Timestamp = at.UTC()
		ev.Fence, ev.ExpiresAt = grantOf(r.Lock)
		switch {
		case r.Renewed:
			ev.Action = journal.ActionRefresh
		case r.TookOver != nil:
			ev.Action = journal.ActionTakeover
			ev.Details = fmt.Sprintf("took over expired lock of %s (expired %s)",
				r.TookOver.Holder, r.TookOver.ExpiresAt.Format(time.RFC3339))
		}
		evs = append(evs, ev)
	}
	for _, ie := range plan[len(res):] {
		ev := ie.Event
		ev.Timestamp = at.UTC()
		evs = append(evs, ev)
	}
	return withGrantFences(evs)
}

// withGrantFences gives an event that comes with an acquisition and names
// one of its keys (a claim's claimed_package) the fence of that key's
// grant: it then falls among the key's events by fence, as the lock events
// do, which orders them across machines whose clocks disagree.
func withGrantFences(evs []journal.Event) []journal.Event {
	fences := map[string]uint64{}
	for _, ev := range evs {
		if ev.Fence != 0 && ev.Key != "" {
			fences[ev.Key] = ev.Fence
		}
	}
	for i := range evs {
		if evs[i].Fence == 0 {
			evs[i].Fence = fences[evs[i].Key]
		}
	}
	return evs
}

// grantOf is what an event says of the grant l: its fence and expiry.
func grantOf(l Lock) (uint64, *time.Time) {
	exp := l.ExpiresAt.UTC()
	return l.Fence, &exp
}

func (m *Manager) event(o Owner, action string, l Lock) journal.Event {
	ev := journal.Event{
		Worker: o.Holder, WorkerType: o.HolderType, Session: o.Session,
		Action: action, Key: l.Key, TaskID: l.TaskID, Details: l.Reason, Fence: l.Fence,
		Store: m.StoreName,
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

// ForceCheck judges a forced removal of a lock another owner holds before
// anything is removed: its error refuses the whole request. Who may force
// whose lock is the caller's policy (roles, worker types); the Manager
// only makes sure that the record judged is the record removed.
type ForceCheck func(Lock) error

// Release removes the owner's locks on keys. With force, another's lock is
// removed too and the removed record returned. A key that holds no lock is
// reported in Missing, not as an error: release is idempotent. Every key is
// looked at before any is released, so a refused key leaves all of them
// held. extra events are recorded with the releases when there is one.
func (m *Manager) Release(ctx context.Context, keys []string, me Owner, force bool, extra ...journal.Event) (ReleaseResult, error) {
	return m.release(ctx, keys, me, force, nil, nil, extra)
}

// Landed is a grant whose holder's work is on the branch the lock
// protects: its key and fence, and the commit that brought it there.
type Landed struct {
	Key     string
	Fence   uint64
	Commit  string
	Details string
}

// ReleaseLanded releases, as me, each grant of landed that still holds
// (the same key under the same fence: a lock taken anew since is left
// alone), whoever holds it; each is logged as lock_release naming its
// commit and details. A grant gone or replaced is reported in Missing.
func (m *Manager) ReleaseLanded(ctx context.Context, landed []Landed, me Owner) (ReleaseResult, error) {
	byKey := make(map[string]Landed, len(landed))
	keys := make([]string, 0, len(landed))
	for _, l := range landed {
		byKey[l.Key] = l
		keys = append(keys, l.Key)
	}
	return m.release(ctx, keys, me, true, nil, func(cur Lock, ev *journal.Event) bool {
		l := byKey[cur.Key]
		if cur.Fence != l.Fence {
			return false
		}
		ev.Commit, ev.Details = l.Commit, l.Details
		return true
	}, nil)
}

// ReleaseChecked is Release with force, each lock another owner holds
// judged by check first. The removal compares the record's token, so a
// lock taken by someone else after it was judged is not removed.
func (m *Manager) ReleaseChecked(ctx context.Context, keys []string, me Owner, check ForceCheck, extra ...journal.Event) (ReleaseResult, error) {
	return m.release(ctx, keys, me, true, check, nil, extra)
}

// release is Release; check, when set, judges each lock of another
// owner first; keep, when set, decides for each lock found whether to
// release it (false: reported missing) and completes its event.
func (m *Manager) release(ctx context.Context, keys []string, me Owner, force bool, check ForceCheck, keep func(Lock, *journal.Event) bool, extra []journal.Event) (ReleaseResult, error) {
	var out ReleaseResult
	var locks []Lock // Key only: a corrupt record, removed with force
	var plan []intentEvent
	for _, key := range keys {
		cur, err := m.Store.Get(ctx, key)
		if errors.Is(err, ErrNotFound) {
			out.Missing = append(out.Missing, key)
			continue
		}
		var corrupt *CorruptError
		if errors.As(err, &corrupt) && force {
			locks = append(locks, Lock{Key: key})
			plan = append(plan, intentEvent{Event: journal.Event{Worker: me.Holder, WorkerType: me.HolderType, Session: me.Session,
				Action: journal.ActionClear, Key: key, Details: "removed corrupt record"}, Proof: &proof{Key: key, Gone: true}})
			continue
		}
		if err != nil {
			return out, err
		}
		if !cur.OwnedBy(me) && !force {
			return out, &NotOwnerError{Lock: cur, Op: "release"}
		}
		if !cur.OwnedBy(me) && check != nil {
			if err := check(cur); err != nil {
				return out, err
			}
		}
		ev := m.event(me, journal.ActionRelease, cur)
		if !cur.OwnedBy(me) {
			ev.Details = fmt.Sprintf("forced: was held by %s (%s, session %s) since %s",
				cur.Holder, cur.HolderType, cur.Session, cur.CreatedAt.Format(time.RFC3339))
		}
		if keep != nil && !keep(cur, &ev) {
			out.Missing = append(out.Missing, key)
			continue
		}
		locks = append(locks, cur)
		plan = append(plan, intentEvent{Event: ev, Proof: &proof{Key: key, Token: cur.Token, Gone: true}})
	}
	if len(locks) == 0 {
		return out, nil
	}
	lasting := slices.ContainsFunc(locks, m.lasting)
	if err := m.removingLasting(ctx, lasting); err != nil {
		return out, err
	}
	for _, ev := range extra {
		plan = append(plan, intentEvent{Event: ev})
	}
	ch, err := m.begin(ctx, plan)
	if err != nil {
		return out, err
	}
	var evs []journal.Event
	var at time.Time // when the store made the change: the events' time
	missing := out.Missing
	atomic, maybe, err := m.apply(ctx, func(s Store) error {
		at = m.now().UTC()
		evs, out.Removed, out.Forced, out.Missing = nil, nil, nil, slices.Clone(missing)
		for i, l := range locks {
			if l.Token == "" { // corrupt
				if _, err := s.Remove(ctx, l.Key); err != nil && !errors.As(err, new(*CorruptError)) {
					return err
				}
			} else if err := s.Release(ctx, l.Key, l.Token); errors.Is(err, ErrNotFound) || errors.Is(err, ErrTokenMismatch) {
				// Gone since it was read (released by another, on merge
				// or by force; taken over after it expired): missing, as
				// when it was gone before, and no reason to keep the rest.
				out.Missing = append(out.Missing, l.Key)
				continue
			} else if err != nil {
				return fmt.Errorf("release %s: %w", l.Key, err)
			}
			out.Removed = append(out.Removed, l)
			if l.Token != "" && !l.OwnedBy(me) {
				out.Forced = append(out.Forced, l)
			}
			ev := plan[i].Event
			ev.Timestamp = at
			evs = append(evs, ev)
		}
		return nil
	})
	if err != nil {
		if atomic {
			evs, out.Removed, out.Forced = nil, nil, nil
			if maybe {
				ch.end(true)
				return out, err
			}
		}
		return out, ch.fail(evs, err)
	}
	for _, ie := range plan[len(locks):] {
		ev := ie.Event
		ev.Timestamp = at
		evs = append(evs, ev)
	}
	if err := ch.record(evs); err != nil {
		ch.end(true)
		return out, err
	}
	ch.end(false)
	return out, m.removingLasting(ctx, lasting)
}

// lasting reports whether l is kept for good (Manager.Lasting), or may
// have been: l is a record that could not be read (Key only).
func (m *Manager) lasting(l Lock) bool {
	return m.Lasting != nil && (l.Token == "" || m.Lasting(l))
}

// removingLasting calls LastingRemoved, when a lasting record is removed.
func (m *Manager) removingLasting(ctx context.Context, lasting bool) error {
	if !lasting || m.LastingRemoved == nil {
		return nil
	}
	return m.LastingRemoved(context.WithoutCancel(ctx))
}

// ReleaseResult lists what Release did.
type ReleaseResult struct {
	Removed []Lock
	Forced  []Lock // removed although held by someone else
	Missing []string
}

// Refresh extends the owner's locks to ttl from now (and a task sub-lock
// to taskTTL), never shortening one unless exact (the user named the TTL).
// Every key is looked at before any is refreshed.
func (m *Manager) Refresh(ctx context.Context, keys []string, me Owner, ttl, taskTTL time.Duration, exact bool) ([]Lock, error) {
	rs := make([]Renewal, len(keys))
	for i, k := range keys {
		rs[i] = Renewal{Key: k, TTL: ttl}
	}
	return m.refresh(ctx, rs, me, taskTTL, exact, false)
}

// Renewal is one key RefreshEach extends, and the lifetime it gets.
type Renewal struct {
	Key string
	TTL time.Duration
}

// RefreshEach extends the owner's locks of rs as Refresh does, each to its
// own TTL, in order up to the first it cannot refresh (not held, or
// another's): those before it are refreshed, and returned with the reason
// it stopped. The keys refreshed change together, in one change of the
// store (on the git store, one push for them all).
func (m *Manager) RefreshEach(ctx context.Context, rs []Renewal, me Owner, taskTTL time.Duration, exact bool) ([]Lock, error) {
	return m.refresh(ctx, rs, me, taskTTL, exact, true)
}

// refresh is Refresh and RefreshEach: with upTo, a key that cannot be
// refreshed stops the looking, not the change of the keys before it.
func (m *Manager) refresh(ctx context.Context, rs []Renewal, me Owner, taskTTL time.Duration, exact, upTo bool) ([]Lock, error) {
	now := m.now()
	var locks []Lock
	var plan []intentEvent
	var stopped error
	for _, r := range rs {
		cur, err := m.Store.Get(ctx, r.Key)
		switch {
		case errors.Is(err, ErrNotFound):
			err = &LostError{Key: r.Key, Op: "refresh"}
		case err == nil && !cur.OwnedBy(me):
			err = &NotOwnerError{Lock: cur, Op: "refresh"}
		}
		if err != nil && !upTo {
			return nil, err
		}
		if err != nil {
			stopped = err
			break
		}
		ev := m.event(me, journal.ActionRefresh, cur)
		ev.ID = journal.NewID()
		ev.Timestamp = now.UTC() // the expiry is counted from it
		cur.ExpiresAt = renewedExpiry(cur.ExpiresAt, now, r.TTL, exact)
		if cur.TaskID != "" && cur.TaskExpires != nil && taskTTL > 0 {
			exp := renewedExpiry(*cur.TaskExpires, now, taskTTL, exact)
			cur.TaskExpires = &exp
		}
		cur.EventID = ev.ID
		ev.Fence, ev.ExpiresAt = grantOf(cur)
		locks = append(locks, cur)
		plan = append(plan, intentEvent{Event: ev, Proof: &proof{Key: r.Key, EventID: ev.ID}})
	}
	if len(locks) == 0 {
		return nil, stopped
	}
	ch, err := m.begin(ctx, plan)
	if err != nil {
		return nil, err
	}
	var out []Lock
	var evs []journal.Event
	atomic, maybe, err := m.apply(ctx, func(s Store) error {
		out, evs = nil, nil
		for i, l := range locks {
			updated, err := s.Update(ctx, l)
			if err != nil {
				return fmt.Errorf("refresh %s: %w", l.Key, err)
			}
			out = append(out, updated)
			evs = append(evs, plan[i].Event)
		}
		return nil
	})
	if err != nil {
		if atomic {
			out, evs = nil, nil
			if maybe {
				ch.end(true)
				return out, err
			}
		}
		return out, ch.fail(evs, err)
	}
	if err := ch.record(evs); err != nil {
		ch.end(true)
		return out, err
	}
	ch.end(false)
	return out, stopped
}

// Conclusion is one change that ends the owner's hold of Key in another
// way than a release: Apply rewrites its record (kept under its token and
// fence: a successor that took it over is never overwritten), and the
// Release keys, the owner's, are released with it.
type Conclusion struct {
	Key     string
	Owner   Owner
	Apply   func(*Lock)
	Release []string
	Events  []journal.Event // recorded with the change
}

// conclusion is what Conclude decided before it changes anything: Key's
// rewritten record, the owner's locks to release, the Release keys that
// are no longer the owner's, and the events the change records.
type conclusion struct {
	next    Lock
	rel     []Lock
	missing []string
	plan    []intentEvent
}

// prepareConclusion reads Key and the Release keys and decides c. When
// reading a Release key fails, it returns what it decided so far beside
// the error: the keys already found missing are reported all the same.
func (m *Manager) prepareConclusion(ctx context.Context, c Conclusion) (*conclusion, error) {
	if len(c.Events) == 0 {
		return nil, errors.New("conclude: no event names the change")
	}
	cur, err := m.Store.Get(ctx, c.Key)
	if errors.Is(err, ErrNotFound) {
		return nil, &LostError{Key: c.Key, Op: "conclude"}
	}
	if err != nil {
		return nil, err
	}
	if !cur.OwnedBy(c.Owner) {
		return nil, &NotOwnerError{Lock: cur, Op: "conclude"}
	}
	p := &conclusion{next: cur}
	c.Apply(&p.next)
	p.next.Key, p.next.Token, p.next.Fence = cur.Key, cur.Token, cur.Fence
	main := journal.NewID()
	p.next.EventID = main
	p.plan = []intentEvent{}
	for i, ev := range c.Events {
		if i == 0 {
			ev.ID = main
			p.plan = append(p.plan, intentEvent{Event: ev, Proof: &proof{Key: c.Key, EventID: main}})
			continue
		}
		p.plan = append(p.plan, intentEvent{Event: ev})
	}
	for _, key := range c.Release {
		l, err := m.Store.Get(ctx, key)
		if errors.Is(err, ErrNotFound) {
			p.missing = append(p.missing, key)
			continue
		}
		if err != nil {
			return p, err
		}
		if !l.OwnedBy(c.Owner) {
			// Lapsed and taken by another since: not the owner's to give
			// back, and no reason to refuse the conclusion.
			p.missing = append(p.missing, key)
			continue
		}
		p.rel = append(p.rel, l)
		p.plan = append(p.plan, intentEvent{Event: m.event(c.Owner, journal.ActionRelease, l), Proof: &proof{Key: key, Token: l.Token, Gone: true}})
	}
	return p, nil
}

// Conclude makes c: Key's record rewritten and the Release keys released,
// in one change on a Transactor, one after the other elsewhere (the
// rewrite first). Key must be the owner's: another's is a
// *NotOwnerError, a missing one a *LostError, and one taken over since
// the caller read it ErrTokenMismatch.
func (m *Manager) Conclude(ctx context.Context, c Conclusion) (Lock, ReleaseResult, error) {
	var out ReleaseResult
	p, err := m.prepareConclusion(ctx, c)
	if p != nil {
		out.Missing = p.missing
	}
	if err != nil {
		return Lock{}, out, err
	}
	next, rel, plan := p.next, p.rel, p.plan
	ch, err := m.begin(ctx, plan)
	if err != nil {
		return Lock{}, out, err
	}
	var updated Lock
	var at time.Time
	missing := out.Missing
	gone := map[string]bool{}
	atomic, maybe, err := m.apply(ctx, func(s Store) error {
		at = m.now().UTC()
		out.Removed, out.Missing = nil, slices.Clone(missing)
		clear(gone)
		u, err := s.Update(ctx, next)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Key, err)
		}
		updated = u
		for _, l := range rel {
			err := s.Release(ctx, l.Key, l.Token)
			if errors.Is(err, ErrNotFound) || errors.Is(err, ErrTokenMismatch) {
				// Gone since it was read (an expired lock another's claim
				// took over, and gave back or kept): not the owner's to
				// give back any more, and no reason to undo the rest.
				out.Missing, gone[l.Key] = append(out.Missing, l.Key), true
				continue
			}
			if err != nil {
				return fmt.Errorf("release %s: %w", l.Key, err)
			}
			out.Removed = append(out.Removed, l)
		}
		return nil
	})
	evs := make([]journal.Event, 0, len(plan))
	for i, ie := range plan {
		if i >= len(c.Events) && gone[rel[i-len(c.Events)].Key] {
			continue
		}
		ev := ie.Event
		ev.Timestamp = at
		evs = append(evs, ev)
	}
	if err != nil {
		if atomic {
			out.Removed = nil
			if maybe {
				ch.end(true)
				return Lock{}, out, err
			}
			ch.end(false)
			return Lock{}, out, err
		}
		if updated.Key == "" {
			ch.end(false) // nothing was changed
			return Lock{}, out, err
		}
		// The rewrite was made, the first releases too: their events.
		return updated, out, ch.fail(evs[:len(c.Events)+len(out.Removed)], err)
	}
	if err := ch.record(evs); err != nil {
		ch.end(true)
		return updated, out, err
	}
	ch.end(false)
	return updated, out, nil
}

// Clear removes whatever lock is on key (forced, logged) and returns it.
func (m *Manager) Clear(ctx context.Context, key string, me Owner) (Lock, error) {
	return m.ClearChecked(ctx, key, me, nil)
}

// ClearChecked is Clear, a lock another owner holds judged by check first
// (an unreadable record, which names no owner, is not). With a check the
// removal compares the record's token: a lock taken after it was judged
// is left alone, and the clear fails as a lock that changed.
func (m *Manager) ClearChecked(ctx context.Context, key string, me Owner, check ForceCheck) (Lock, error) {
	cur, err := m.Store.Get(ctx, key)
	var corrupt *CorruptError
	if err != nil && !errors.As(err, &corrupt) {
		return Lock{}, err
	}
	judged := check != nil && corrupt == nil
	if judged && !cur.OwnedBy(me) {
		if err := check(cur); err != nil {
			return Lock{}, err
		}
	}
	ev := m.event(me, journal.ActionClear, Lock{Key: key, Fence: cur.Fence})
	if corrupt != nil {
		ev.Details = "removed corrupt record"
	} else {
		ev.Details = fmt.Sprintf("cleared lock of %s (%s, session %s) created %s",
			cur.Holder, cur.HolderType, cur.Session, cur.CreatedAt.Format(time.RFC3339))
	}
	lasting := corrupt != nil && m.Lasting != nil || err == nil && m.lasting(cur)
	if err := m.removingLasting(ctx, lasting); err != nil {
		return Lock{}, err
	}
	ch, err := m.begin(ctx, []intentEvent{{Event: ev, Proof: &proof{Key: key, Token: cur.Token, Gone: true}}})
	if err != nil {
		return Lock{}, err
	}
	ev.Timestamp = m.now().UTC()
	var removed Lock
	if judged {
		if err = m.Store.Release(ctx, key, cur.Token); err != nil {
			return Lock{}, ch.fail(nil, fmt.Errorf("clear %s: the lock changed while it was cleared; nothing was removed: %w", key, err))
		}
		removed = cur
	} else if removed, err = m.Store.Remove(ctx, key); err != nil && !errors.As(err, &corrupt) {
		return Lock{}, ch.fail(nil, err)
	}
	if rerr := ch.record([]journal.Event{ev}); rerr != nil {
		ch.end(true)
		return removed, rerr
	}
	ch.end(false)
	if lerr := m.removingLasting(ctx, lasting); lerr != nil {
		return removed, errors.Join(err, lerr)
	}
	return removed, err
}

// KeyState is whether a key is free, held by the asker, or held by
// someone else.
type KeyState string

// The states Check reports (`lock check --json`, the check_locks tool).
const (
	StateFree KeyState = "free"
	StateMine KeyState = "mine"
	StateHeld KeyState = "held"
)

// Status is one key's answer to Check.
type Status struct {
	Key   string   `json:"key"`
	State KeyState `json:"state"`
	// Locks are the live locks of others on or overlapping the key, or the
	// owner's own lock when State is "mine".
	Locks []Lock `json:"locks,omitempty"`
}

// Check reports, for each key, whether it is free, held by me, or held by
// someone else (directly or through an overlapping lock).
func (m *Manager) Check(ctx context.Context, keys []string, me Owner) ([]Status, error) {
	now := m.now()
	if sk, ok := m.Store.(interface{ ClockSkew() time.Duration }); ok {
		// Held for as long as the store would refuse to take it over.
		now = now.Add(-sk.ClockSkew())
	}
	var out []Status
	for _, key := range keys {
		entries, err := m.overlapping(ctx, m.Store, key)
		if err != nil {
			return nil, err
		}
		st := Status{Key: key, State: StateFree}
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
			st.State = StateHeld
			st.Locks = append(st.Locks, e.Lock)
		}
		if st.State == StateFree && len(mine) > 0 {
			st.State, st.Locks = StateMine, mine
		}
		out = append(out, st)
	}
	return out, nil
}
