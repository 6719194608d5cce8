package gitstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/record"
)

// Defaults of Options.
const (
	DefaultRef       = "refs/lockgate/locks"
	DefaultClockSkew = 2 * time.Second
	DefaultTimeout   = 10 * time.Second
	// DefaultReuse is how long a state the remote confirmed answers the
	// next reads and writes of the same Store: the reads and the write of
	// one command share one exchange with the remote.
	DefaultReuse = 250 * time.Millisecond
)

// Options configure a Store.
type Options struct {
	// GitDir, CommonDir and WorkTree locate the clone (WorkTree "" for a
	// bare repository; CommonDir "" when it is GitDir).
	GitDir, CommonDir, WorkTree string
	// Remote is the remote's name or URL.
	Remote string
	// RemoteFrom says where Remote was taken from ("locks.git.remote" when
	// ""), for the error of a clone that has no remote of that name.
	RemoteFrom string
	// Ref is the remote ref that holds the locks (DefaultRef when "").
	Ref string
	// ClockSkew is how long past its expiry a lock still counts as held
	// when a writer decides whether to take it over.
	ClockSkew time.Duration
	// MaxAge lets a read use a state the remote confirmed less than MaxAge
	// ago, from memory or the clone's cache, without asking again. Writes
	// always ask.
	MaxAge time.Duration
	// Timeout bounds each exchange with the remote (DefaultTimeout when 0).
	Timeout time.Duration
	// Reuse is how long a state the remote confirmed answers this Store's
	// next reads and writes without asking again (DefaultReuse when 0,
	// never when negative). A write decided on a state that is no longer
	// current loses its lease and is decided again.
	Reuse time.Duration
	// Attempts bounds the decide-and-push rounds one change makes when
	// other writers keep winning (30 when 0).
	Attempts int
	// FenceFloor, when set, returns the highest fence the lock log names.
	// A change to a remote without the ref starts a new table (first use,
	// or a ref someone deleted); its first fence is above the floor, so a
	// table that starts over never hands out a fence a live lock of the
	// lost table holds. An error fails the change.
	FenceFloor func(ctx context.Context) (uint64, error)
	// Warn, when set, is told of a state of the remote that dropped live
	// locks without saying why (checkLogged).
	Warn func(msg string)
	// Sign, when set, signs every state's commit (workflow.signed).
	Sign func(ctx context.Context, payload []byte) (string, error)

	// legacyASCII names records as versions that folded A-Z only did
	// (record.LegacyName); tests use it to write such tables.
	legacyASCII bool
}

var (
	_ locks.Store      = (*Store)(nil)
	_ locks.Transactor = (*Store)(nil)
	_ locks.Poller     = (*Store)(nil)
	_ locks.Sealer     = (*Store)(nil)
)

// Store is the git lock store. Its methods are safe for concurrent use;
// any number of processes and clones may use one remote ref.
type Store struct {
	opts    Options
	repo    *gitexec.Repo
	private string // the local ref fetches write
	cache   string // the snapshot file

	mu        sync.Mutex
	snap      *table
	confirmed time.Time              // when the remote last named snap.commit
	byOID     map[string]*treeRecord // decoded blobs, by object name
	closed    bool

	objMu sync.Mutex
	obj   *objectWriter
}

// Open returns the store of opts. It does not contact the remote.
func Open(opts Options) (*Store, error) {
	if opts.GitDir == "" {
		return nil, errors.New("git store: no repository")
	}
	if opts.CommonDir == "" {
		opts.CommonDir = opts.GitDir
	}
	if opts.Remote == "" {
		return nil, errors.New("git store: no remote")
	}
	if strings.HasPrefix(opts.Remote, "-") {
		return nil, fmt.Errorf("git store: %q is not a remote", opts.Remote)
	}
	if opts.Ref == "" {
		opts.Ref = DefaultRef
	}
	if err := checkRef(opts.Ref); err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Attempts <= 0 {
		opts.Attempts = 30
	}
	opts.ClockSkew = max(opts.ClockSkew, 0)
	if opts.Reuse == 0 {
		opts.Reuse = DefaultReuse
	}
	opts.Reuse = max(opts.Reuse, 0)
	id := cacheID(opts.Remote, opts.Ref)
	s := &Store{
		opts:    opts,
		repo:    &gitexec.Repo{GitDir: opts.GitDir, CommonDir: opts.CommonDir, Toplevel: opts.WorkTree},
		private: "refs/lockgate/fetched/" + id,
		cache:   filepath.Join(opts.CommonDir, "lockgate", "cache", "gitstore-"+id+".snap"),
		byOID:   map[string]*treeRecord{},
	}
	return s, nil
}

