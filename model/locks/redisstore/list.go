package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/pathmatch"
)

// batch is the number of records one MGET reads.
const batch = 1000

// fetch reads the records of keys, batch keys per round trip. Keys without
// a record are left out; a key that holds something else than a record is
// a corrupt entry. indexed says the keys come from an index: they are read
// with MGET, and those found missing are dropped from the indexes (the
// prune script checks each again, atomically, and tells which exist but
// are no strings, which MGET cannot). Other keys are probed with one GET
// each, which tells a wrong type by itself. first, if not nil, is queued
// in the first round trip, so that a caller's other question costs no
// extra one.
func (s *Store) fetch(ctx context.Context, op string, keys []string, indexed bool, first func(redis.Pipeliner)) ([]locks.Entry, error) {
	octx, cancel := s.opCtx(ctx)
	defer cancel()
	var out []locks.Entry
	var missing []string
	for start := 0; start == 0 || start < len(keys); start += batch {
		chunk := keys[start:min(start+batch, len(keys))]
		if len(chunk) == 0 && first == nil {
			break
		}
		p := s.rdb.Pipeline()
		if start == 0 && first != nil {
			first(p)
		}
		var mget *redis.SliceCmd
		var gets []*redis.StringCmd
		switch {
		case len(chunk) == 0:
		case indexed:
			rk := make([]string, len(chunk))
			for i, k := range chunk {
				rk[i] = s.recKey(k)
			}
			mget = p.MGet(octx, rk...)
		default:
			gets = make([]*redis.StringCmd, len(chunk))
			for i, k := range chunk {
				gets[i] = p.Get(octx, s.recKey(k))
			}
		}
		_, _ = p.Exec(octx) // each command keeps its own error
		if mget != nil {
			vals, err := mget.Result()
			if err != nil {
				return nil, s.fail(ctx, op, err)
			}
			for i, v := range vals {
				if str, ok := v.(string); ok {
					out = append(out, s.entry(chunk[i], str))
				} else {
					missing = append(missing, chunk[i])
				}
			}
		}
		for i, g := range gets {
			v, err := g.Result()
			switch {
			case errors.Is(err, redis.Nil):
			case isWrongType(err):
				out = append(out, s.oddEntry(chunk[i]))
			case err != nil:
				return nil, s.fail(ctx, op, err)
			default:
				out = append(out, s.entry(chunk[i], v))
			}
		}
	}
	if len(missing) > 0 {
		odd, err := s.prune(ctx, op, missing)
		if err != nil {
			return nil, err
		}
		for _, k := range odd {
			out = append(out, s.oddEntry(k))
		}
	}
	return out, nil
}

// oddEntry is the corrupt entry of a key that holds no string.
func (s *Store) oddEntry(key string) locks.Entry {
	e := locks.Entry{Name: s.recKey(key), Err: s.corrupt(key, errors.New("the key holds something else than a lock record"))}
	e.Key = key
	return e
}

// prune drops index members whose records are gone and returns those whose
// keys exist but are no records (corrupt).
func (s *Store) prune(ctx context.Context, op string, missing []string) ([]string, error) {
	octx, cancel := s.opCtx(ctx)
	defer cancel()
	var odd []string
	for start := 0; start < len(missing); start += batch {
		chunk := missing[start:min(start+batch, len(missing))]
		args := make([]any, 0, len(chunk)+1)
		args = append(args, s.recPrefix())
		for _, k := range chunk {
			args = append(args, k)
		}
		v, err := pruneScript.redisScript().Run(octx, s.rdb, []string{s.kKeys, s.kPat}, args...).StringSlice()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, s.fail(ctx, op, err)
		}
		odd = append(odd, v...)
	}
	return odd, nil
}

// lex returns a ZRANGEBYLEX range covering every key that starts with
// prefix: UTF-8 never contains the byte 0xff.
func lex(prefix string) (min, max string) {
	if prefix == "" {
		return "-", "+"
	}
	return "[" + prefix, "(" + prefix + "\xff"
}

// keysWithPrefix reads the index of keys for the keys starting with prefix.
func (s *Store) keysWithPrefix(ctx context.Context, op, prefix string) ([]string, error) {
	octx, cancel := s.opCtx(ctx)
	defer cancel()
	lo, hi := lex(prefix)
	//nolint:staticcheck // ZRANGEBYLEX runs on every Redis; ZRANGE … BYLEX needs 6.2.
	keys, err := s.rdb.ZRangeByLex(octx, s.kKeys, &redis.ZRangeBy{Min: lo, Max: hi}).Result()
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return keys, nil
}

