package lockops

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// requestKeys parses the keys a request names. A front end's user names
// a path relative to the working directory; a tool's (Tool) names it
// repo-relative or absolute, as a server's working directory means
// nothing to its client.
func (e *Handler) requestKeys(args []string, tool bool) ([]lockkey.Key, error) {
	if tool {
		return e.ToolKeys("", args)
	}
	return e.ParseKeys(args)
}

// AcquireRequest is `lock acquire` and acquire_lock: keys, or a work
// package's files and keys, taken all or nothing.
type AcquireRequest struct {
	// Keys are keys, patterns or paths; Tool says they came from a tool
	// (see requestKeys).
	Keys []string
	Tool bool
	// Package takes work package Package's locks (of PackagesFile, ""
	// the default file) instead of Keys.
	Package, PackagesFile string
	// TTL is the locks' lifetime, 0 the default (the package's, else by
	// worker type); one named here sets a lock already held exactly,
	// even shorter. Wait is how long to wait for held keys.
	TTL, Wait    time.Duration
	Reason, Task string
	// Branch takes the locks on that branch only (locks.per_branch).
	Branch string
	// WarnPaths looks for path keys that name no file (AcquireResult's
	// Dirs and Missing).
	WarnPaths bool
}

// AcquireResult is what an acquisition did, key by key, and the path keys
// taken that name no file: directories (a path lock covers one file) and
// paths neither in the work tree nor in the index (a typo, or a file
// still to come). Those locks stand all the same.
type AcquireResult struct {
	Locks         []locks.Result
	Dirs, Missing []string
}

// Acquire takes the locks r names: renewing the caller's own, taking
// over expired ones, waiting up to r.Wait for held ones.
func (e *Handler) Acquire(ctx context.Context, r AcquireRequest) (AcquireResult, error) {
	// Only a TTL the user names may shorten a lock renewed here.
	req := locks.Request{Owner: e.Me, TTL: r.TTL, Reason: r.Reason, Action: "lock", TaskID: r.Task, Wait: r.Wait, ExactTTL: r.TTL > 0,
		OnWait: e.sayWaiting(r.Wait)}
	var keys []lockkey.Key
	if r.Package != "" {
		wp, pkeys, err := e.queue().WorkPackage(r.PackagesFile, r.Package)
		if err != nil {
			return AcquireResult{}, err
		}
		keys = pkeys
		req.Action = "package:" + wp.ID
		req.Reason = cmp.Or(r.Reason, wp.Locks.Reason, wp.Title)
		if req.TTL == 0 {
			req.TTL = wp.TTL()
		}
	} else {
		var err error
		if keys, err = e.requestKeys(r.Keys, r.Tool); err != nil {
			return AcquireResult{}, err
		}
	}
	keys, err := e.onBranch(keys, r.Branch, true)
	if err != nil {
		return AcquireResult{}, err
	}
	if err := e.completeRequest(&req, keys); err != nil {
		return AcquireResult{}, err
	}
	res, err := e.Mgr.Acquire(ctx, req)
	e.syncAfterLocks(ctx)
	out := AcquireResult{Locks: res}
	if err == nil && r.WarnPaths {
		out.Dirs, out.Missing = e.unnamedPaths(ctx, res)
	}
	return out, err
}

// sayWaiting tells the user, once per lock in the way, on whom a request
// that waits up to wait is waiting, and until when that lock holds.
func (e *Handler) sayWaiting(wait time.Duration) func(locks.Lock) {
	return func(l locks.Lock) {
		e.Notify("", fmt.Sprintf("waiting up to %s for %s: held by %s (%s, session %s) until %s",
			duration.Format(wait), l.Key, l.Holder, l.HolderType, l.Session, l.ExpiresAt.UTC().Format(time.RFC3339)))
	}
}

// unnamedPaths are the path locks newly taken in res that name a
// directory, and those that name no file of the work tree or the index.
func (e *Handler) unnamedPaths(ctx context.Context, res []locks.Result) (dirs, missing []string) {
	top := e.WorkTree()
	if top == "" {
		return nil, nil
	}
	for _, r := range res {
		k := r.Lock.Key
		if !lockkey.IsPathLike(k) || lockkey.IsPattern(k) || r.Renewed {
			continue
		}
		fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(k)))
		switch {
		case err == nil && fi.IsDir():
			dirs = append(dirs, k)
		case err != nil:
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return dirs, nil
	}
	tracked, err := gitexec.TrackedPaths(ctx, e.repo(), missing)
	if err != nil {
		return dirs, nil // a warning only: nothing to say when git cannot tell
	}
	missing = slices.DeleteFunc(missing, func(k string) bool { return tracked[k] })
	return dirs, missing
}