// checkRef accepts full ref names only: the lease and the fetch name the
// ref exactly.
func checkRef(ref string) error {
	if !strings.HasPrefix(ref, "refs/") || strings.ContainsAny(ref, " \t\n\r\x00~^:?*[\\") ||
		strings.Contains(ref, "..") || strings.HasSuffix(ref, "/") || strings.HasSuffix(ref, ".lock") {
		return fmt.Errorf("git store: %q is not a full ref name (like %s)", ref, DefaultRef)
	}
	return nil
}

// Remote names the remote the locks live on (its password hidden).
func (s *Store) Remote() string { return gitexec.RedactURL(s.opts.Remote) }

// Ref is the remote ref that holds the locks.
func (s *Store) Ref() string { return s.opts.Ref }

// Where names the place of key's record: the remote, the ref and the name
// in its tree.
func (s *Store) Where(key string) string { return s.where(nameOf(key)) }

func (s *Store) where(name string) string {
	return fmt.Sprintf("git %s %s:%s", s.Remote(), s.opts.Ref, name)
}

// Close forgets the state; the store can no longer be used.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.snap = nil
	return nil
}

func (s *Store) unavailable(op string, err error) error {
	return &locks.UnavailableError{Store: "git " + s.Remote() + " " + s.opts.Ref, Err: fmt.Errorf("%s: %w", op, err)}
}

// ClockSkew is how long past its expiry a lock still counts as held.
func (s *Store) ClockSkew() time.Duration { return s.opts.ClockSkew }

// PollEvery is how often a --wait tries again: each try is a fetch.
func (s *Store) PollEvery() time.Duration { return 200 * time.Millisecond }

// Age is how long ago the remote confirmed the state the last read used.
func (s *Store) Age(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.confirmed.IsZero() {
		return 0
	}
	return max(now.Sub(s.confirmed), 0)
}

// read returns a view of a current state for a read.
func (s *Store) read(ctx context.Context) (*view, error) {
	t, err := s.current(ctx, max(s.opts.MaxAge, s.opts.Reuse))
	if err != nil {
		return nil, err
	}
	return s.newView(t), nil
}

// current returns the state, asking the remote unless the one held was
// confirmed less than fresh ago.
func (s *Store) current(ctx context.Context, fresh time.Duration) (*table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.unavailable("use", errors.New("store is closed"))
	}
	if s.snap == nil && s.opts.MaxAge > 0 {
		s.loadCache()
	}
	if s.snap != nil && time.Since(s.confirmed) < fresh {
		return s.snap, nil
	}
	asked := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	oid, err := s.remoteTip(ctx)
	switch {
	case errors.Is(err, gitexec.ErrNoRemoteRef):
		if err := s.adopt(ctx, emptyTable(), asked); err != nil {
			return nil, err
		}
		return s.snap, nil
	case err != nil:
		return nil, s.unavailable("ask the remote", s.gitError(err))
	}
	if s.snap == nil {
		s.loadCache()
	}
	if s.snap != nil && s.snap.commit == oid {
		s.confirm(asked)
		return s.snap, nil
	}
	if err := s.fetchLocked(ctx, asked); err != nil {
		return nil, err
	}
	return s.snap, nil
}

// fetch brings the remote's state into the clone and makes it the
// snapshot.
func (s *Store) fetch(ctx context.Context) (*table, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.unavailable("use", errors.New("store is closed"))
	}
	if s.snap == nil {
		s.loadCache()
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	if err := s.fetchLocked(ctx, time.Now()); err != nil {
		return nil, err
	}
	return s.snap, nil
}

