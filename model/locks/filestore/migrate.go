package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/record"
)

// unicodeMarker, in the store's directory, says that every path and
// pattern record is kept under its folded identity (lockkey.FoldCase).
// Versions before keys were always folded kept them under their spelling
// in a repository without core.ignorecase, and versions that folded A-Z
// only under that identity (lockkey.FoldCaseASCII), marking the store
// with foldedMarker; Open moves such records once, so that lookups need no
// more than the identity's file (a hook's probes stay one per path).
const (
	unicodeMarker = ".folded-unicode"
	foldedMarker  = ".folded"
)

// migrate moves records an earlier version kept under a spelling or an
// A-Z-folded identity to the file of their identity, unless the store is
// marked folded already (one stat on every open). A new store (no guard file yet, so no lock ever
// taken) is only marked. Otherwise it holds every guard stripe meanwhile,
// so no acquisition runs in between. A record whose identity's file is taken
// (two spellings locked by earlier versions) stays where it is, in
// s.leftovers, and both stay visible and held; the store is marked only
// once none is left, so a later open moves it when the other is gone.
func (s *Store) migrate() error {
	marker := filepath.Join(s.dir, unicodeMarker)
	if _, err := os.Lstat(marker); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return s.unavailable("open", err)
	}
	if fresh, err := s.fresh(); err != nil {
		return s.unavailable("open", err)
	} else if fresh {
		return s.mark(marker)
	}
	ctx := context.Background()
	guards := make([]*guard, len(s.stripes))
	for i := range s.stripes {
		g, err := s.lockStripe(ctx, i, "migrate")
		if err != nil {
			return err
		}
		defer g.unlock()
		guards[i] = g
	}
	if err := s.liftFences(guards); err != nil {
		return err
	}
	s.leftovers = map[string][]string{}
	for _, d := range []string{s.dir, s.patDir} {
		names, err := readNames(d)
		if err != nil {
			return s.unavailable("open", err)
		}
		for _, n := range names {
			src := filepath.Join(d, n)
			key, ok := s.spelledKey(src, n)
			if !ok {
				continue
			}
			id := lockkey.FoldCase(key)
			err := os.Link(src, s.fileOf(key, id))
			switch {
			case err == nil:
				err = os.Remove(src)
			case errors.Is(err, fs.ErrExist):
				s.leftovers[id] = append(s.leftovers[id], src)
				err = nil
			case errors.Is(err, fs.ErrNotExist):
				err = nil
			}
			if err != nil {
				return s.unavailable("open: move "+key+" to its folded name", err)
			}
		}
		if err := s.syncDirOf(filepath.Join(d, "x")); err != nil {
			return s.unavailable("open", err)
		}
	}
	if len(s.leftovers) > 0 {
		return nil
	}
	return s.mark(marker)
}

// fresh reports a store no lock was ever taken in: no guard file, no
// record.
func (s *Store) fresh() (bool, error) {
	for _, d := range []string{s.guards, s.dir, s.patDir} {
		f, err := os.Open(d)
		if err != nil {
			return false, err
		}
		names, err := f.Readdirnames(-1)
		_ = f.Close() // read only: nothing to lose
		if err != nil {
			return false, err
		}
		for _, n := range names {
			if d == s.guards || strings.HasSuffix(n, record.Suffix) {
				return false, nil
			}
		}
	}
	return true, nil
}

// mark creates the marker file that says the store is folded, and the
// one versions that folded A-Z only look for, so that they do not look
// for records under a spelling again.
func (s *Store) mark(marker string) error {
	for _, m := range []string{filepath.Join(s.dir, foldedMarker), marker} {
		f, err := safefs.OpenFile(m, os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			return s.unavailable("open", err)
		}
		if err := f.Close(); err != nil {
			return s.unavailable("open", err)
		}
	}
	return s.syncDirOf(marker)
}

// spelledKey returns the key of the record file named n at path when it is
// kept under a spelling or an A-Z-folded identity that is not its
// identity: the name says so, or, for a hashed name, the record inside
// does.
func (s *Store) spelledKey(path, n string) (string, bool) {
	stem := strings.TrimSuffix(n, record.Suffix)
	key, ok := record.KeyOfStem(stem)
	if !ok {
		if !record.IsHashedStem(stem) {
			return "", false
		}
		data, err := s.readFile(path, nil)
		if err != nil {
			return "", false
		}
		rec, err := record.Parse(data)
		if err != nil {
			return "", false // corrupt: listed, blocks as before
		}
		key = rec.Key
	}
	if !lockkey.IsPathLike(key) || path == s.fileOf(key, lockkey.FoldCase(key)) {
		return "", false
	}
	if path != s.fileOf(key, key) && path != s.fileOf(key, lockkey.FoldCaseASCII(key)) {
		return "", false // not where any version put it: listed, blocks nothing
	}
	return key, true
}

// liftFences raises every stripe's fence counter to the highest of them: a
// key moved to its identity changes stripe, and its fences must keep
// growing (a fresh store has none to lift).
func (s *Store) liftFences(guards []*guard) error {
	var top uint64
	seen := make([]uint64, len(guards))
	for i, g := range guards {
		var buf [fenceFileSize]byte
		n, err := g.st.f.ReadAt(buf[:], 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return s.unavailable("read fence", err)
		}
		if n == fenceFileSize {
			// The ceiling is never below a fence handed out.
			seen[i] = max(binary.BigEndian.Uint64(buf[0:8]), binary.BigEndian.Uint64(buf[8:16]))
			top = max(top, seen[i])
		}
	}
	for i, g := range guards {
		if seen[i] < top {
			if _, err := s.nextFence(g, top); err != nil {
				return err
			}
		}
	}
	return nil
}