// ReleaseRequest is `lock release` and release_lock.
type ReleaseRequest struct {
	Keys []string
	Tool bool
	// Force releases another worker's locks too (logged).
	Force bool
	// Branch releases the locks of r.Keys on that branch (locks.per_branch).
	Branch string
}

// Release releases the caller's locks on r.Keys; a key not locked is
// reported missing, not refused.
func (e *Handler) Release(ctx context.Context, r ReleaseRequest) (locks.ReleaseResult, error) {
	keys, err := e.requestKeys(r.Keys, r.Tool)
	if err != nil {
		return locks.ReleaseResult{}, err
	}
	if keys, err = e.onBranch(keys, r.Branch, false); err != nil {
		return locks.ReleaseResult{}, err
	}
	var res locks.ReleaseResult
	if r.Force {
		res, err = e.Mgr.ReleaseChecked(ctx, session.Canonicals(keys), e.Me, e.ForceCheck(ctx))
	} else {
		res, err = e.Mgr.Release(ctx, session.Canonicals(keys), e.Me, false)
	}
	e.syncAfterLocks(ctx)
	return res, err
}

// syncAfterLocks brings the worktree's read-only files up to date after
// locks changed (locks.read_only); failing to is a warning: the locks
// changed.
func (e *Handler) syncAfterLocks(ctx context.Context) {
	if e.WorkTree() == "" {
		return
	}
	if _, err := os.Stat(e.readOnlyFile()); !e.Cfg.Locks.ReadOnly && err != nil {
		return // off, and nothing of lockgate's to give back
	}
	if _, err := e.SyncReadOnly(ctx); err != nil {
		e.Notify("warning", "locks.read_only: the files' modes were not brought up to date: "+err.Error(), "lockgate guard watch")
	}
}

// RefreshRequest is `lock refresh` and refresh_lock.
type RefreshRequest struct {
	Keys []string
	Tool bool
	// TTL is the new lifetime from now, exactly; 0 each key's default,
	// never shortening it.
	TTL time.Duration
}

// Refresh extends the caller's locks, returning those refreshed
// before any error.
func (e *Handler) Refresh(ctx context.Context, r RefreshRequest) ([]locks.Lock, error) {
	keys, err := e.requestKeys(r.Keys, r.Tool)
	if err != nil {
		return nil, err
	}
	// The keys change in one change of the store: on the git store, one push.
	rs := make([]locks.Renewal, len(keys))
	for i, k := range keys {
		rs[i] = locks.Renewal{Key: k.Canonical, TTL: r.TTL}
		if r.TTL == 0 {
			if rs[i].TTL, err = e.DefaultTTL([]lockkey.Key{k}); err != nil {
				return nil, err
			}
		}
	}
	return e.Mgr.RefreshEach(ctx, rs, e.Me, e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask), r.TTL != 0)
}

// CheckRequest is `lock check` and check_locks with keys.
type CheckRequest struct {
	Keys []string
	Tool bool
}

// CheckResult is each key's state; Held: one is held by another worker.
type CheckResult struct {
	Statuses []KeyStatus
	Held     bool
}

// KeyStatus is one key's state, as `lock check --json` and check_locks
// show it.
type KeyStatus struct {
	Key   string             `json:"key"`
	State locks.KeyState     `json:"state" jsonschema:"free, mine, or held (by another worker)"`
	Locks []session.LockView `json:"locks,omitempty" jsonschema:"the locks on or overlapping the key"`
}

// Check says of each key whether it is free, the caller's, or held
// by another worker.
func (e *Handler) Check(ctx context.Context, r CheckRequest) (CheckResult, error) {
	keys, err := e.requestKeys(r.Keys, r.Tool)
	if err != nil {
		return CheckResult{}, err
	}
	sts, err := e.Mgr.Check(ctx, session.Canonicals(keys), e.Me)
	out := CheckResult{Statuses: []KeyStatus{}}
	for _, s := range sts {
		out.Statuses = append(out.Statuses, KeyStatus{Key: s.Key, State: s.State, Locks: session.ViewsOf(s.Locks)})
		out.Held = out.Held || s.State == locks.StateHeld
	}
	return out, err
}

