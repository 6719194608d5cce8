package hooks

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/diffpath"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks"
)

// stagedRecord is what pre-commit leaves for commit-msg in the worktree's
// git dir: the committer's locks covering the staged change, so that
// commit-msg need not ask git for the change again. It is used only for
// the same index file, unchanged since (size and modification time), the
// same committer, and for recordMaxAge: a lock released while an editor is
// open on the message is not attested. Any other record is ignored.
type stagedRecord struct {
	Index   string
	Size    int64
	ModNano int64
	Holder  string
	Session string
	Written time.Time
	Locks   []heldLock
}

// recordMaxAge is how long after pre-commit commit-msg trusts its record:
// enough for `git commit -m`, not for a message being edited.
const recordMaxAge = 5 * time.Second

// heldLock is what a trailer names of a lock, and how long it holds.
type heldLock struct {
	Key       string
	Fence     uint64
	ExpiresAt time.Time
}

// stagedRecordFile is where the record lives: per worktree, since
// worktrees commit separately.
func stagedRecordFile(gitDir string) string {
	return filepath.Join(gitDir, "lockgate", "staged-locks")
}

// The record is NUL-separated fields (no path, key, worker id or session
// holds a NUL): a version, the key (index, size, mtime in ns, holder,
// session), when it was written (Unix ns), the number of locks, key, fence and expiry (Unix ns) of each,
// a CRC-32 of all that, and an end mark: a torn record is never read.
// Cheaper to read in a fresh process than JSON.
const (
	recordVersion = "lockgate-staged-locks-1"
	recordEnd     = "end"
)

func (rec stagedRecord) marshal() []byte {
	f := []string{recordVersion, rec.Index, strconv.FormatInt(rec.Size, 10), strconv.FormatInt(rec.ModNano, 10),
		rec.Holder, rec.Session, strconv.FormatInt(rec.Written.UnixNano(), 10), strconv.Itoa(len(rec.Locks))}
	for _, l := range rec.Locks {
		f = append(f, l.Key, strconv.FormatUint(l.Fence, 10), strconv.FormatInt(l.ExpiresAt.UnixNano(), 10))
	}
	body := strings.Join(f, "\x00") + "\x00"
	return []byte(body + strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(body))), 16) + "\x00" + recordEnd)
}

func unmarshalRecord(data []byte) (stagedRecord, bool) {
	s := string(data)
	i := strings.LastIndexByte(strings.TrimSuffix(s, "\x00"+recordEnd), 0)
	if !strings.HasSuffix(s, "\x00"+recordEnd) || i < 0 {
		return stagedRecord{}, false
	}
	sum, err := strconv.ParseUint(s[i+1:len(s)-len(recordEnd)-1], 16, 32)
	if err != nil || uint32(sum) != crc32.ChecksumIEEE([]byte(s[:i+1])) {
		return stagedRecord{}, false
	}
	f := strings.Split(s[:i], "\x00")
	if len(f) < 8 || f[0] != recordVersion {
		return stagedRecord{}, false
	}
	rec := stagedRecord{Index: f[1], Holder: f[4], Session: f[5]}
	var err1, err2, err3, err4 error
	var written int64
	rec.Size, err1 = strconv.ParseInt(f[2], 10, 64)
	rec.ModNano, err2 = strconv.ParseInt(f[3], 10, 64)
	written, err3 = strconv.ParseInt(f[6], 10, 64)
	rec.Written = time.Unix(0, written)
	n, err4 := strconv.Atoi(f[7])
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || n < 0 || n > len(f) || len(f) != 8+3*n {
		return stagedRecord{}, false
	}
	for i := 8; i < 8+3*n; i += 3 {
		fence, err1 := strconv.ParseUint(f[i+1], 10, 64)
		exp, err2 := strconv.ParseInt(f[i+2], 10, 64)
		if err1 != nil || err2 != nil {
			return stagedRecord{}, false
		}
		rec.Locks = append(rec.Locks, heldLock{Key: f[i], Fence: fence, ExpiresAt: time.Unix(0, exp)})
	}
	return rec, true
}

// indexKey identifies the staged state cheaply: the index file's path,
// size and modification time. ok is false when it cannot be read.
func (h *Runner) indexKey() (stagedRecord, bool) {
	if h.IndexFile == "" {
		return stagedRecord{}, false
	}
	fi, err := os.Stat(h.IndexFile)
	if err != nil {
		return stagedRecord{}, false
	}
	return stagedRecord{Index: h.IndexFile, Size: fi.Size(), ModNano: fi.ModTime().UnixNano(),
		Holder: h.Checker.Me.Holder, Session: h.Checker.Me.Session}, true
}

