package service

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/session"
)

// LFSLock is a lockgate lock as the git-lfs File Locking API shows it. A
// path lock's path is its key, and a file lfsKey wrote as a pattern shows
// as its file; a logical key or another pattern shows as a lock whose
// path is the key.
type LFSLock struct {
	ID       string    `json:"id"`
	Path     string    `json:"path"`
	LockedAt time.Time `json:"locked_at"`
	Owner    LFSOwner  `json:"owner"`
	// Ref is the branch a branch lock holds on (locks.per_branch), as the
	// protocol names refs; absent for a lock that holds on every branch.
	Ref *LFSRef `json:"ref,omitempty"`
}

// LFSRef is a ref of the git-lfs API: a full ref name.
type LFSRef struct {
	Name string `json:"name"`
}

// LFSOwner is a git-lfs lock's owner: the worker holding the lockgate lock.
type LFSOwner struct {
	Name string `json:"name"`
}

// lfsLockID is the git-lfs id of lockgate lock l: its key in base64url
// (unpadded), a '.', and the first 16 bytes, in hex, of SHA-256 over the
// key, a zero byte and the lock's owner token. The token is random for
// each grant and kept by its renewals and refreshes, so the id names one
// grant, and no one who has not been shown the id can make it: the key
// and the fence are in every listing, the token in none (and the hash
// gives none of it back). The key part lets an unlock find the one
// record the id names (lfsIDKey) instead of reading the whole table.
func lfsLockID(l locks.Lock) string {
	h := sha256.New()
	h.Write([]byte(l.Key))
	h.Write([]byte{0})
	h.Write([]byte(l.Token))
	return base64.RawURLEncoding.EncodeToString([]byte(l.Key)) + "." + hex.EncodeToString(h.Sum(nil)[:16])
}

