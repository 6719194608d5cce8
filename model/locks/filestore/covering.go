package filestore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/record"
	"github.com/lockgate/lockgate/model/pathmatch"
)

// listThreshold is the number of paths above which Covering lists the
// directory once instead of probing one name per path: a probe costs about
// what listing ten names does.
const listThreshold = 20000

// Covering returns the records of paths and of the pattern locks matching
// any of them. Up to listThreshold paths are probed one name each; more are
// intersected with one listing of the directory. Pattern records are read
// only when their key, decoded from the file name, matches a path.
func (s *Store) Covering(ctx context.Context, paths []string) ([]locks.Entry, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	// The name a record of each path has: that of its identity; and the
	// leftovers of that identity (see migrate).
	names := make([]string, 0, len(paths))
	var leftovers []string
	for _, p := range paths {
		id := p
		if s.fold {
			id = lockkey.FoldPath(p) // a path, even one named like a reserved key
		}
		names = append(names, record.Stem(id)+record.Suffix)
		leftovers = append(leftovers, s.leftovers[id]...)
	}
	files := leftovers
	if len(names) <= listThreshold {
		found, err := present(s.dir, names)
		if err != nil {
			return nil, s.unavailable("covering", err)
		}
		files = append(files, found...)
	} else {
		listed, err := readNames(s.dir)
		if err != nil {
			return nil, s.unavailable("covering", err)
		}
		present := make(map[string]bool, len(listed))
		for _, n := range listed {
			present[n] = true
		}
		for _, name := range names {
			if present[name] {
				files = append(files, filepath.Join(s.dir, name))
			}
		}
	}
	patNames, err := readNames(s.patDir)
	if err != nil {
		return nil, s.unavailable("covering", err)
	}
	if len(patNames) > 0 {
		var pats []string
		var patFiles []string
		for _, n := range patNames {
			stem := strings.TrimSuffix(n, record.Suffix)
			key, ok := record.KeyOfStem(stem)
			if !ok && !record.IsHashedStem(stem) {
				continue // no key's record: see record.IsHashedStem
			}
			if !ok {
				// Hashed name: its key is only inside; read it.
				files = append(files, filepath.Join(s.patDir, n))
				continue
			}
			if s.fold {
				// The name is the pattern's identity or a leftover's spelling.
				key, ok = lockkey.FoldedGlob(key)
			} else {
				ok = lockkey.Namespace(key) == ""
			}
			if ok {
				pats, patFiles = append(pats, key), append(patFiles, filepath.Join(s.patDir, n))
			}
		}
		m, err := pathmatch.NewMatcher(pats, false)
		if err != nil {
			return nil, fmt.Errorf("covering: pattern lock: %w", err)
		}
		for i, h := range m.MatchedAny(s.matchForm(paths)) {
			if h {
				files = append(files, patFiles[i])
			}
		}
	}
	entries, err := s.readEntries(ctx, files)
	if err != nil {
		return nil, err
	}
	entries = dedupe(entries)
	sortEntries(entries)
	return entries, nil
}

// InNamespace returns every record of namespace ns, patterns included.
func (s *Store) InNamespace(ctx context.Context, ns string) ([]locks.Entry, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	prefix := record.Stem(ns + ":")
	var files []string
	for _, d := range []string{s.keyDir, s.patDir} {
		names, err := readNames(d)
		if err != nil {
			return nil, s.unavailable("namespace "+ns, err)
		}
		for _, n := range names {
			if strings.HasPrefix(n, prefix) || strings.HasPrefix(n, string(record.HashPrefix)) {
				files = append(files, filepath.Join(d, n))
			}
		}
	}
	entries, err := s.readEntries(ctx, files)
	if err != nil {
		return nil, err
	}
	out := entries[:0]
	for _, e := range entries {
		if e.Err != nil || lockkey.Namespace(e.Key) == ns {
			out = append(out, e)
		}
	}
	sortEntries(out)
	return out, nil
}

// matchForm returns paths as pattern locks are matched against them.
func (s *Store) matchForm(paths []string) []string { return lockkey.MatchForm(paths, s.fold) }

func dedupe(entries []locks.Entry) []locks.Entry {
	seen := make(map[string]bool, len(entries))
	out := entries[:0]
	for _, e := range entries {
		if seen[e.Name] {
			continue
		}
		seen[e.Name] = true
		out = append(out, e)
	}
	return out
}