// recordStaged writes the record of a pre-commit check that passed, or
// removes an older one when there is nothing to record. Failing to write
// it costs commit-msg a `git diff --cached`, nothing else.
func (h *Runner) recordStaged(r *Report) {
	file := stagedRecordFile(h.GitDir)
	rec, ok := h.indexKey()
	if !ok || !r.OK || !r.locksRead {
		_ = os.Remove(file)
		return
	}
	rec.Locks, rec.Written = r.held, h.Checker.Now
	data := rec.marshal()
	// Written over the old record in place, not truncated to nothing
	// first nor renamed over it — both make the file system flush the data
	// at once; a torn record fails its checksum, and is not used.
	err := overwrite(file, data, true)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(file), 0o755); err == nil {
			err = overwrite(file, data, true)
		}
	}
	if err != nil {
		_ = os.Remove(file)
	}
}

// recordedHeld is the committer's covering locks pre-commit recorded for
// the index as it is now; ok is false when there is no such record, when
// it is older than recordMaxAge, or when one of its locks has expired since.
func (h *Runner) recordedHeld() ([]heldLock, bool) {
	key, ok := h.indexKey()
	if !ok {
		return nil, false
	}
	data, err := os.ReadFile(stagedRecordFile(h.GitDir))
	if err != nil {
		return nil, false
	}
	rec, ok := unmarshalRecord(data)
	if !ok {
		return nil, false
	}
	if rec.Index != key.Index || rec.Size != key.Size || rec.ModNano != key.ModNano ||
		rec.Holder != key.Holder || rec.Session != key.Session {
		return nil, false
	}
	if age := h.Checker.Now.Sub(rec.Written); age < 0 || age > recordMaxAge {
		return nil, false
	}
	for _, l := range rec.Locks {
		if l.ExpiresAt.Before(h.Checker.Now) {
			return nil, false
		}
	}
	return rec.Locks, true
}

// stagedPaths is what the staged change touches: staged yields git's
// name-status of it (nil: ask git). For a merge, only what it changes
// beyond its parents (MergeParents) counts.
func (h *Runner) stagedPaths(ctx context.Context, staged func() ([]byte, error)) ([]string, error) {
	if staged == nil {
		staged = func() ([]byte, error) { return gitexec.StagedNameStatus(ctx, h.Dir) }
	}
	out, err := staged()
	if err != nil {
		return nil, err
	}
	changes, err := diffpath.ParseNameStatusZ(out)
	if err != nil {
		return nil, fmt.Errorf("read staged changes: %w", err)
	}
	paths := touched(changes)
	for _, parent := range h.MergeParents {
		if len(paths) == 0 {
			break
		}
		out, err := gitexec.StagedAgainst(ctx, h.Dir, parent)
		if err != nil {
			return nil, fmt.Errorf("compare the merge with its parent %s: %w", shortSHA(parent), err)
		}
		changes, err := diffpath.ParseNameStatusZ(out)
		if err != nil {
			return nil, fmt.Errorf("read the merge's changes from its parent %s: %w", shortSHA(parent), err)
		}
		differs := map[string]bool{}
		for _, p := range touched(changes) {
			differs[p] = true
		}
		paths = slices.DeleteFunc(paths, func(p string) bool { return !differs[p] })
	}
	return paths, nil
}

// held keeps, of the entries covering a change, the live locks of Me,
// sorted by key.
func (c *Checker) held(entries []locks.Entry) []heldLock {
	var out []heldLock
	for _, e := range entries {
		if e.Err == nil && e.Key != "" && e.OwnedBy(c.Me) && !e.Expired(c.Now) {
			out = append(out, heldLock{e.Key, e.Fence, e.ExpiresAt})
		}
	}
	sortHeld(out)
	return out
}

func sortHeld(h []heldLock) { sort.Slice(h, func(i, j int) bool { return h[i].Key < h[j].Key }) }