// lfsIDKey is the key a git-lfs lock id (lfsLockID) names; ok is false
// for a string that is no such id.
func lfsIDKey(id string) (key string, ok bool) {
	k, sum, found := strings.Cut(id, ".")
	if !found || len(sum) != 32 || k == "" {
		return "", false
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return "", false
	}
	// Strict: one key, one spelling of its id.
	b, err := base64.RawURLEncoding.Strict().DecodeString(k)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// LFSLockOf is l as the git-lfs API shows it.
func LFSLockOf(l locks.Lock) LFSLock {
	v := LFSLock{ID: lfsLockID(l), Path: lfsFileOf(lockkey.Unbranched(l.Key)), LockedAt: l.CreatedAt.UTC(), Owner: LFSOwner{Name: l.Holder}}
	if b, _, ok := lockkey.SplitBranch(l.Key); ok {
		v.Ref = &LFSRef{Name: "refs/heads/" + b}
	}
	return v
}

// lfsBranch is the branch whose locks a git-lfs request means: the
// branch ref names under locks.per_branch, else "" (every lock holds on
// every branch). A ref other than a branch's (a tag) names none.
func (e *Workspace) lfsBranch(ref string) (string, error) {
	if err := lfsRef(ref); err != nil {
		return "", err
	}
	b, ok := strings.CutPrefix(ref, "refs/heads/")
	if !ok || !e.Cfg.Locks.PerBranch {
		return "", nil
	}
	if r := lockkey.BranchProblem(b); r != "" {
		return "", Usagef("ref %q: lockgate cannot lock on this branch: %s", ref, r)
	}
	return b, nil
}

// holdsOn reports whether the lock on key holds on branch: a lock
// without a branch holds on every one, a branch lock on its own; with
// branch "" every lock is shown.
func holdsOn(key, branch string) bool {
	b, _, ok := lockkey.SplitBranch(key)
	return branch == "" || !ok || b == branch
}

// lfsGlob are the characters that make a lock key a pattern and that a
// one-character class can name; '[' and '{' cannot be named so
// (lockgate reads "[[]" and "[{]" as unbalanced).
const lfsGlob = "*?"

// lfsKey is the lock key of the file at path p, which a git-lfs client
// always means as a file: p itself when lockgate reads it as that path,
// else p with its first character and every '*' and '?' each written as a
// one-character class (docs/keys.md): `db:dump.psd` is `[d]b:dump.psd`,
// `a*.psd` is `[a][*].psd`, a pattern that covers exactly that file. A
// path lockgate cannot lock even so (inside .git, holding '[' or '{',
// too long) is a usage error naming it.
func lfsKey(p string, opts *lockkey.Options) (string, error) {
	k, err := lockkey.Parse(p, opts)
	if err == nil && k.Kind == lockkey.KindPath && k.Canonical == p {
		return p, nil
	}
	if strings.ContainsAny(p, "[{") {
		return "", Usagef("%s: lockgate cannot lock this file: '[' and '{' in a lock key are pattern syntax, and no key names a file with them", lockkey.Shorten(p))
	}
	// The rules of a path (not inside .git, no whitespace at a segment's
	// end ...) still hold past a start that reads as a key: checked on p
	// as a path under a directory, its glob characters made plain.
	plain := "x/" + strings.NewReplacer("*", "_", "?", "_").Replace(p)
	if pk, perr := lockkey.Parse(plain, opts); perr != nil || pk.Kind != lockkey.KindPath || pk.Canonical != plain {
		if err == nil {
			err = perr
		}
		if err == nil {
			err = errors.New("it is no clean path")
		}
		return "", Usagef("%s: lockgate cannot lock this file: %v", lockkey.Shorten(p), err)
	}
	var b strings.Builder
	for i, r := range p {
		if i == 0 || strings.ContainsRune(lfsGlob, r) {
			b.WriteString("[" + string(r) + "]")
		} else {
			b.WriteRune(r)
		}
	}
	q := b.String()
	kq, qerr := lockkey.Parse(q, opts)
	if qerr == nil && kq.Kind == lockkey.KindPattern && kq.Canonical == q && lockkey.MatchPath(q, p) {
		return q, nil
	}
	if qerr == nil {
		qerr = fmt.Errorf("lockgate reads %s as the %s key %s", lockkey.Shorten(q), kq.Kind, lockkey.Shorten(kq.Canonical))
	}
	return "", Usagef("%s: lockgate cannot lock this file: %v", lockkey.Shorten(p), qerr)
}

// lfsFileOf is the file path a git-lfs client sees for lock key k: the
// path lfsKey wrote as one-character classes, else k itself (a path, or
// a pattern or logical key taken with lockgate).
func lfsFileOf(k string) string {
	if !strings.HasPrefix(k, "[") {
		return k
	}
	var b strings.Builder
	rs := []rune(k)
	for i := 0; i < len(rs); i++ {
		if rs[i] == '[' && i+2 < len(rs) && rs[i+2] == ']' {
			b.WriteRune(rs[i+1])
			i += 2
			continue
		}
		b.WriteRune(rs[i])
	}
	p := b.String()
	if q, err := lfsKey(p, nil); err == nil && q == k {
		return p
	}
	return k
}

// LFSNotFoundError is a git-lfs lock id that names no live lock.
type LFSNotFoundError struct{ ID string }

func (e *LFSNotFoundError) Error() string { return "no lock with id " + e.ID }

// lfsPath checks a path a git-lfs client sends: relative to the
// repository's top, inside it. A server's working directory means nothing
// to its client, and nothing outside the repository is a lock.
func lfsPath(p string) (string, error) {
	if p == "" {
		return "", Usagef("the lock needs a path")
	}
	if strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return "", Usagef("%s: a lock's path is relative to the repository's top, inside it, in clean form", p)
	}
	return p, nil
}

// maxLFSRef bounds the ref a git-lfs client names.
const maxLFSRef = 1024

// lfsRef checks the ref a git-lfs client names (git-lfs 3 sends the
// branch it works on: "ref" with a lock, an unlock or a verify,
// "refspec" with a list): "" when it names none, else a full ref name
// git would accept. Under locks.per_branch a branch's ref picks its
// locks (lfsBranch); a malformed ref is a client lockgate cannot judge,
// and is refused.
func lfsRef(ref string) error {
	if ref == "" {
		return nil
	}
	bad := len(ref) > maxLFSRef || !strings.HasPrefix(ref, "refs/") || strings.HasSuffix(ref, "/") ||
		strings.HasSuffix(ref, ".") || strings.Contains(ref, "..") || strings.Contains(ref, "//") ||
		strings.Contains(ref, "@{") || strings.ContainsFunc(ref, func(r rune) bool {
		return r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r)
	})
	for _, part := range strings.Split(ref, "/") {
		bad = bad || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock")
	}
	if bad {
		return Usagef("ref %q: not a full git ref name (refs/heads/BRANCH)", ref)
	}
	return nil
}

