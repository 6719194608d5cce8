package lockops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// ReadOnlySync is what SyncReadOnly changed in the worktree: the files it
// made read-only (held by another, or lockable and not locked by this
// worker) and those it made writable again.
type ReadOnlySync struct {
	ReadOnly []string `json:"read_only"`
	Writable []string `json:"writable"`
	// Enabled is locks.read_only.
	Enabled bool `json:"enabled"`
}

// readOnlyState is the mode each file had before lockgate made it
// read-only, by repo-relative path: the mode it is given back. It lives
// in the worktree's git directory: every worktree has files of its own.
type readOnlyState map[string]fs.FileMode

func (e *Handler) readOnlyFile() string {
	return filepath.Join(e.GitDir(), "lockgate", "read-only.json")
}

// SyncReadOnly applies locks.read_only to this worktree: a file another
// worker holds (by its path, or under a pattern lock) and a file
// .gitattributes marks `lockable` that this worker has not locked lose
// their write permission; every other file lockgate made read-only gets
// back the mode it had. Content is never touched. With read_only off,
// only the giving back is done, so turning it off undoes it.
func (e *Handler) SyncReadOnly(ctx context.Context) (*ReadOnlySync, error) {
	out := &ReadOnlySync{Enabled: e.Cfg.Locks.ReadOnly}
	if e.WorkTree() == "" {
		return out, nil
	}
	unlock, err := e.lockReadOnly(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	state, err := e.loadReadOnly()
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	if out.Enabled {
		if want, err = e.readOnlyWanted(ctx); err != nil {
			return nil, err
		}
	}
	if len(want) == 0 && len(state) == 0 {
		return out, nil
	}
	for p := range want {
		full := filepath.Join(e.WorkTree(), filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		if err != nil || !fi.Mode().IsRegular() {
			continue // not here (yet), or not a file whose mode means writing
		}
		perm := fi.Mode().Perm()
		orig, known := state[p]
		if !known {
			orig = perm
		}
		if perm&0o222 != 0 {
			if err := os.Chmod(full, perm&^0o222); err != nil {
				return nil, fmt.Errorf("make %s read-only: %w", p, err)
			}
			out.ReadOnly = append(out.ReadOnly, p)
		}
		state[p] = orig
	}
	for p, orig := range state {
		if want[p] {
			continue
		}
		delete(state, p)
		full := filepath.Join(e.WorkTree(), filepath.FromSlash(p))
		fi, err := os.Lstat(full)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != orig&^0o222 {
			continue // gone, replaced, or its mode changed since: left alone
		}
		if err := os.Chmod(full, orig); err != nil {
			return nil, fmt.Errorf("make %s writable again: %w", p, err)
		}
		out.Writable = append(out.Writable, p)
	}
	sort.Strings(out.ReadOnly)
	sort.Strings(out.Writable)
	return out, e.saveReadOnly(state)
}

// readOnlyWanted are the files to keep read-only: held by another live
// lock, or lockable and not covered by a live lock of this worker.
func (e *Handler) readOnlyWanted(ctx context.Context) (map[string]bool, error) {
	if err := e.Open(ctx, session.Purpose{}); err != nil {
		return nil, err
	}
	entries, err := e.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	fold, err := e.IgnoreCase(ctx)
	if err != nil {
		return nil, err
	}
	now := e.Now()
	var others, mine []locks.Entry
	for _, en := range entries {
		if en.Err != nil || !lockkey.IsPathLike(en.Key) || en.Expired(now) {
			continue
		}
		if en.OwnedBy(e.Me) {
			mine = append(mine, en)
		} else {
			others = append(others, en)
		}
	}
	var files []string
	listed := false
	list := func() ([]string, error) {
		if !listed {
			listed = true
			files, err = gitexec.WorktreeFiles(ctx, e.repo(), "")
		}
		return files, err
	}
	covers := func(es []locks.Entry, p string) bool {
		return slices.ContainsFunc(es, func(en locks.Entry) bool { return keyCovers(en.Key, p, fold) })
	}
	want := map[string]bool{}
	for _, en := range others {
		if !lockkey.IsPattern(en.Key) {
			want[en.Key] = true
			continue
		}
		all, err := list()
		if err != nil {
			return nil, err
		}
		for _, f := range all {
			if keyCovers(en.Key, f, fold) {
				want[f] = true
			}
		}
	}
	lockable, err := gitexec.WorktreeFiles(ctx, e.repo(), "lockable")
	if err != nil {
		return nil, err
	}
	for _, f := range lockable {
		if !covers(mine, f) {
			want[f] = true
		}
	}
	for _, en := range mine {
		if !lockkey.IsPattern(en.Key) {
			delete(want, en.Key) // held by me and by another: mine to edit
		}
	}
	return want, nil
}

// keyCovers reports whether the path or pattern key covers path.
func keyCovers(key, path string, fold bool) bool {
	if !lockkey.IsPattern(key) {
		if fold {
			return lockkey.SameFoldCase(key, path)
		}
		return key == path
	}
	if fold {
		if g, ok := lockkey.FoldedGlob(key); ok {
			return lockkey.MatchPath(g, lockkey.Folded(path))
		}
	}
	return lockkey.MatchPath(key, path)
}

// lockReadOnly serializes the syncs of one worktree (a `guard watch`
// beside a `lock acquire`), as git does its index: a lock file made with
// O_EXCL. One left by a killed process is taken over after a while.
func (e *Handler) lockReadOnly(ctx context.Context) (func(), error) {
	file := e.readOnlyFile() + ".lock"
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", file, err)
	}
	const stale = 10 * time.Second
	deadline := time.Now().Add(2 * stale)
	for {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			_ = f.Close()
			return func() { _ = os.Remove(file) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", file, err)
		}
		if fi, err := os.Stat(file); err == nil && time.Since(fi.ModTime()) > stale {
			_ = os.Remove(file) // its process died mid-sync
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lock %s: another lockgate keeps it; remove it if no lockgate runs", file)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (e *Handler) loadReadOnly() (readOnlyState, error) {
	state := readOnlyState{}
	b, err := os.ReadFile(e.readOnlyFile())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return state, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", e.readOnlyFile(), err)
	}
	var raw map[string]uint32
	if err := json.Unmarshal(b, &raw); err != nil {
		// Without it, lockgate cannot know which modes to give back.
		return nil, fmt.Errorf("%s is not lockgate's record of the modes it changed (%v): make the files writable by hand (chmod u+w) and remove it", e.readOnlyFile(), err)
	}
	for p, m := range raw {
		state[p] = fs.FileMode(m).Perm()
	}
	return state, nil
}

func (e *Handler) saveReadOnly(state readOnlyState) error {
	file := e.readOnlyFile()
	if len(state) == 0 {
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", file, err)
		}
		return nil
	}
	raw := make(map[string]uint32, len(state))
	for p, m := range state {
		raw[p] = uint32(m)
	}
	data, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", file, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".read-only-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}