// ListRequest is `lock list` and list_locks.
type ListRequest struct {
	// Mine: only the caller's; Stale: only those older than
	// locks.stale_minutes; All: expired and bookkeeping records too.
	Mine, Stale, All bool
	// Recover first records what interrupted commands left unrecorded
	// (recoverInterrupted), as a command showing the locks to a person
	// does.
	Recover bool
	// Limit or Cursor ask for one page of the store's records
	// (locks.Store.Page) instead of all: at most Limit (0, or above
	// MaxPage, is MaxPage) from Cursor (PageCursor's), so that a
	// server's page costs the same with any number of locks. Look-alike
	// keys are then marked among the page's keys.
	Cursor string
	Limit  int
}

// LockRow is one record of the store as `lock list --json` shows it: the
// whole record but its owner token, which never leaves the store.
type LockRow struct {
	session.LockView
	Action       string     `json:"action,omitempty"`
	PID          int        `json:"pid"`
	Host         string     `json:"host"`
	TaskAcquired *time.Time `json:"task_acquired,omitempty"`
	RequestID    string     `json:"request_id,omitempty"`
	TraceID      string     `json:"trace_id,omitempty"`
	AgeSeconds   int64      `json:"age_seconds"`
	Expired      bool       `json:"expired"`
	Stale        bool       `json:"stale"`
	Corrupt      bool       `json:"corrupt"`
	Error        string     `json:"error,omitempty"`
	Location     string     `json:"location"`
	Bookkeeping  bool       `json:"bookkeeping"`
	// LookAlike is the key spelled in ASCII (lockkey.Escaped) when another
	// key of the store looks the same (lockkey.LookAlikes).
	LookAlike string `json:"look_alike,omitempty"`
	// Hint resolves a corrupt record: the command that removes it.
	Hint string `json:"-"`
	// token is the lock's owner token, which no listing shows: the
	// git-lfs id is made from it (lfsLockID).
	token string
}

// ListResult is the records asked for, in the store's order, and how many
// expired ones were left out (anyone may take them: not locks any more).
type ListResult struct {
	Rows    []LockRow
	Expired int
	// Next is the cursor of the page after this one, "" after the last
	// (and when the whole store was listed).
	Next string
}