// amended adds to held the locks an amended commit of Me attests (msg's
// Lockgate-Lock trailers, when its Lockgate-Worker and Lockgate-Session
// are Me's) that Me still holds under the same fence: an amend stages
// only what changes since, yet the commit it makes carries the original's
// changes too. Locks released or taken anew since are not attested.
func (c *Checker) amended(ctx context.Context, msg, comment string, held []heldLock) ([]heldLock, error) {
	worker, session, prev := parseTrailers(msg, comment)
	if worker != c.Me.Holder || session != c.Me.Session || len(prev) == 0 {
		return held, nil
	}
	have := make(map[string]bool, len(held))
	for _, l := range held {
		have[l.Key] = true
	}
	added := false
	for _, p := range prev {
		if have[p.Key] {
			continue
		}
		l, err := c.Store.Get(ctx, p.Key)
		switch {
		case errors.Is(err, locks.ErrNotFound):
			continue
		case err != nil:
			var ce *locks.CorruptError
			if errors.As(err, &ce) {
				continue
			}
			return nil, err
		}
		if l.OwnedBy(c.Me) && !l.Expired(c.Now) && l.Fence == p.Fence {
			have[p.Key], added = true, true
			held = append(held, heldLock{l.Key, l.Fence, l.ExpiresAt})
		}
	}
	if added {
		sortHeld(held)
	}
	return held, nil
}

// CommitMsg is the commit-msg hook: the checks of Checker.CommitMsg, then,
// with Trailers and when the commit may go ahead, the attestation trailers
// written into the message file. When the locks cannot be read and
// hooks.on_store_unavailable is warn, the message is left without
// trailers, and the report says so: a partial attestation would claim
// that no lock covered the change.
func (h *Runner) CommitMsg(ctx context.Context, file string, requireTask bool) (*Report, error) {
	r, err := h.Checker.CommitMsg(ctx, file, requireTask)
	if err != nil || !r.OK || !h.Trailers {
		return r, err
	}
	c := h.Checker
	if h.CommentString == "auto" {
		// git picks the comment character when it writes the template;
		// the hook cannot tell which lines are comments.
		r.Warnings = append(r.Warnings, "no lockgate trailers written: core.commentChar is auto; set it to a character")
		return r, nil
	}
	if c.Store == nil { // unavailable, and warned about
		r.Warnings = append(r.Warnings, noTrailers)
		return r, nil
	}
	// The committer's live locks covering the staged change: pre-commit's
	// record when it is for this index, else read anew.
	held, ok := h.recordedHeld()
	if !ok {
		paths, err := h.stagedPaths(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("commit-msg: %w", err)
		}
		if len(paths) > 0 {
			entries, err := c.Store.Covering(ctx, paths)
			if err != nil {
				if err := c.unavailable(r, err); err != nil {
					return nil, err
				}
				r.Warnings = append(r.Warnings, noTrailers)
				return r, nil
			}
			held = c.held(entries)
		}
	}
	msg, err := readCommitMsg(file)
	if err != nil {
		return nil, fmt.Errorf("commit-msg: %w", err)
	}
	if len(msg) > MaxCommitMsgBytes {
		r.Warnings = append(r.Warnings, fmt.Sprintf("no lockgate trailers written: the commit message is larger than %d KiB", MaxCommitMsgBytes>>10))
		return r, nil
	}
	if held, err = c.amended(ctx, string(msg), h.comment(), held); err != nil {
		if err := c.unavailable(r, err); err != nil {
			return nil, err
		}
		r.Warnings = append(r.Warnings, noTrailers)
		return r, nil
	}
	lines, err := Trailers(c.Me, held)
	if err != nil {
		return nil, fmt.Errorf("commit-msg: %w", err)
	}
	out := WithTrailers(string(msg), lines, h.comment())
	if out == string(msg) {
		return r, nil
	}
	if err := replaceFile(file, []byte(out)); err != nil {
		return nil, fmt.Errorf("commit-msg: write trailers: %w", err)
	}
	return r, nil
}

// comment begins a comment line of the message.
func (h *Runner) comment() string {
	if h.CommentString == "" {
		return "#"
	}
	return h.CommentString
}

const noTrailers = "no lockgate trailers written: the locks were not read"

// replaceFile writes data over the message file in place, as
// overwrite does: should the write fail half way, the hook fails and git
// makes no commit from the file.
func replaceFile(file string, data []byte) error { return overwrite(file, data, false) }

// overwrite writes data over file from its start and cuts what is left of
// the old content (create: make the file when missing).
func overwrite(file string, data []byte, create bool) error {
	flag := os.O_WRONLY
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(file, flag, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