// remoteTip asks the remote which commit the ref names.
func (s *Store) remoteTip(ctx context.Context) (string, error) {
	if s.local() {
		oid, ok, err := gitexec.ResolveRef(ctx, s.repo, s.opts.Ref)
		if err == nil && !ok {
			err = gitexec.ErrNoRemoteRef
		}
		return oid, err
	}
	return gitexec.LsRemote(ctx, s.repo, s.opts.Remote, s.opts.Ref)
}

// local reports a store whose remote is the repository itself (".": a
// server's hooks): its ref is read in place, never fetched.
func (s *Store) local() bool { return s.opts.Remote == "." }

func (s *Store) fetchLocked(ctx context.Context, asked time.Time) error {
	oid, err := s.fetchTip(ctx)
	switch {
	case errors.Is(err, gitexec.ErrNoRemoteRef):
		return s.adopt(ctx, emptyTable(), asked)
	case err != nil:
		return err
	case s.snap != nil && s.snap.commit == oid:
		s.confirm(asked)
		return nil
	}
	t, err := s.load(ctx, oid)
	if err != nil {
		return err
	}
	return s.adopt(ctx, t, asked)
}

// fetchTip brings the remote's ref into the clone and returns the commit
// it names (gitexec.ErrNoRemoteRef when it has none). A local store reads
// the ref in place.
func (s *Store) fetchTip(ctx context.Context) (string, error) {
	if s.local() {
		oid, err := s.remoteTip(ctx)
		if err != nil && !errors.Is(err, gitexec.ErrNoRemoteRef) {
			return "", s.unavailable("read", s.gitError(err))
		}
		return oid, err
	}
	var err error
	for try := range 20 {
		err = gitexec.FetchRef(ctx, s.repo, s.opts.Remote, s.opts.Ref, s.private)
		if !busyLocally(err) || ctx.Err() != nil {
			break
		}
		// Another lockgate process of this clone is writing the same
		// private ref: the next try reads what it fetched.
		time.Sleep(time.Duration(1+rand.N(2<<min(try, 6))) * time.Millisecond)
	}
	switch {
	case errors.Is(err, gitexec.ErrNoRemoteRef):
		return "", err
	case err != nil:
		return "", s.unavailable("fetch", s.gitError(err))
	}
	oid, ok, err := gitexec.ResolveRef(ctx, s.repo, s.private)
	if err != nil {
		return "", s.unavailable("fetch", err)
	}
	if !ok {
		return "", s.unavailable("fetch", fmt.Errorf("%s on %s does not name a commit", s.opts.Ref, s.Remote()))
	}
	return oid, nil
}

// adopt makes t, read from the remote, the snapshot — unless the remote
// went back: the ref must name the state this clone last saw, a later one
// of the same table or a commit on top of it (compare; for two states of
// the chained format, one that contains it). A deleted ref, a forced push
// of an older state, a mirror push from a clone that never saw the newer
// one would silently drop every lock taken since and hand out their
// fences again. The caller holds s.mu.
func (s *Store) adopt(ctx context.Context, t *table, asked time.Time) error {
	if s.snap == nil {
		s.loadCache()
	}
	if prev := s.snap; prev != nil && prev.commit != "" && prev.commit != t.commit {
		gone := t.commit == ""
		if !gone {
			v, _ := compare(prev.stamp, t.stamp)
			ok := v == later
			if v == chained || v == onTop {
				var err error
				ok, err = gitexec.IsAncestor(ctx, s.repo, prev.commit, t.commit)
				if err != nil {
					// The state seen last is not in the clone any more (git
					// gc): nothing to compare with. Two chained states
					// were taken as they came; a stamp that is not later
					// is refused, as it says enough.
					ok = v == chained && !gitexec.ObjectExists(ctx, s.repoDir(), prev.commit)
				}
			}
			if ok && v == later && t.stamp.Generation == prev.stamp.Generation+1 {
				// The next state after the one seen last: it must say why
				// any live lock of that one is gone.
				if err := s.checkLogged(ctx, prev, t, asked); err != nil {
					return err
				}
			}
			if ok {
				s.setSnap(t, asked)
				return nil
			}
		}
		seen := short(prev.commit)
		if prev.stamp.Format == formatFlat {
			seen += " (" + prev.stamp.String() + ")"
		}
		what := fmt.Sprintf("names %s (%s), not a later state than", short(t.commit), t.stamp)
		if prev.stamp.Format != formatFlat && t.stamp.Format != formatFlat {
			what = fmt.Sprintf("names %s, which does not contain", short(t.commit))
		}
		if gone {
			what = "is gone; it named"
		}
		return s.unavailable("read", fmt.Errorf("%s on %s %s %s, the state this clone last saw: the locks taken since would be lost and their fences handed out again. "+
			"Put it back from this clone: `git push --force-with-lease=%s:%s %s %s:%s`; or, to accept that every lock since is gone, remove %s",
			s.opts.Ref, s.Remote(), what, seen, s.opts.Ref, t.commit, s.Remote(), prev.commit, s.opts.Ref, s.cache))
	}
	s.setSnap(t, asked)
	return nil
}