// LFSCreateRequest is git-lfs's POST /locks. Ref is the branch the
// client works on: under locks.per_branch the lock holds on that branch
// only, else on every branch.
type LFSCreateRequest struct {
	Path, Ref string
}

// LFSCreateLock takes a lockgate path lock on r.Path for the workspace's
// worker (see As), with its worker type's TTL; a lock the worker holds
// already is renewed. Held by another worker, the error is a
// *locks.HeldError naming that lock.
func (e *Workspace) LFSCreateLock(ctx context.Context, r LFSCreateRequest) (LFSLock, error) {
	branch, err := e.lfsBranch(r.Ref)
	if err != nil {
		return LFSLock{}, err
	}
	p, err := lfsPath(r.Path)
	if err != nil {
		return LFSLock{}, err
	}
	key, err := lfsKey(p, e.KeyOptions())
	if err != nil {
		return LFSLock{}, err
	}
	res, err := e.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{key}, Tool: true, Reason: "git lfs lock", Branch: branch})
	if err != nil {
		return LFSLock{}, err
	}
	if len(res.Locks) != 1 {
		return LFSLock{}, errors.New("git lfs lock: the store answered for no lock")
	}
	return LFSLockOf(res.Locks[0].Lock), nil
}

// LFSListRequest is git-lfs's GET /locks: the locks on Path, or the one
// with ID, or all; a page of at most Limit (0, or above lockops.MaxPage, is
// lockops.MaxPage) from Cursor. Refspec is the branch the client asks about:
// under locks.per_branch only the locks that hold on it are listed.
type LFSListRequest struct {
	Path, ID, Cursor, Refspec string
	Limit                     int
}