// List returns every record, sorted by key, from the index of keys (no KEYS
// or SCAN over the server). Records kept past their expiry
// (Options.ExpiredGrace) are listed; the caller tells them apart by
// ExpiresAt.
func (s *Store) List(ctx context.Context) ([]locks.Entry, error) {
	keys, err := s.keysWithPrefix(ctx, "list", "")
	if err != nil {
		return nil, err
	}
	entries, err := s.fetch(ctx, "list", keys, true, nil)
	if err != nil {
		return nil, err
	}
	sortEntries(entries)
	return entries, nil
}

// Page returns the records whose members (the keys' identities, as the
// index of keys holds them) come after after, at most limit of them in
// the index's order (see locks.Store): one ZRANGEBYLEX of the index for
// the page's members and one MGET of their records, so that a page costs
// the same however many locks the store holds.
func (s *Store) Page(ctx context.Context, after string, limit int) ([]locks.Entry, string, error) {
	limit = max(limit, 1)
	lo := "-"
	if after != "" {
		lo = "(" + after
	}
	octx, cancel := s.opCtx(ctx)
	//nolint:staticcheck // ZRANGEBYLEX runs on every Redis; ZRANGE … BYLEX needs 6.2.
	members, err := s.rdb.ZRangeByLex(octx, s.kKeys, &redis.ZRangeBy{Min: lo, Max: "+", Count: int64(limit) + 1}).Result()
	cancel()
	if err != nil {
		return nil, "", s.fail(ctx, "page", err)
	}
	next := ""
	if len(members) > limit {
		members, next = members[:limit], members[limit-1]
	}
	entries, err := s.fetch(ctx, "page", members, true, nil)
	if err != nil {
		return nil, "", err
	}
	// Corrupt records found by the index's prune come last from fetch.
	slices.SortFunc(entries, func(a, b locks.Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries, next, nil
}

// candidatePrefix is the prefix every key a pattern may overlap starts
// with, unless it is itself a pattern: the pattern's literal prefix. An
// invalid pattern may overlap anything in its namespace (lockkey.Overlap is
// conservative), and a path one any path.
func candidatePrefix(pattern string) string {
	if !doublestar.ValidatePattern(pattern) {
		if ns := lockkey.Namespace(pattern); ns != "" {
			return ns + ":"
		}
		return ""
	}
	if i := strings.IndexAny(pattern, `*?[{\`); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

// Overlapping returns key's own record and the records whose keys may
// overlap it, in two round trips at most. A key that is not a pattern
// overlaps only itself and patterns: its record and the pattern index are
// read together, then the overlapping pattern records. A pattern also
// reads the keys that start with its literal prefix (lockkey.Overlap
// decides among them).
func (s *Store) Overlapping(ctx context.Context, key string) ([]locks.Entry, error) {
	op := "overlapping " + key
	var pats *redis.StringSliceCmd
	var near []*redis.StringSliceCmd
	members := []string{s.id(key)}
	if old := s.legacy(key); old != "" {
		members = append(members, old)
	}
	own, err := s.fetch(ctx, op, members, false, func(p redis.Pipeliner) {
		pats = p.SMembers(ctx, s.kPat)
		if lockkey.IsPattern(key) {
			// A leftover of an earlier version (see migrate) is found
			// when it starts like the pattern's spelling.
			for _, m := range members {
				lo, hi := lex(candidatePrefix(m))
				near = append(near, p.ZRangeByLex(ctx, s.kKeys, &redis.ZRangeBy{Min: lo, Max: hi}))
			}
		}
	})
	if err != nil {
		return nil, err
	}
	cands, err := pats.Result()
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	if near != nil {
		for _, n := range near {
			more, err := n.Result()
			if err != nil {
				return nil, s.fail(ctx, op, err)
			}
			cands = append(cands, more...)
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
	}
	cands = slices.DeleteFunc(cands, func(m string) bool { return slices.Contains(members, m) || !s.overlap(key, m) })
	others, err := s.fetch(ctx, op, cands, true, nil)
	if err != nil {
		return nil, err
	}
	entries := append(own, others...)
	sortEntries(entries)
	return entries, nil
}

// Covering returns the records of paths and of the path-pattern locks that
// match any of them: one round trip reads the paths' records (MGET) and the
// pattern index, a second the matching pattern records.
func (s *Store) Covering(ctx context.Context, paths []string) ([]locks.Entry, error) {
	const op = "covering"
	var pats *redis.StringSliceCmd
	direct, err := s.fetch(ctx, op, s.pathMembers(paths), false, func(p redis.Pipeliner) {
		pats = p.SMembers(ctx, s.kPat)
	})
	if err != nil {
		return nil, err
	}
	members, err := pats.Result()
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	// Only path patterns cover paths; a pattern doublestar refuses matches
	// nothing (lockkey.MatchPath), so it is left out of the matcher. Under
	// case folding, members (identities, or spellings written without
	// folding) are matched folded, against paths with A-Z lowered.
	var valid, globs []string
	for _, m := range members {
		g, ok := m, lockkey.Namespace(m) == ""
		if s.fold {
			g, ok = lockkey.FoldedGlob(m)
		}
		if ok && doublestar.ValidatePattern(g) {
			valid, globs = append(valid, m), append(globs, g)
		}
	}
	var hits []string
	if len(valid) > 0 && len(paths) > 0 {
		m, err := pathmatch.NewMatcher(globs, false)
		if err != nil {
			return nil, fmt.Errorf("covering: pattern lock: %w", err)
		}
		for i, h := range m.MatchedAny(s.matchForm(paths)) {
			if h {
				hits = append(hits, valid[i])
			}
		}
	}
	matched, err := s.fetch(ctx, op, hits, true, nil)
	if err != nil {
		return nil, err
	}
	entries := dedupe(append(direct, matched...))
	sortEntries(entries)
	return entries, nil
}

// InNamespace returns the records of namespace ns: the keys between "ns:"
// and "ns;" in the index of keys, which is sorted by bytes.
func (s *Store) InNamespace(ctx context.Context, ns string) ([]locks.Entry, error) {
	op := "namespace " + ns
	var keys []string
	var err error
	if ns == "" {
		keys, err = s.keysWithPrefix(ctx, op, "")
	} else {
		octx, cancel := s.opCtx(ctx)
		//nolint:staticcheck // as in keysWithPrefix
		keys, err = s.rdb.ZRangeByLex(octx, s.kKeys, &redis.ZRangeBy{Min: "[" + ns + ":", Max: "(" + ns + ";"}).Result()
		cancel()
		if err != nil {
			err = s.fail(ctx, op, err)
		}
	}
	if err != nil {
		return nil, err
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { return lockkey.Namespace(k) != ns })
	entries, err := s.fetch(ctx, op, keys, true, nil)
	if err != nil {
		return nil, err
	}
	sortEntries(entries)
	return entries, nil
}

// pathMembers returns the members a record of each path may have: the
// path's identity and a spelling of it an earlier version kept one under
// (see legacy).
// A path that reads as a namespaced or reserved key (a file named
// workflow) is no path key's member: only a pattern can lock it.
func (s *Store) pathMembers(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !s.fold {
			if lockkey.IsPathLike(p) {
				out = append(out, p)
			}
			continue
		}
		id := lockkey.FoldPath(p)
		out = append(out, id)
		if old := s.leftovers[id]; old != "" {
			out = append(out, old)
		} else if id != p && lockkey.IsPathLike(p) {
			out = append(out, p)
		}
	}
	return out
}

// matchForm returns paths as pattern locks are matched against them.
func (s *Store) matchForm(paths []string) []string { return lockkey.MatchForm(paths, s.fold) }

func sortEntries(entries []locks.Entry) {
	slices.SortFunc(entries, func(a, b locks.Entry) int {
		return strings.Compare(a.Key, b.Key)
	})
}

func dedupe(entries []locks.Entry) []locks.Entry {
	seen := make(map[string]bool, len(entries))
	return slices.DeleteFunc(entries, func(e locks.Entry) bool {
		if seen[e.Key] {
			return true
		}
		seen[e.Key] = true
		return false
	})
}

// GetMany reads the records of keys in one round trip
// (locks.MultiGetter), each as Get reads it.
func (s *Store) GetMany(ctx context.Context, keys []string) ([]locks.Entry, error) {
	out := make([]locks.Entry, len(keys))
	of := make(map[string][]int, len(keys)) // a member → the keys it is read for
	members := make([]string, 0, len(keys))
	for i, k := range keys {
		out[i].Key, out[i].Err = k, locks.ErrNotFound
		for _, m := range []string{s.id(k), s.legacy(k)} {
			if m == "" || slices.Contains(of[m], i) {
				continue
			}
			if len(of[m]) == 0 {
				members = append(members, m)
			}
			of[m] = append(of[m], i)
		}
	}
	entries, err := s.fetch(ctx, "get many", members, false, nil)
	if err != nil {
		return nil, err
	}
	// In the order of members: a key's own record before a leftover's.
	for _, e := range entries {
		for _, i := range of[strings.TrimPrefix(e.Name, s.recPrefix())] {
			if errors.Is(out[i].Err, locks.ErrNotFound) {
				out[i] = e
				if e.Err != nil && out[i].Key == "" {
					out[i].Key = keys[i]
				}
			}
		}
	}
	return out, nil
}