// checkLogged judges t, the state after prev: when it ends or hands over
// a lock live in prev (at asked, less the clock skew) without a change
// line saying so (unlogged), lockgate did not write it, and a lock it
// dropped would be handed out again. Such locks are kept as prev had
// them — this clone's next change writes them back — and Options.Warn is
// told. The caller holds s.mu.
func (s *Store) checkLogged(ctx context.Context, prev, t *table, asked time.Time) error {
	reasons, dropped, err := unloggedNames(prev, t, func() (string, error) {
		msg, err := gitexec.RepoOutput(ctx, s.repo, "cat-file", "commit", t.commit)
		return string(msg), err
	}, asked.Add(-s.opts.ClockSkew))
	if err != nil {
		return s.unavailable("read", err)
	}
	if len(dropped) == 0 {
		return nil
	}
	for _, name := range dropped {
		t.recs[name] = prev.recs[name]
		delete(t.trees, dirOf(name)) // written anew with it
	}
	t.fence = max(t.fence, prev.fence)
	if s.opts.Warn != nil {
		s.opts.Warn(fmt.Sprintf("%s on %s names %s (%s), a state lockgate did not write: %s. Those locks are kept as held; this clone's next lock change writes them back",
			s.opts.Ref, s.Remote(), short(t.commit), t.stamp, strings.Join(reasons, "; ")))
	}
	return nil
}

func short(oid string) string { return oid[:min(len(oid), 12)] }

func (s *Store) repoDir() string {
	if s.opts.WorkTree != "" {
		return s.opts.WorkTree
	}
	return s.opts.GitDir
}

// confirm records that the remote named the snapshot's commit at t. Only
// readers under Options.MaxAge use that time from the cache, so only they
// write it back.
func (s *Store) confirm(t time.Time) {
	s.confirmed = t
	if s.opts.MaxAge > 0 {
		s.saveCache()
	}
}

func (s *Store) setSnap(t *table, confirmed time.Time) {
	s.snap, s.confirmed = t, confirmed
	s.byOID = make(map[string]*treeRecord, len(t.recs))
	for _, r := range t.recs {
		s.byOID[r.oid] = r
	}
	s.saveCache()
}

// remoteBusy reports a push refused because another push held the
// remote ref's lock or moved it under this one: deciding again fixes it.
func remoteBusy(st gitexec.PushStatus) bool {
	return st.Flag == '!' && strings.HasPrefix(st.Summary, "[remote rejected]") &&
		(strings.Contains(st.Summary, "failed to update ref") || strings.Contains(st.Summary, "failed to lock") ||
			strings.Contains(st.Summary, "cannot lock ref") || strings.Contains(st.Summary, "incorrect old value"))
}