// Live is every live lock of the rows, by key: the corrupt records left out.
func (r ListResult) Live() []session.LockView {
	out := []session.LockView{}
	for _, row := range r.Rows {
		if row.Corrupt {
			continue
		}
		v := row.LockView
		v.Stale = row.Stale
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b session.LockView) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// List reads every record of the store and marks each: its age,
// expired, stale, corrupt (with where the record is and the command that
// clears it), bookkeeping, and look-alike keys.
func (e *Handler) List(ctx context.Context, r ListRequest) (ListResult, error) {
	if r.Recover {
		e.RecoverInterrupted(ctx)
	}
	entries, next, err := e.listEntries(ctx, r)
	if err != nil {
		return ListResult{}, err
	}
	now := e.Now()
	staleAfter := e.Cfg.StaleAfter()
	keys := make([]string, 0, len(entries))
	for _, en := range entries {
		keys = append(keys, en.Key)
	}
	alike := lockkey.LookAlikes(keys)
	out := ListResult{Rows: []LockRow{}, Next: next}
	for _, en := range entries {
		row := LockRow{LockView: session.ViewOf(en.Lock), Action: en.Action, PID: en.PID, Host: en.Host,
			TaskAcquired: en.TaskAcquired, RequestID: en.RequestID, TraceID: en.TraceID,
			Location: e.Store.Where(en.Key), Bookkeeping: session.IsBookkeeping(en.Lock), token: en.Token}
		if row.Bookkeeping && !r.All {
			continue
		}
		var corrupt *locks.CorruptError
		switch {
		case errors.As(en.Err, &corrupt):
			// Where the record is, which for a misplaced or foreign
			// file is not where its key would be.
			row.Corrupt, row.Error, row.Location = true, corrupt.Err.Error(), corrupt.Path
		case en.Err != nil:
			row.Corrupt, row.Error = true, en.Err.Error()
		default:
			row.AgeSeconds = int64(now.Sub(en.CreatedAt).Seconds())
			row.Expired = en.Expired(now)
			row.Stale = en.Stale(now, staleAfter)
		}
		if r.Mine && (row.Corrupt || !en.OwnedBy(e.Me)) {
			continue
		}
		if r.Stale && !row.Stale {
			continue
		}
		if row.Expired && !r.All {
			out.Expired++
			continue
		}
		if alike[en.Key] {
			row.LookAlike = lockkey.Escaped(en.Key)
		}
		if row.Corrupt {
			row.Hint = hint.CorruptLine(e.RecordWhere(), row.Location, row.Key, lockkey.RelArg(row.Key, e.UserDir()))
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}

// listEntries is the records List shows: every one, or the page r
// asks for and the next page's cursor.
func (e *Handler) listEntries(ctx context.Context, r ListRequest) ([]locks.Entry, string, error) {
	if r.Limit <= 0 && r.Cursor == "" {
		entries, err := e.Store.List(ctx)
		return entries, "", err
	}
	return e.Page(ctx, r.Cursor, r.Limit)
}

// Page is one page of the store's records, by key, from cursor
// (PageCursor's; "" from the first): at most limit (0, or above MaxPage,
// is MaxPage), and the next page's cursor ("" after the last).
func (e *Handler) Page(ctx context.Context, cursor string, limit int) ([]locks.Entry, string, error) {
	after, err := PagePosition(cursor)
	if err != nil {
		return nil, "", err
	}
	entries, next, err := e.Store.Page(ctx, after, PageLimit(limit))
	if err != nil {
		return nil, "", fmt.Errorf("read a page of locks: %w", err)
	}
	if next != "" {
		next = PageCursor(next)
	}
	SortByKey(entries)
	return entries, next, nil
}

// Prune removes the records whose locks have expired. Each is taken
// over first — which a store does only while the record is still
// expired, so that a lock refreshed or taken meanwhile is never removed —
// then released: both are logged (lock_takeover naming the expired
// holder, lock_release).
func (e *Handler) Prune(ctx context.Context) ([]Pruned, error) {
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
		out = append(out, Pruned{LockView: session.ViewOf(*res[0].TookOver), ExpiredFor: now.Sub(res[0].TookOver.ExpiresAt)})
	}
	return out, nil
}

// ClearRequest is `lock clear`: the lock on Target (a key, a task id,
// workflow, claim), or the unreadable record file Record.
type ClearRequest struct {
	Target, Record string
	// Force must be set: clearing removes whoever's lock it is.
	Force bool
}

// Check refuses a clear without Force, before anything is opened.
func (r ClearRequest) Check() error {
	switch {
	case r.Force:
		return nil
	case r.Record != "":
		return session.Usagef("lock clear --record %s: refusing without --force (it removes the lock record whoever wrote it)", r.Record)
	default:
		return session.Usagef("lock clear %s: refusing without --force (it removes the lock whoever holds it)", r.Target)
	}
}

// ClearResult is what a clear removed, as `lock clear --json` shows it: the
// lock (Cleared), or an unreadable record (Corrupt).
type ClearResult struct {
	Key        string            `json:"key"`
	Corrupt    bool              `json:"corrupt"`
	Cleared    *session.LockView `json:"cleared,omitempty"`
	AgeSeconds int64             `json:"age_seconds"`
	Store      string            `json:"store"` // file, or the Redis URL without its password
	// Record is the unreadable record removed: its file, or its name.
	Record string `json:"-"`
	// Age is the cleared lock's age.
	Age time.Duration `json:"-"`
}

// Clear removes any lock, or unreadable record, whoever holds it,
// unless a rule of ForceCheck refuses it (a *ForceRefusedError).
func (e *Handler) Clear(ctx context.Context, r ClearRequest) (ClearResult, error) {
	if err := r.Check(); err != nil {
		return ClearResult{}, err
	}
	if r.Record != "" {
		return e.clearRecord(ctx, r.Record)
	}
	key, err := e.resolveClearTarget(ctx, r.Target)
	if err != nil {
		return ClearResult{}, err
	}
	removed, err := e.Mgr.ClearChecked(ctx, key, e.Me, e.ForceCheck(ctx))
	var corrupt *locks.CorruptError
	if errors.As(err, &corrupt) {
		return ClearResult{Key: key, Corrupt: true, Record: corrupt.Path, Store: e.StoreName()}, nil
	}
	if err != nil {
		return ClearResult{}, err
	}
	age := e.Now().Sub(removed.CreatedAt)
	v := session.ViewOf(removed)
	return ClearResult{Key: key, Cleared: &v, AgeSeconds: int64(age.Seconds()), Age: age, Store: e.StoreName()}, nil
}

// recordRemover is a store whose records are named, as `lock list`
// prints them: the file store's files, the git store's tree entries.
type recordRemover interface {
	RemoveRecord(ctx context.Context, name string) (locks.Entry, error)
}

// clearRecord removes a record that cannot be cleared by key (see
// filestore.RemoveRecord), and logs it.
func (e *Handler) clearRecord(ctx context.Context, file string) (ClearResult, error) {
	rm, ok := e.Store.(recordRemover)
	if !ok {
		return ClearResult{}, session.Usagef("lock clear --record: only the file and git stores keep records by name; clear by key (see `lockgate lock list`)")
	}
	en, err := rm.RemoveRecord(ctx, file)
	switch {
	case errors.Is(err, filestore.ErrNotRecord), errors.Is(err, locks.ErrNotFound):
		return ClearResult{}, session.Usagef("lock clear --record: %v", err)
	case errors.Is(err, filestore.ErrReadable):
		return ClearResult{}, session.Usagef("lock clear --record: %v: `lockgate lock clear --force %s`", err, hint.Quote(lockkey.RelArg(en.Key, e.UserDir())))
	case err != nil:
		return ClearResult{}, err
	}
	if err := e.Mgr.Record(ctx, journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
		Action: journal.ActionClear, Key: en.Key, Details: "removed corrupt record " + en.Name}); err != nil {
		return ClearResult{}, fmt.Errorf("lock clear: %s removed, but not logged: %w", en.Name, err)
	}
	return ClearResult{Key: en.Key, Corrupt: true, Record: en.Name, Store: e.StoreName()}, nil
}

// resolveClearTarget maps what users type — `workflow`, `claim`,
// `TASK-001` — to the key that holds a lock. Any record `lock list` shows
// can be cleared by its key, even one no one may lock by hand: a port
// lease, the planner's state, a key of a namespace since removed from the
// config, a record another tool wrote.
func (e *Handler) resolveClearTarget(ctx context.Context, target string) (string, error) {
	keys, err := e.ParseKeys([]string{target})
	if err != nil {
		_, gerr := e.Store.Get(ctx, target)
		var corrupt *locks.CorruptError
		switch {
		case gerr == nil, errors.As(gerr, &corrupt):
			return target, nil
		case errors.Is(gerr, locks.ErrNotFound):
			return "", err
		default:
			return "", gerr
		}
	}
	key := keys[0].Canonical
	if keys[0].Kind != lockkey.KindPath {
		return key, nil
	}
	if _, err := e.Store.Get(ctx, key); !errors.Is(err, locks.ErrNotFound) {
		return key, nil
	}
	for _, alt := range []string{lockkey.TaskKey(target), "activity:" + target} {
		if _, err := e.Store.Get(ctx, alt); !errors.Is(err, locks.ErrNotFound) {
			return alt, nil
		}
	}
	return "", session.Usagef("lock clear %s: no such lock (looked for %s, %s and activity:%s); see `lockgate lock list --all`", target, key, lockkey.TaskKey(target), target)
}

// CandidateKind is a kind of word a shell may complete.
type CandidateKind int

const (
	// HeldKeys are the keys of the caller's locks (the store must be open).
	HeldKeys CandidateKind = iota
	// PackageIDs are the ids of the work packages.
	PackageIDs
	// ScopeProfiles are the scope profiles of the policy.
	ScopeProfiles
)

// CandidatesRequest asks for the candidates Of that start with Prefix.
type CandidatesRequest struct {
	Of     CandidateKind
	Prefix string
}

// Candidates lists the completions r asks for: held keys in the store's
// order, package ids in the file's, profiles sorted. Completion must
// never fail loudly: the front end completes an error to nothing.
func (e *Handler) Candidates(ctx context.Context, r CandidatesRequest) ([]string, error) {
	var out []string
	switch r.Of {
	case HeldKeys:
		if e.Store == nil {
			return nil, errors.New("complete held keys: the lock store is not open")
		}
		entries, err := e.Store.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, en := range entries {
			if en.Err == nil && en.OwnedBy(e.Me) && strings.HasPrefix(en.Key, r.Prefix) {
				out = append(out, en.Key)
			}
		}
	case PackageIDs:
		wps, err := e.queue().LoadPackages("")
		if err != nil {
			return nil, err
		}
		for _, wp := range wps.Packages {
			if strings.HasPrefix(wp.ID, r.Prefix) {
				out = append(out, wp.ID)
			}
		}
	case ScopeProfiles:
		for name := range e.Cfg.Scope.Profiles {
			if strings.HasPrefix(name, r.Prefix) {
				out = append(out, name)
			}
		}
		sort.Strings(out)
	default:
		return nil, fmt.Errorf("no candidates of kind %d", r.Of)
	}
	return out, nil
}
