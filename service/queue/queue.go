package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// A work package's state is its task record (task:ID) in the clone's lock
// store, changed in the same step as the locks that go with it: no record
// (or a claim that expired) is ready; a live record a claim made is
// claimed; a record rewritten by `done` stays, never expiring, as done or
// failed. The file lists the packages; the store says where each stands,
// so editing the file loses no state. docs/queue.md describes the queue.

// PackageState is where a work package stands.
type PackageState string

// The states of a work package.
const (
	PackageReady   PackageState = "ready"
	PackageClaimed PackageState = "claimed"
	PackageDone    PackageState = "done"
	PackageFailed  PackageState = "failed"
)

// PackageStatus is one package's state and what it waits for.
type PackageStatus struct {
	ID       string       `json:"id"`
	Title    string       `json:"title,omitempty"`
	State    PackageState `json:"state"`
	Priority int          `json:"priority"`
	// Who claimed or finished it, and the task record's fence.
	Holder     string `json:"holder,omitempty"`
	HolderType string `json:"holder_type,omitempty"`
	Session    string `json:"session,omitempty"`
	Fence      uint64 `json:"fence,omitempty"`
	// A claim: since when, until when; Expired when its claimer let it
	// lapse (the next claim takes it over).
	Since   *time.Time `json:"since,omitempty"`
	Until   *time.Time `json:"until,omitempty"`
	Expired bool       `json:"expired,omitempty"`
	// A finished package: when, the commit named (done), the reason (failed).
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	Commit     string     `json:"commit,omitempty"`
	Reason     string     `json:"reason,omitempty"`
	// What a package not yet claimed waits for: dependencies not done,
	// and (with locks asked for) locks of others on its keys.
	WaitsFor []string           `json:"waits_for,omitempty"`
	HeldBy   []session.LockView `json:"held_by,omitempty"`
	// Unreadable: its task record could not be read; never handed out.
	Unreadable string `json:"unreadable,omitempty"`

	held    *locks.Lock         // the first of HeldBy
	corrupt *locks.CorruptError // why it is Unreadable, when the store says
	wp      *config.WorkPackage // its entry in the file
}

// Corrupt is the unreadable task record of an Unreadable package (nil when
// the store did not say which record): its hint names how to clear it.
func (s *PackageStatus) Corrupt() *locks.CorruptError { return s.corrupt }

// Queue is the state of every package of a file, in claim order.
type Queue struct {
	Path     string               `json:"path"`
	Packages []PackageStatus      `json:"packages"`
	Counts   map[PackageState]int `json:"counts"`
	byID     map[string]*PackageStatus
}

// Drained reports whether every package is done or failed: nothing will
// become ready without a retry.
func (q *Queue) Drained() bool {
	return q.Counts[PackageDone]+q.Counts[PackageFailed] == len(q.Packages)
}

// status returns package id's status.
func (q *Queue) status(id string) (*PackageStatus, bool) {
	s, ok := q.byID[id]
	return s, ok
}

// Packages reads the state of every package of wps from the store. With
// withLocks, a ready package also names the live locks of others in its
// way, from the same one listing of the store.
func (e *Handler) Packages(ctx context.Context, wps *config.WorkPackages, withLocks bool) (*Queue, error) {
	if !withLocks {
		entries, err := e.Store.InNamespace(ctx, "task")
		if err != nil {
			return nil, fmt.Errorf("read the work packages' state: %w", err)
		}
		return e.queueOf(wps, entries, nil, nil, nil)
	}
	entries, err := e.Store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the work packages' state and the locks: %w", err)
	}
	return e.queueOf(wps, entries, entries, func(l locks.Lock) bool { return l.OwnedBy(e.Me) }, e.packageKeys)
}

// Listing computes the queue of one work packages file from
// listings of the store its caller read already: the board lists the
// store once a frame and shows the queue from that listing. Each
// package's canonical keys are worked out once, at the first listing (a
// symbolic link changed later is seen when the file is read again). A
// ready package names the live locks in its way whoever holds them, the
// caller's too: it is everyone's view, not a claim.
type Listing struct {
	e    *Handler
	wps  *config.WorkPackages
	keys map[*config.WorkPackage][]lockkey.Key
}