// busyLocally reports a fetch that failed because another process held
// the private ref's lock file.
func busyLocally(err error) bool {
	var ge *gitexec.Error
	return errors.As(err, &ge) && (strings.Contains(ge.Stderr, "cannot lock ref") || strings.Contains(ge.Stderr, "Unable to create") && strings.Contains(ge.Stderr, ".lock"))
}

// gitError is the gist of a failed git command: its error lines and what
// the remote said, or that it did not answer within the timeout.
func (s *Store) gitError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer from %s within %s (locks.git.timeout)", s.Remote(), s.opts.Timeout)
	}
	if missing := s.missingRemote(); missing != nil {
		return missing
	}
	return gitError(err)
}

// missingRemote explains a failed exchange with the remote when Remote is
// a name (not a URL or a path) that the clone has no remote of: git would
// only say that a repository of that name does not exist. It is asked
// after a failure only, so that reads that succeed cost no git process.
func (s *Store) missingRemote() error {
	name := s.opts.Remote
	if name == "." || strings.ContainsAny(name, `/\:`) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
	defer cancel()
	if _, ok, err := gitexec.RemoteURL(ctx, s.repo, name); err != nil || ok {
		return nil
	}
	have := "this clone has no remotes"
	if remotes, err := gitexec.Remotes(ctx, s.repo); err != nil {
		have = "this clone's remotes: `git remote -v`"
	} else if len(remotes) > 0 {
		have = "this clone's remotes: " + strings.Join(remotes, ", ")
	}
	return fmt.Errorf("no remote %q in this clone (the git store's remote, from %s): add it with `git remote add %s URL`, or set locks.git.remote to the remote that holds the locks (%s)",
		name, cmp.Or(s.opts.RemoteFrom, "locks.git.remote"), hint.Quote(name), have)
}

func gitError(err error) error {
	var ge *gitexec.Error
	if !errors.As(err, &ge) || strings.TrimSpace(ge.Stderr) == "" {
		return err
	}
	var lines []string
	for _, l := range strings.Split(ge.Stderr, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "hint:") {
			continue
		}
		lines = append(lines, l)
	}
	msg := strings.Join(lines, "; ")
	if len(msg) > 600 {
		msg = msg[:600] + "…"
	}
	if ge.ExitCode() == -1 {
		return fmt.Errorf("%s (%w)", msg, ge.Err)
	}
	return errors.New(msg)
}

// Transact runs fn on a view of the remote's current state and publishes
// every change fn made as one commit, pushed with a lease on the state fn
// saw. When another writer moved the ref first, fn runs again on the new
// state, after a jittered pause, up to Options.Attempts times; then the
// change fails with a *locks.ContendedError. An error from fn publishes
// nothing.
func (s *Store) Transact(ctx context.Context, fn func(locks.Store) error) error {
	var took time.Duration
	redecided := 0
	staleOn := "" // the state a push was last refused on as stale
	for attempt := 0; attempt < s.opts.Attempts; attempt++ {
		if attempt > 0 {
			if err := pause(ctx, attempt-1, took); err != nil {
				return err
			}
		}
		start := time.Now()
		fresh := s.opts.Reuse
		if attempt > 0 {
			fresh = 0
		}
		t, reused, err := s.forWrite(ctx, fresh)
		if err != nil {
			return err
		}
		if staleOn != "" && t.commit == staleOn {
			// The lease failed, yet a fetch shows the very state it
			// named: pushes reach another ref than fetches read.
			return s.unavailable("push", fmt.Errorf("the remote refused the change as out of date, yet %s on %s still names the state it was decided on: do its fetch and push URLs (remote.%s.pushurl) reach the same repository?",
				s.opts.Ref, s.Remote(), s.Remote()))
		}
		v := s.newView(t)
		if t.commit == "" && s.opts.FenceFloor != nil {
			floor, err := s.opts.FenceFloor(ctx)
			if err != nil {
				return s.unavailable("start a new lock table", fmt.Errorf("read the highest fence of the lock log: %w", err))
			}
			v.fence = max(v.fence, floor)
		}
		if err := fn(v); err != nil || !v.dirty() {
			if reused && redecided < 3 {
				// A refusal (or nothing to do) decided on a state this
				// Store had: ask the remote whether it still holds, and
				// decide again if not — a waiter must see a release.
				cur, cerr := s.current(ctx, 0)
				if cerr != nil {
					return cerr
				}
				if cur.commit != t.commit {
					redecided++
					attempt-- // not a lost race
					took = 0
					continue
				}
			}
			return err
		}
		won, stale, err := s.publish(ctx, t, v)
		if err != nil || won {
			return err
		}
		staleOn = ""
		if stale {
			staleOn = t.commit
		}
		took = time.Since(start)
	}
	return &locks.ContendedError{Store: "git " + s.Remote() + " " + s.opts.Ref, Attempts: s.opts.Attempts}
}