// LFSListResult is one page of locks and the cursor of the next ("" when
// this is the last).
type LFSListResult struct {
	Locks      []LFSLock `json:"locks"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// lfsShown reports whether the store's entry en is a lock git-lfs sees:
// readable, live, and no bookkeeping record (as `lock list` leaves out).
func (e *Workspace) lfsShown(en locks.Entry, now time.Time) bool {
	return en.Err == nil && !en.Expired(now) && !session.IsBookkeeping(en.Lock)
}

// lfsPage is a page of at most limit live locks that hold on branch
// (holdsOn) and that keep accepts (nil: all), from cursor, and the next page's cursor ("" after the last). It
// reads the store a page at a time (locks.Store.Page): the records of
// the page, not the whole table, beside the store's listing of names.
// The cursor is the store's position of the last record the page looked
// at, so a lock that stays in the store while a client pages is listed
// once, whatever is locked or unlocked between its requests.
func (e *Workspace) lfsPage(ctx context.Context, cursor string, limit int, branch string, keep func(LFSLock) bool) ([]LFSLock, string, error) {
	after, err := lockops.PagePosition(cursor)
	if err != nil {
		return nil, "", err
	}
	limit = lockops.PageLimit(limit)
	now := e.Now()
	out := []LFSLock{}
	for {
		entries, next, err := e.Store.Page(ctx, after, limit-len(out))
		if err != nil {
			return nil, "", fmt.Errorf("list locks: %w", err)
		}
		lockops.SortByKey(entries)
		for _, en := range entries {
			if !e.lfsShown(en, now) || !holdsOn(en.Key, branch) {
				continue
			}
			if v := LFSLockOf(en.Lock); keep == nil || keep(v) {
				out = append(out, v)
			}
		}
		if next == "" {
			return out, "", nil
		}
		if len(out) >= limit {
			return out, lockops.PageCursor(next), nil
		}
		after = next
	}
}

// lfsLocksOn is the live locks git-lfs sees at path p that hold on
// branch (holdsOn): the lock of the key lfsKey makes of p, and a lock
// whose key is p itself (a logical key or pattern shows as a lock whose
// path is its key), each also as a branch lock under locks.per_branch.
// Their records are read by key, so that `git lfs locks --path` (and
// `git lfs unlock PATH`, which looks its lock up so) costs the same with
// any number of locks; only a request without a branch under
// locks.per_branch reads the branch locks, all of them, for the path's.
func (e *Workspace) lfsLocksOn(ctx context.Context, p, branch string) ([]LFSLock, error) {
	var keys []string
	if k, err := lockkey.Parse(p, e.KeyOptions()); err == nil && k.Canonical == p {
		keys = append(keys, p)
	}
	if q, err := lfsKey(p, e.KeyOptions()); err == nil && q != p {
		keys = append(keys, q)
	}
	now := e.Now()
	out := []LFSLock{}
	add := func(l locks.Lock) {
		if v := LFSLockOf(l); e.lfsShown(locks.Entry{Lock: l}, now) && holdsOn(l.Key, branch) && v.Path == p {
			out = append(out, v)
		}
	}
	if e.Cfg.Locks.PerBranch {
		if branch != "" {
			var branched []string
			for _, k := range keys {
				branched = append(branched, lockkey.BranchKey(branch, k))
			}
			keys = append(keys, branched...)
		} else {
			entries, err := e.Store.InNamespace(ctx, lockkey.BranchNamespace)
			if err != nil {
				return nil, fmt.Errorf("read the branch locks: %w", err)
			}
			for _, en := range entries {
				if en.Err == nil {
					add(en.Lock)
				}
			}
		}
	}
	for _, k := range keys {
		l, err := e.Store.Get(ctx, k)
		var corrupt *locks.CorruptError
		if errors.Is(err, locks.ErrNotFound) || errors.As(err, &corrupt) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read the lock on %s: %w", lockkey.Shorten(k), err)
		}
		add(l)
	}
	return out, nil
}

// LFSListLocks lists the live locks as git-lfs shows them: a page of
// r.Limit (lockops.MaxPage without one) from r.Cursor, or the locks on r.Path.
func (e *Workspace) LFSListLocks(ctx context.Context, r LFSListRequest) (LFSListResult, error) {
	branch, err := e.lfsBranch(r.Refspec)
	if err != nil {
		return LFSListResult{}, err
	}
	if r.Path != "" {
		if _, err := lockops.PagePosition(r.Cursor); err != nil {
			return LFSListResult{}, err
		}
		on, err := e.lfsLocksOn(ctx, r.Path, branch)
		if err != nil {
			return LFSListResult{}, err
		}
		out := on[:0]
		for _, v := range on {
			if r.ID == "" || v.ID == r.ID {
				out = append(out, v)
			}
		}
		if r.Refspec == "" && len(out) > 1 {
			out = e.ownFirst(out)
		}
		return LFSListResult{Locks: out}, nil
	}
	var keep func(LFSLock) bool
	if r.ID != "" {
		keep = func(v LFSLock) bool { return v.ID == r.ID }
	}
	got, next, err := e.lfsPage(ctx, r.Cursor, r.Limit, branch, keep)
	return LFSListResult{Locks: got, NextCursor: next}, err
}

// ownFirst is the locks of one path on several branches as `git lfs
// unlock PATH` needs them: it looks its lock up by path alone, without
// the branch, and gives up on more than one. The caller's own locks are
// the ones such an unlock means; when the caller holds none of them, all
// (git-lfs then asks for `--id`).
func (e *Workspace) ownFirst(ls []LFSLock) []LFSLock {
	var mine []LFSLock
	for _, l := range ls {
		if l.Owner.Name == e.Me.Holder {
			mine = append(mine, l)
		}
	}
	if len(mine) == 0 {
		return ls
	}
	return mine
}

// LFSVerifyRequest is git-lfs's POST /locks/verify: a page of the locks,
// split by holder. Ref is the branch being pushed: under
// locks.per_branch only the locks that hold on it count.
type LFSVerifyRequest struct {
	Cursor, Ref string
	Limit       int
}

// LFSVerifyResult is the workspace's worker's locks (Ours) and everyone
// else's (Theirs).
type LFSVerifyResult struct {
	Ours       []LFSLock `json:"ours"`
	Theirs     []LFSLock `json:"theirs"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// LFSVerifyLocks is a page of the live locks, the worker's apart.
func (e *Workspace) LFSVerifyLocks(ctx context.Context, r LFSVerifyRequest) (LFSVerifyResult, error) {
	all, err := e.LFSListLocks(ctx, LFSListRequest{Cursor: r.Cursor, Limit: r.Limit, Refspec: r.Ref})
	if err != nil {
		return LFSVerifyResult{}, err
	}
	out := LFSVerifyResult{Ours: []LFSLock{}, Theirs: []LFSLock{}, NextCursor: all.NextCursor}
	for _, l := range all.Locks {
		if l.Owner.Name == e.Me.Holder {
			out.Ours = append(out.Ours, l)
		} else {
			out.Theirs = append(out.Theirs, l)
		}
	}
	return out, nil
}

// LFSUnlockRequest is git-lfs's POST /locks/:id/unlock. Ref is checked;
// the id alone names the lock, on its branch or on every one.
type LFSUnlockRequest struct {
	ID, Ref string
	// Force removes another worker's lock: a clear, logged as lock_clear.
	Force bool
}

// LFSUnlock releases the lock with r.ID: the worker's own, or with Force
// anyone's. Another worker's without Force is a *locks.NotOwnerError; an
// id of no live lock a *LFSNotFoundError.
func (e *Workspace) LFSUnlock(ctx context.Context, r LFSUnlockRequest) (LFSLock, error) {
	if err := lfsRef(r.Ref); err != nil {
		return LFSLock{}, err
	}
	l, err := e.lfsLockByID(ctx, r.ID)
	if err != nil {
		return LFSLock{}, err
	}
	if l.Holder != e.Me.Holder {
		if !r.Force {
			return LFSLock{}, &locks.NotOwnerError{Lock: l, Op: "unlock"}
		}
		if _, err := e.Locks().Clear(ctx, lockops.ClearRequest{Target: l.Key, Force: true}); err != nil {
			return LFSLock{}, err
		}
		return LFSLockOf(l), nil
	}
	if _, err := e.Mgr.Release(ctx, []string{l.Key}, e.Me, false); err != nil {
		return LFSLock{}, err
	}
	return LFSLockOf(l), nil
}

// lfsLockByID is the live lock whose git-lfs id is id: the one record
// the id's key names, read alone, its id compared in constant time. An
// id of no live lock, or no id at all, is a *LFSNotFoundError.
func (e *Workspace) lfsLockByID(ctx context.Context, id string) (locks.Lock, error) {
	notFound := &LFSNotFoundError{ID: lockkey.Shorten(id)}
	key, ok := lfsIDKey(id)
	if !ok {
		return locks.Lock{}, notFound
	}
	l, err := e.Store.Get(ctx, key)
	var corrupt *locks.CorruptError
	switch {
	case errors.Is(err, locks.ErrNotFound), errors.As(err, &corrupt):
		return locks.Lock{}, notFound
	case err != nil:
		return locks.Lock{}, err
	}
	if l.Expired(e.Now()) || session.IsBookkeeping(l) || subtle.ConstantTimeCompare([]byte(lfsLockID(l)), []byte(id)) != 1 {
		return locks.Lock{}, notFound
	}
	return l, nil
}

// JournalCursor is where a stream of the clone's journal goes on from:
// a byte offset in a segment named by the digest of its first line. The
// zero cursor reads the whole journal.
type JournalCursor struct {
	Off     int64
	Segment string
}

// EventsFrom is a stream's next events: those the clone's journal holds
// past cursor at that r's Worker, Action and Key keep (its other fields
// are the backlog's, for Log), in the journal's order, and the cursor to
// read from next. A cursor the journal cannot have given (it was
// replaced) reads it again from its start. When the journal was rotated
// since, the rest of the segment the cursor is in (now the previous one)
// comes first, so that no event is skipped.
func (e *Workspace) EventsFrom(r LogRequest, at JournalCursor) ([]LogEvent, JournalCursor, error) {
	j := e.JournalFile()
	evs, end, segment, err := j.ReadFrom(at.Off, at.Segment)
	if err != nil {
		return nil, JournalCursor{}, err
	}
	if at.Segment != "" && segment != at.Segment {
		prev, _, prevSegment, err := journal.Open(j.PreviousPath()).ReadFrom(at.Off, at.Segment)
		if err != nil {
			return nil, JournalCursor{}, err
		}
		if prevSegment == at.Segment {
			evs = append(prev, evs...)
		}
	}
	keep := LogRequest{Worker: r.Worker, Action: r.Action, Key: r.Key}
	out := evs[:0]
	for _, ev := range evs {
		if keep.keep(ev) {
			out = append(out, ev)
		}
	}
	return out, JournalCursor{Off: end, Segment: segment}, nil
}