// NewListing returns the queue of wps as listings of the store show it.
func (e *Handler) NewListing(wps *config.WorkPackages) *Listing {
	return &Listing{e: e, wps: wps, keys: map[*config.WorkPackage][]lockkey.Key{}}
}

// Of computes the state of every package from entries, a listing of the
// whole store.
func (p *Listing) Of(entries []locks.Entry) (*Queue, error) {
	return p.e.queueOf(p.wps, entries, entries, nil, func(wp *config.WorkPackage) ([]lockkey.Key, error) {
		if k, ok := p.keys[wp]; ok {
			return k, nil
		}
		k, err := p.e.packageKeys(wp)
		if err == nil {
			p.keys[wp] = k
		}
		return k, err
	})
}

// queueOf computes the queue from the task records among recs and, when
// all is not nil, the locks in ready packages' way among all (on the keys
// keysOf gives), leaving out those mine reports (nil: none).
func (e *Handler) queueOf(wps *config.WorkPackages, recs, all []locks.Entry, mine func(locks.Lock) bool,
	keysOf func(*config.WorkPackage) ([]lockkey.Key, error)) (*Queue, error) {
	tasks := make(map[string]locks.Entry)
	for _, en := range recs {
		// An unreadable record whose key is known still says its package
		// cannot be handed out.
		if lockkey.Namespace(en.Key) == "task" {
			tasks[en.Key] = en
		}
	}
	now := e.takeoverNow()
	// Every state is counted, none present or not: --json shows all four.
	q := &Queue{Path: wps.Path, Counts: map[PackageState]int{PackageReady: 0, PackageClaimed: 0, PackageDone: 0, PackageFailed: 0},
		byID: map[string]*PackageStatus{}}
	for _, wp := range wps.ClaimOrder() {
		s := PackageStatus{ID: wp.ID, Title: wp.Title, Priority: wp.Priority, State: PackageReady, wp: wp}
		if en, ok := tasks[lockkey.TaskKey(wp.ID)]; ok {
			statusOf(&s, en, now)
		}
		q.Packages = append(q.Packages, s)
	}
	for i := range q.Packages {
		q.byID[q.Packages[i].ID] = &q.Packages[i]
	}
	for i := range q.Packages {
		s := &q.Packages[i]
		q.Counts[s.State]++
		if s.State != PackageReady {
			continue
		}
		for _, dep := range s.wp.DependsOn {
			if d, ok := q.byID[dep]; !ok || d.State != PackageDone {
				s.WaitsFor = append(s.WaitsFor, dep)
			}
		}
	}
	if all != nil {
		if err := heldBy(q, all, now, mine, keysOf); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// takeoverNow is the time expiries are judged against as the store judges
// a takeover: the git store counts a lock held for locks.git.clock_skew
// past its expiry, so a claim that expired within it is not ready yet, and
// a lock of another in a package's way still is.
func (e *Handler) takeoverNow() time.Time {
	now := e.Now()
	if sk, ok := e.Store.(interface{ ClockSkew() time.Duration }); ok {
		now = now.Add(-sk.ClockSkew())
	}
	return now
}

func statusOf(s *PackageStatus, en locks.Entry, now time.Time) {
	if en.Err != nil {
		// Never free: who holds it cannot be told.
		s.State, s.Unreadable = PackageClaimed, en.Err.Error()
		errors.As(en.Err, &s.corrupt)
		return
	}
	l := en.Lock
	s.Holder, s.HolderType, s.Session, s.Fence = l.Holder, l.HolderType, l.Session, l.Fence
	switch l.Action {
	case session.DoneAction, session.FailedAction:
		s.State = PackageDone
		if l.Action == session.FailedAction {
			s.State, s.Reason = PackageFailed, l.Reason
		}
		s.FinishedAt, s.Commit = l.FinishedAt, l.Commit
	default:
		since, until := l.CreatedAt, l.ExpiresAt
		s.Since, s.Until = &since, &until
		s.State = PackageClaimed
		if l.Expired(now) {
			s.State, s.Expired = PackageReady, true
		}
	}
}

// heldBy names, for each ready package, the live locks on its keys (or
// overlapping them) among all but those mine reports. Only the records on
// the ready packages' keys are indexed, not the whole listing.
func heldBy(q *Queue, all []locks.Entry, now time.Time, mine func(locks.Lock) bool, keysOf func(*config.WorkPackage) ([]lockkey.Key, error)) error {
	type ready struct {
		s    *PackageStatus
		keys []lockkey.Key
	}
	var rs []ready
	byKey := map[string][]int{} // a ready package's key → the records on it, as indices into all
	for i := range q.Packages {
		s := &q.Packages[i]
		if s.State != PackageReady {
			continue
		}
		keys, err := keysOf(s.wp)
		if err != nil {
			return err
		}
		rs = append(rs, ready{s, keys})
		for _, k := range keys {
			byKey[lockkey.FoldCase(k.Canonical)] = nil
		}
	}
	if len(rs) == 0 {
		return nil
	}
	var patterns []int
	for i, en := range all {
		if en.Err != nil || mine != nil && mine(en.Lock) || en.Expired(now) || session.IsBookkeeping(en.Lock) {
			continue
		}
		id := lockkey.FoldCase(en.Key)
		if on, ok := byKey[id]; ok {
			byKey[id] = append(on, i)
		}
		if lockkey.IsPattern(en.Key) {
			patterns = append(patterns, i)
		}
	}
	for _, r := range rs {
		s := r.s
		seen := map[string]bool{}
		add := func(i int) {
			l := all[i].Lock
			if !seen[l.Key] {
				seen[l.Key] = true
				s.HeldBy = append(s.HeldBy, session.ViewOf(l))
				if s.held == nil {
					s.held = &l
				}
			}
		}
		for _, k := range r.keys {
			for _, i := range byKey[lockkey.FoldCase(k.Canonical)] {
				add(i)
			}
			for _, i := range patterns {
				if lockkey.OverlapFoldCase(all[i].Key, k.Canonical) {
					add(i)
				}
			}
		}
	}
	return nil
}

// PackageStateError refuses a change of a package its state does not
// allow: a claim of one done, failed or waiting for dependencies; a done
// of one already finished.
type PackageStateError struct {
	Status PackageStatus
	Op     string
}

// PackageRefused marks the error as a refusal of the package's state.
func (*PackageStateError) PackageRefused() {}

func (e *PackageStateError) Error() string {
	s := e.Status
	switch {
	case s.State == PackageDone:
		return fmt.Sprintf("%s %s: the package is done: finished by %s at %s%s", e.Op, s.ID, s.Holder, stampOf(s.FinishedAt), commitNote(s.Commit))
	case s.State == PackageFailed:
		return fmt.Sprintf("%s %s: the package failed (%s, by %s at %s): `lockgate retry %s` makes it ready again", e.Op, s.ID, s.Reason, s.Holder, stampOf(s.FinishedAt), s.ID)
	case len(s.WaitsFor) > 0:
		return fmt.Sprintf("%s %s: the package waits for %s to be done", e.Op, s.ID, strings.Join(s.WaitsFor, ", "))
	case s.State == PackageClaimed:
		return fmt.Sprintf("%s %s: the package is claimed by %s until %s", e.Op, s.ID, s.Holder, stampOf(s.Until))
	}
	return fmt.Sprintf("%s %s: the package is %s", e.Op, s.ID, s.State)
}

func stampOf(t *time.Time) string {
	if t == nil {
		return "?"
	}
	return t.UTC().Format(time.RFC3339)
}

func commitNote(c string) string {
	if c == "" {
		return ""
	}
	return " (commit " + c + ")"
}

// nextClaim is what a claim of the next package found: the package and
// its locks, or, with none claimed, the queue as it stands (Drained: every
// package is done or failed) and the file it was read from.
type nextClaim struct {
	Package  *config.WorkPackage
	Results  []locks.Result
	Packages *config.WorkPackages
	Queue    *Queue
	Drained  bool
}

// claimLockKey is the global claim lock's key: who holds it is choosing
// the next package (config.LocksConfig.GlobalClaimLock).
const claimLockKey = "claim"

// claimNext claims the highest-priority ready package (file order among
// equals) of the work packages file whose dependencies are all done and
// whose locks are all free, holding the global claim lock meanwhile when
// it is on (config.LocksConfig.GlobalClaimLock). A package done is never
// handed out again: its task record stays, and a claim takes the task key
// only where no finished record holds it (locks.Request.Settled). The
// claim index finds it without reading the whole queue where it can;
// with none to claim it returns the queue, read whole: Drained, or a
// *NoFreePackageError naming what waits.
func (e *Handler) claimNext(ctx context.Context, file string, o Claim) (nextClaim, error) {
	if e.Cfg.Locks.GlobalClaimLock() {
		res, err := e.Mgr.Acquire(ctx, locks.Request{Keys: []string{claimLockKey}, Owner: e.Me, TTL: time.Minute,
			Action: "claim", Reason: "choosing the next work package", Wait: max(o.Wait, 30*time.Second)})
		if err != nil {
			return nextClaim{}, err
		}
		if !res[0].Renewed { // a claim lock held before is not ours to give back
			defer func() {
				_, _ = e.Mgr.Release(context.WithoutCancel(ctx), []string{claimLockKey}, e.Me, false)
			}()
		}
	}
	epoch := ""
	if e.QueueIndexed() {
		next, found, err := e.claimIndexed(ctx, file, o)
		if found || err != nil {
			return next, err
		}
		// Read before the queue: the mark counted from it is of this epoch.
		if epoch, err = e.queueEpoch(ctx); err != nil {
			return nextClaim{}, err
		}
	}
	wps, err := e.LoadPackages(file)
	if err != nil {
		return nextClaim{}, err
	}
	if len(wps.Packages) == 0 {
		return nextClaim{Packages: wps}, session.Usagef("claim: %s has no work packages", wps.Path)
	}
	// One read of the locks names the packages whose locks others hold:
	// they are not tried (on the git store each try is a push).
	q, err := e.Packages(ctx, wps, true)
	if err != nil {
		return nextClaim{Packages: wps}, err
	}
	if epoch != "" {
		e.markFromQueue(file, epoch, q)
	}
	none := &NoFreePackageError{Path: wps.Path}
	for i := range q.Packages {
		s := &q.Packages[i]
		if s.Unreadable != "" {
			none.Unreadable = append(none.Unreadable, *s)
			continue
		}
		if s.State != PackageReady {
			continue
		}
		if len(s.WaitsFor) > 0 {
			none.Waiting = append(none.Waiting, *s)
			continue
		}
		if s.held != nil {
			none.Blocked = append(none.Blocked, *s)
			none.Last, none.Err = s.ID, &locks.HeldError{Lock: *s.held, Where: e.Store.Where(s.held.Key)}
			continue
		}
		wp, _ := wps.Find(s.ID)
		res, err := e.claim(ctx, wp, Claim{TTL: o.TTL})
		var finished *PackageStateError
		if errors.As(err, &finished) {
			// Claimed and finished by another since the queue was read
			// (without the global claim lock the choice and the claim
			// are two steps): passed over, as it stands now.
			st := finished.Status
			st.Title, st.Priority, st.wp = s.Title, s.Priority, s.wp
			q.Counts[s.State]--
			*s = st
			q.Counts[s.State]++
			continue
		}
		var held *locks.HeldError
		var corrupt *locks.CorruptError
		if errors.As(err, &held) || errors.As(err, &corrupt) {
			if held != nil {
				s.HeldBy = append(s.HeldBy, session.ViewOf(held.Lock))
			}
			none.Blocked = append(none.Blocked, *s)
			none.Last, none.Err = wp.ID, err
			continue
		}
		if err != nil {
			return nextClaim{Packages: wps}, err
		}
		return nextClaim{Package: wp, Results: res, Packages: wps, Queue: q}, nil
	}
	if q.Drained() {
		return nextClaim{Packages: wps, Queue: q, Drained: true}, nil
	}
	// Packages wait for failed ones and nothing else is left: waiting
	// (exit 4) would wait for ever.
	if stuck := unfinishable(wps, q); stuck != nil {
		return nextClaim{Packages: wps, Queue: q}, &QueueStuckError{Path: wps.Path, Packages: stuck}
	}
	none.Claimed = q.Counts[PackageClaimed] - len(none.Unreadable)
	return nextClaim{Packages: wps, Queue: q}, none
}

// ClaimRequest is a claim of package ID, or without it of the next ready
// one; TTL and Wait are as Claim says (Wait only waits for the global
// claim lock without ID).
type ClaimRequest struct {
	PackageRequest
	TTL, Wait time.Duration
}

// Claimed is what a claim took: the package and its locks; or, with none
// claimed because every package is done or failed (Drained), the queue
// as it stands.
type Claimed struct {
	ID, Title string
	Locks     []locks.Result
	Drained   bool
	Queue     *Queue
}

// ClaimWork claims package r.ID (claimPackage), or without it the next
// ready one (claimNext).
// Tried again while other writers keep winning the store (throughContention).
func (e *Handler) ClaimWork(ctx context.Context, r ClaimRequest) (Claimed, error) {
	return retried(ctx, func() (Claimed, error) { return e.claimWork(ctx, r) })
}

// claimWork is ClaimWork, once.
func (e *Handler) claimWork(ctx context.Context, r ClaimRequest) (Claimed, error) {
	o := Claim{TTL: r.TTL, Wait: r.Wait}
	if r.ID != "" {
		wps, err := e.LoadPackages(r.Packages)
		if err != nil {
			return Claimed{}, err
		}
		wp, ok := wps.Find(r.ID)
		if !ok {
			return Claimed{}, session.Usagef("no work package %q in %s", r.ID, wps.Path)
		}
		res, err := e.claimPackage(ctx, wps, wp, o)
		return Claimed{ID: wp.ID, Title: wp.Title, Locks: res}, err
	}
	next, err := e.claimNext(ctx, r.Packages, o)
	c := Claimed{Locks: next.Results, Drained: next.Drained, Queue: next.Queue}
	if next.Package != nil {
		c.ID, c.Title = next.Package.ID, next.Package.Title
	}
	return c, err
}

// claimPackage claims wp, refused when it is done, failed or waits for
// dependencies.
func (e *Handler) claimPackage(ctx context.Context, wps *config.WorkPackages, wp *config.WorkPackage, o Claim) ([]locks.Result, error) {
	q, err := e.Packages(ctx, wps, false)
	if err != nil {
		return nil, err
	}
	s, _ := q.status(wp.ID)
	if s.State == PackageDone || s.State == PackageFailed || len(s.WaitsFor) > 0 {
		return nil, &PackageStateError{Status: *s, Op: "claim"}
	}
	return e.claim(ctx, wp, o)
}

// claim takes wp's task record and locks; a claim that expired is taken
// over, and that is logged naming the session it was taken from.
func (e *Handler) claim(ctx context.Context, wp *config.WorkPackage, o Claim) ([]locks.Result, error) {
	res, err := e.claimLocks(ctx, wp, o)
	if err != nil {
		var held *locks.HeldError
		if errors.As(err, &held) && session.IsFinishedPackage(held.Lock) {
			// Finished since the state was read.
			st := PackageStatus{ID: wp.ID}
			statusOf(&st, locks.Entry{Lock: held.Lock}, e.Now())
			return nil, &PackageStateError{Status: st, Op: "claim"}
		}
		return nil, err
	}
	task := lockkey.TaskKey(wp.ID)
	for _, r := range res {
		if r.Lock.Key == task && r.TookOver != nil {
			d := fmt.Sprintf("took over the claim of %s (session %s), which expired at %s", r.TookOver.Holder, r.TookOver.Session, r.TookOver.ExpiresAt.UTC().Format(time.RFC3339))
			if err := e.Mgr.Record(ctx, journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
				Action: journal.ActionPackageTakeover, Key: task, TaskID: wp.ID, Fence: r.Lock.Fence, Details: d}); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// Finish says how a package ended: done at Commit (a revision; HEAD when
// empty), or failed for Failed.
type Finish struct {
	Commit string
	Failed string
}

// PackageRequest names one package of a work packages file.
type PackageRequest struct {
	// Packages is the work packages file ("": work_packages of the config).
	Packages string
	ID       string
}

// FinishRequest marks a claimed package done or failed.
type FinishRequest struct {
	PackageRequest
	Finish
}

// FinishPackage marks work package id done (or failed) and releases the
// locks its claim took, in one change: its task record stays as the
// package's state. Only the claimer may, and only while its claim is the
// record's: a claim taken over after it expired is not the loser's to
// finish (the record's token no longer matches).
// Tried again while other writers keep winning the store (throughContention).
func (e *Handler) FinishPackage(ctx context.Context, r FinishRequest) (Finished, error) {
	return retried(ctx, func() (Finished, error) { return e.finishPackage(ctx, r) })
}

// finishPackage is FinishPackage, once.
func (e *Handler) finishPackage(ctx context.Context, r FinishRequest) (Finished, error) {
	how := r.Finish
	c, claimed, err := e.findClaim(ctx, r.PackageRequest, "done")
	if err != nil {
		return Finished{}, err
	}
	wp, keys, taskKey, cur := c.wp, c.keys, c.taskKey, c.task
	if !claimed {
		return Finished{}, session.Usagef("done %s: the package is not claimed (no %s lock): `lockgate claim %s` first", wp.ID, taskKey, wp.ID)
	}
	if !cur.OwnedBy(e.Me) {
		return Finished{}, &locks.NotOwnerError{Lock: cur, Op: "finish"}
	}
	commit := ""
	if how.Failed == "" {
		rev := how.Commit
		if rev == "" {
			rev = "HEAD"
		}
		out, err := gitexec.RepoOutput(ctx, e.repo(), "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
		switch {
		case err == nil:
			commit = strings.TrimSpace(string(out))
		case how.Commit != "":
			return Finished{}, session.Usagef("done %s: --commit %s names no commit", wp.ID, how.Commit)
		}
		// A branch without a commit yet: done at no commit.
	}
	var f Finished
	give, err := e.claimedKeys(ctx, c, session.Canonicals(keys), &f)
	if err != nil {
		return Finished{}, err
	}
	now := e.Now().UTC()
	ev := journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
		Action: journal.ActionDone, Key: taskKey, TaskID: wp.ID, Fence: cur.Fence, Details: wp.Title}
	if commit != "" {
		// The commit as a field, for verify; in the details too, as the
		// log has always shown it.
		ev.Commit, ev.Details = commit, "commit "+commit+": "+wp.Title
	}
	if how.Failed != "" {
		ev.Action, ev.Details = journal.ActionPackageFailed, how.Failed
	}
	rec, rel, err := e.Mgr.Conclude(ctx, locks.Conclusion{
		Key: taskKey, Owner: e.Me, Release: give, Events: []journal.Event{ev},
		Apply: func(l *locks.Lock) {
			l.Action, l.ExpiresAt, l.FinishedAt, l.Commit = session.DoneAction, locks.Never, &now, commit
			l.TaskAcquired, l.TaskExpires = nil, nil
			if how.Failed != "" {
				l.Action, l.Reason = session.FailedAction, how.Failed
			}
		},
	})
	if errors.Is(err, locks.ErrTokenMismatch) {
		return Finished{}, &locks.LostError{Key: taskKey, Op: "done " + wp.ID + ": the claim was taken over after it expired, and"}
	}
	f.ReleaseResult, f.Record = rel, rec
	return f, err
}

// packageClaim is a work package as done and release-package find it:
// its file (in claim order, or without one decoded whole), its keys and
// its task record.
type packageClaim struct {
	order   *config.ClaimOrder
	wps     *config.WorkPackages
	wp      *config.WorkPackage
	keys    []lockkey.Key
	taskKey string
	task    locks.Lock
}

// findClaim finds the package r names, through the claim order where it
// can, and its task record; claimed is false when it has none (each
// command says so its own way). A package done or failed already is
// refused for op.
func (e *Handler) findClaim(ctx context.Context, r PackageRequest, op string) (c packageClaim, claimed bool, err error) {
	if order, err := e.claimOrder(r.Packages); err == nil {
		if wp, _, ok := order.Find(r.ID); ok {
			c.order, c.wp = order, wp
		}
	}
	if c.wp == nil { // the whole file says why not
		if c.wps, c.wp, err = e.findPackage(ctx, r.Packages, r.ID); err != nil {
			return c, false, err
		}
	}
	if c.keys, err = e.packageKeys(c.wp); err != nil {
		return c, false, err
	}
	c.taskKey = lockkey.TaskKey(c.wp.ID)
	c.task, err = e.Store.Get(ctx, c.taskKey)
	if errors.Is(err, locks.ErrNotFound) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	if session.IsFinishedPackage(c.task) {
		st := PackageStatus{ID: c.wp.ID}
		statusOf(&st, locks.Entry{Lock: c.task}, e.Now())
		return c, false, &PackageStateError{Status: st, Op: op}
	}
	return c, true, nil
}

// ReleasePackage gives work package id back: its task record and the
// locks its claim took are released, and it is ready again.
// Tried again while other writers keep winning the store (throughContention).
func (e *Handler) ReleasePackage(ctx context.Context, r PackageRequest) (Finished, error) {
	return retried(ctx, func() (Finished, error) { return e.releasePackage(ctx, r) })
}

// releasePackage is ReleasePackage, once.
func (e *Handler) releasePackage(ctx context.Context, r PackageRequest) (Finished, error) {
	c, claimed, err := e.findClaim(ctx, r, "release-package")
	if err != nil {
		return Finished{}, err
	}
	wp, keys, taskKey, cur := c.wp, c.keys, c.taskKey, c.task
	if !claimed {
		return Finished{}, session.Usagef("release-package %s: the package is not claimed", wp.ID)
	}
	var f Finished
	give, err := e.claimedKeys(ctx, c, session.Canonicals(keys), &f)
	if err != nil {
		return Finished{}, err
	}
	if cur.OwnedBy(e.Me) {
		// The claim is still the caller's: a lock of it that lapsed and
		// that another took since is theirs now, left alone (as done
		// leaves it), not a reason to keep the package from being given
		// back.
		mine := give[:0]
		for _, k := range give {
			if l, err := e.Store.Get(ctx, k); err == nil && !l.OwnedBy(e.Me) {
				f.Kept = append(f.Kept, Kept{Key: k, Why: KeptTaken})
				continue
			}
			mine = append(mine, k)
		}
		give = mine
	}
	f.ReleaseResult, err = e.Mgr.Release(ctx, append(give, taskKey), e.Me, false,
		journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
			Action: journal.ActionPackageReleased, Key: taskKey, TaskID: wp.ID, Fence: cur.Fence, Details: wp.Title})
	return f, err
}

// dropLostClaim gives back what is left of a claim of package id that
// was lost (its task record taken over or cleared): the locks among res,
// the claim's, whose record is still the grant the claim made (same owner
// token), so that the package's new claimer does not wait for them. The
// task record, no longer this claim's, and the locks held before the
// claim stay.
func (e *Handler) dropLostClaim(ctx context.Context, id string, res []locks.Result) (locks.ReleaseResult, error) {
	var give []string
	for _, r := range res {
		if r.Renewed || r.Lock.Key == lockkey.TaskKey(id) {
			continue
		}
		cur, err := e.Store.Get(ctx, r.Lock.Key)
		if err == nil && cur.Token == r.Lock.Token {
			give = append(give, r.Lock.Key)
		}
	}
	if len(give) == 0 {
		return locks.ReleaseResult{}, nil
	}
	return e.Mgr.Release(ctx, give, e.Me, false)
}

// RetryRequest makes a failed package ready again; a done one only with
// Force (a reset).
type RetryRequest struct {
	PackageRequest
	Force bool
}

// Retried is what a retry made ready again: the package's state before
// (Was: failed or done) and who had finished it.
type Retried struct {
	Was, By string
}

// RetryPackage makes a failed package ready again; a done one only with
// force (a reset). Both are logged.
// Tried again while other writers keep winning the store (throughContention).
func (e *Handler) RetryPackage(ctx context.Context, r RetryRequest) (Retried, error) {
	return retried(ctx, func() (Retried, error) { return e.retryPackage(ctx, r) })
}

// retryPackage is RetryPackage, once.
func (e *Handler) retryPackage(ctx context.Context, r RetryRequest) (Retried, error) {
	_, wp, err := e.findPackage(ctx, r.Packages, r.ID)
	if err != nil {
		return Retried{}, err
	}
	taskKey := lockkey.TaskKey(wp.ID)
	cur, err := e.Store.Get(ctx, taskKey)
	if errors.Is(err, locks.ErrNotFound) {
		return Retried{}, session.Usagef("retry %s: the package is ready already", wp.ID)
	}
	if err != nil {
		return Retried{}, err
	}
	action := journal.ActionPackageRetried
	switch {
	case cur.Action == session.FailedAction:
	case cur.Action == session.DoneAction && r.Force:
		action = journal.ActionPackageReset
	case cur.Action == session.DoneAction:
		return Retried{}, session.Usagef("retry %s: the package is done (by %s at %s%s); `lockgate retry %s --force` makes it ready again (logged)",
			wp.ID, cur.Holder, stampOf(cur.FinishedAt), commitNote(cur.Commit), wp.ID)
	default:
		return Retried{}, session.Usagef("retry %s: the package is claimed by %s; only a failed or done package is retried", wp.ID, cur.Holder)
	}
	_, err = e.Mgr.Release(ctx, []string{taskKey}, e.Me, true,
		journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
			Action: action, Key: taskKey, TaskID: wp.ID, Fence: cur.Fence,
			Details: fmt.Sprintf("was %s by %s at %s", cur.Action, cur.Holder, stampOf(cur.FinishedAt))})
	return Retried{Was: cur.Action, By: cur.Holder}, err
}

func (e *Handler) findPackage(ctx context.Context, packages, id string) (*config.WorkPackages, *config.WorkPackage, error) {
	wps, err := e.LoadPackages(packages)
	if err != nil {
		return nil, nil, err
	}
	wp, ok := wps.Find(id)
	if !ok {
		return nil, nil, session.Usagef("no work package %q in %s%s", id, wps.Path, e.removedNote(ctx, id))
	}
	return wps, wp, nil
}

// removedNote says what became of the state of a package the file no
// longer lists: removing it from the file leaves its task record, and a
// claim's locks, in the store.
func (e *Handler) removedNote(ctx context.Context, id string) string {
	key := lockkey.TaskKey(id)
	if _, err := lockkey.Parse(key, e.KeyOptions()); err != nil {
		return ""
	}
	l, err := e.Store.Get(ctx, key)
	switch {
	case err != nil:
		return ""
	case session.IsFinishedPackage(l):
		return fmt.Sprintf(" (it was removed from the file; its task record stays: %s by %s)", l.Action, l.Holder)
	case l.Expired(e.Now()):
		return fmt.Sprintf(" (it was removed from the file; the claim by %s expired)", l.Holder)
	}
	return fmt.Sprintf(" (it was removed from the file while claimed by %s: `lockgate lock release %s` and the files and keys it locked give the claim back; `lockgate lock list` shows them)", l.Holder, key)
}