// Seal runs check on a current state and, unless check reports its changes
// all there, publishes the next generation of that state: a push the dead
// writer sent with a lease on it, still on its way, then fails.
func (s *Store) Seal(ctx context.Context, check func(locks.Store) (bool, error)) error {
	return s.Transact(ctx, func(v locks.Store) error {
		settled, err := check(v)
		if err == nil && !settled {
			v.(*view).seal()
		}
		return err
	})
}

// forWrite returns the state a change is decided on: the one held when
// the remote confirmed it less than fresh ago (reused), else a fetched one.
func (s *Store) forWrite(ctx context.Context, fresh time.Duration) (t *table, reused bool, err error) {
	s.mu.Lock()
	if s.snap != nil && fresh > 0 && time.Since(s.confirmed) < fresh {
		t := s.snap
		s.mu.Unlock()
		return t, true, nil
	}
	s.mu.Unlock()
	t, err = s.fetch(ctx)
	return t, false, err
}

// pause waits a jittered, growing time before another attempt.
func pause(ctx context.Context, attempt int, took time.Duration) error {
	bound := max(took, 2*time.Millisecond) << min(attempt, 5)
	bound = min(bound, 2*time.Second)
	t := time.NewTimer(rand.N(bound) + time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// publish writes v's changes on top of t and pushes them with a lease on
// t's commit. It reports false when another writer moved the ref first
// (stale: the lease did not hold), or held the remote's ref lock.
func (s *Store) publish(ctx context.Context, t *table, v *view) (won, stale bool, err error) {
	next, commit, err := s.commit(t, v)
	if err != nil {
		return false, false, s.unavailable("write", err)
	}
	pctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	asked := time.Now()
	st, err := gitexec.LeasePush(pctx, s.repo, s.opts.Remote, commit, s.opts.Ref, t.commit)
	if err == nil {
		s.mu.Lock()
		if !s.closed {
			s.setSnap(next, asked)
		}
		s.mu.Unlock()
		return true, false, nil
	}
	if st.Stale() || remoteBusy(st) {
		return false, st.Stale(), nil
	}
	if st.Flag == '!' && strings.Contains(st.Summary, "non-fast-forward") {
		// receive.denyNonFastForwards, or a forge's branch protection:
		// the ref is a branch that may only move forward.
		return false, false, s.unavailable("push", fmt.Errorf("the remote refused %s: %s: %w. Each change of the lock table replaces the commit the ref names (it keeps no history), which the remote takes for a forced update: allow forced updates of %s (receive.denyNonFastForwards covers branches only; on a forge, lift the branch's protection), or use a ref outside refs/heads/ (locks.git.ref, default %s)",
			s.opts.Ref, st.Summary, s.gitError(err), s.opts.Ref, DefaultRef))
	}
	if st.Flag == '!' {
		return false, false, s.unavailable("push", fmt.Errorf("the remote refused %s: %s: %w", s.opts.Ref, st.Summary, s.gitError(err)))
	}
	// No answer (a timeout, a dropped connection): the remote may have
	// taken the change all the same.
	return false, false, &locks.UncertainError{Err: s.unavailable("push", s.gitError(err))}
}

// Acquire takes rec.Key (see locks.Store), in a change of its own.
func (s *Store) Acquire(ctx context.Context, rec locks.Lock, now time.Time) (stored locks.Lock, prev *locks.Lock, err error) {
	err = s.Transact(ctx, func(v locks.Store) error {
		stored, prev, err = v.Acquire(ctx, rec, now)
		return err
	})
	return stored, prev, err
}

// Release removes key's record if its token is token.
func (s *Store) Release(ctx context.Context, key, token string) error {
	return s.Transact(ctx, func(v locks.Store) error { return v.Release(ctx, key, token) })
}

// Update replaces key's record if its token matches, keeping the fence.
func (s *Store) Update(ctx context.Context, rec locks.Lock) (out locks.Lock, err error) {
	err = s.Transact(ctx, func(v locks.Store) error {
		out, err = v.Update(ctx, rec)
		return err
	})
	return out, err
}

// Remove deletes key's record whoever holds it. A corrupt record is
// removed and reported as its *locks.CorruptError.
func (s *Store) Remove(ctx context.Context, key string) (out locks.Lock, err error) {
	var corrupt error
	err = s.Transact(ctx, func(v locks.Store) error {
		out, corrupt = v.Remove(ctx, key)
		if errors.As(corrupt, new(*locks.CorruptError)) {
			return nil // removed: publish it, then report it
		}
		return corrupt
	})
	if err != nil {
		return out, err
	}
	return out, corrupt
}

// Get returns key's record.
func (s *Store) Get(ctx context.Context, key string) (locks.Lock, error) {
	v, err := s.read(ctx)
	if err != nil {
		return locks.Lock{}, err
	}
	return v.Get(ctx, key)
}

// List returns every record, corrupt ones included, sorted by key.
func (s *Store) List(ctx context.Context) ([]locks.Entry, error) {
	v, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	return v.List(ctx)
}

// Page returns a page of the records, in the order of their names.
func (s *Store) Page(ctx context.Context, after string, limit int) ([]locks.Entry, string, error) {
	v, err := s.read(ctx)
	if err != nil {
		return nil, "", err
	}
	return v.Page(ctx, after, limit)
}

// Overlapping returns the records that may overlap key.
func (s *Store) Overlapping(ctx context.Context, key string) ([]locks.Entry, error) {
	v, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	return v.Overlapping(ctx, key)
}

// Covering returns the records of paths and the pattern locks matching them.
func (s *Store) Covering(ctx context.Context, paths []string) ([]locks.Entry, error) {
	v, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	return v.Covering(ctx, paths)
}

// InNamespace returns the records of namespace ns.
func (s *Store) InNamespace(ctx context.Context, ns string) ([]locks.Entry, error) {
	v, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	return v.InNamespace(ctx, ns)
}

// RemoveRecord removes the record at name in the lock tree, given as Where
// prints it ("git <remote> <ref>:<name>") or as the name alone, when it
// cannot be read as the record of its key: one whose key neither its name
// nor its content says, as in the file store. A readable record is refused
// with locks.ErrReadable, naming its key: clear that.
func (s *Store) RemoveRecord(ctx context.Context, name string) (locks.Entry, error) {
	arg := name
	name = strings.TrimPrefix(name, s.where(""))
	if !validName(name) {
		return locks.Entry{}, fmt.Errorf("%s: %w (its records are the *.lock entries of %s)", arg, locks.ErrNotRecord, s.where(""))
	}
	var e locks.Entry
	err := s.Transact(ctx, func(st locks.Store) error {
		v := st.(*view)
		r := v.get(name)
		if r == nil {
			return fmt.Errorf("%s: %w", arg, locks.ErrNotFound)
		}
		e = v.entryOf(r)
		if e.Err == nil {
			return fmt.Errorf("%s holds a readable lock on %q: %w", arg, e.Key, locks.ErrReadable)
		}
		v.set(name, nil, "clear corrupt "+name)
		return nil
	})
	return e, err
}

// newView is a view of t as this Store decides on it.
func (s *Store) newView(t *table) *view {
	v := newView(t, s.opts.ClockSkew, s.where)
	if s.opts.legacyASCII {
		v.name = record.LegacyName
	}
	return v
}
