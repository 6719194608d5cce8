package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/pathmatch"
	"github.com/lockgate/lockgate/workflow"
	"github.com/lockgate/lockgate/workflow/lockkey"
)

// batch is the number of commands sent in one pipeline round trip.
const batch = 1000

// fetched is what fetch found.
type fetched struct {
	entries []workflow.Entry
	missing []string // index members whose records Redis has dropped
}

// fetch reads the records of keys, batch commands per round trip. Keys
// without a record are left out (and reported in missing); a key holding
// something that is not a record is a corrupt entry. first, if not nil,
// is queued in the first round trip, so that a caller's other question
// costs no extra one.
func (s *Store) fetch(ctx context.Context, op string, keys []string, first func(redis.Pipeliner)) (fetched, error) {
	var out fetched
	octx, cancel := s.opCtx(ctx)
	defer cancel()
	for start := 0; start < len(keys) || (start == 0 && first != nil); start += batch {
		chunk := keys[start:min(start+batch, len(keys))]
		p := s.rdb.Pipeline()
		if start == 0 && first != nil {
			first(p)
		}
		cmds := make([]*redis.MapStringStringCmd, len(chunk))
		for i, k := range chunk {
			cmds[i] = p.HGetAll(octx, s.recKey(k))
		}
		if _, err := p.Exec(octx); err != nil && !isWrongType(err) {
			return out, s.fail(ctx, op, err)
		}
		for i, cmd := range cmds {
			m, err := cmd.Result()
			e, found, err := s.entry(ctx, op, chunk[i], m, err)
			if err != nil {
				return out, err
			}
			if !found {
				out.missing = append(out.missing, chunk[i])
				continue
			}
			out.entries = append(out.entries, e)
		}
		if len(keys) == 0 {
			break
		}
		if err := octx.Err(); err != nil {
			return out, s.fail(ctx, op, err)
		}
	}
	return out, nil
}

// prune drops index members whose records are gone, best effort: the
// indexes are hints, every reader checks the records themselves.
func (s *Store) prune(ctx context.Context, missing []string) {
	if len(missing) == 0 {
		return
	}
	octx, cancel := s.opCtx(ctx)
	defer cancel()
	_ = pruneScript.Run(octx, s.rdb, nil, s.p).Err()
}

// members returns an index's members.
func (s *Store) members(ctx context.Context, op, index string) ([]string, error) {
	octx, cancel := s.opCtx(ctx)
	defer cancel()
	m, err := s.rdb.ZRange(octx, index, 0, -1).Result()
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return m, nil
}

// List returns every record, sorted by key, from the index of all keys (no
// KEYS or SCAN over the server). Records kept past their expiry
// (Options.ExpiredGrace) are listed; the caller tells them apart by
// ExpiresAt.
func (s *Store) List(ctx context.Context) ([]workflow.Entry, error) {
	keys, err := s.members(ctx, "list", s.kAll)
	if err != nil {
		return nil, err
	}
	f, err := s.fetch(ctx, "list", keys, nil)
	if err != nil {
		return nil, err
	}
	s.prune(ctx, f.missing)
	sortEntries(f.entries)
	return f.entries, nil
}

// Overlapping returns key's own record and the records whose keys may
// overlap it. For a key that is not a pattern it reads its own record and
// the pattern index, and then only the pattern records that overlap; a
// pattern key reads the index of its namespace (paths form one). Both take
// two round trips at most.
func (s *Store) Overlapping(ctx context.Context, key string) ([]workflow.Entry, error) {
	op := "overlapping " + key
	index := s.kPat
	if lockkey.IsPattern(key) {
		index = s.nsKey(lockkey.Namespace(key))
	}
	var zr *redis.StringSliceCmd
	own, err := s.fetch(ctx, op, []string{key}, func(p redis.Pipeliner) {
		zr = p.ZRange(ctx, index, 0, -1)
	})
	if err != nil {
		return nil, err
	}
	cands, err := zr.Result()
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	cands = slices.DeleteFunc(cands, func(m string) bool { return m == key || !lockkey.Overlap(key, m) })
	f, err := s.fetch(ctx, op, cands, nil)
	if err != nil {
		return nil, err
	}
	s.prune(ctx, f.missing)
	entries := append(own.entries, f.entries...)
	sortEntries(entries)
	return entries, nil
}

// Covering returns the records of paths and of the path-pattern locks that
// match any of them: one pipelined round trip reads the paths' records and
// the pattern index, a second the matching pattern records.
func (s *Store) Covering(ctx context.Context, paths []string) ([]workflow.Entry, error) {
	const op = "covering"
	var zr *redis.StringSliceCmd
	direct, err := s.fetch(ctx, op, paths, func(p redis.Pipeliner) {
		zr = p.ZRange(ctx, s.kPat, 0, -1)
	})
	if err != nil {
		return nil, err
	}
	members, err := zr.Result()
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	// Only path patterns cover paths; a pattern doublestar refuses matches
	// nothing (lockkey.MatchPath), so it is left out of the matcher.
	var pats []string
	for _, m := range members {
		if lockkey.Namespace(m) == "" && lockkey.IsPattern(m) && doublestar.ValidatePattern(m) {
			pats = append(pats, m)
		}
	}
	var hits []string
	if len(pats) > 0 && len(paths) > 0 {
		m, err := pathmatch.NewMatcher(pats, false)
		if err != nil {
			return nil, fmt.Errorf("covering: pattern lock: %w", err)
		}
		hit := make([]bool, len(pats))
		var buf []int
		for _, p := range paths {
			buf = m.AppendMatches(buf[:0], p)
			for _, i := range buf {
				hit[i] = true
			}
		}
		for i, h := range hit {
			if h {
				hits = append(hits, pats[i])
			}
		}
	}
	f, err := s.fetch(ctx, op, hits, nil)
	if err != nil {
		return nil, err
	}
	s.prune(ctx, f.missing)
	entries := dedupe(append(direct.entries, f.entries...))
	sortEntries(entries)
	return entries, nil
}

// InNamespace returns the records of namespace ns from its index.
func (s *Store) InNamespace(ctx context.Context, ns string) ([]workflow.Entry, error) {
	op := "namespace " + ns
	keys, err := s.members(ctx, op, s.nsKey(ns))
	if err != nil {
		return nil, err
	}
	keys = slices.DeleteFunc(keys, func(k string) bool { return lockkey.Namespace(k) != ns })
	f, err := s.fetch(ctx, op, keys, nil)
	if err != nil {
		return nil, err
	}
	s.prune(ctx, f.missing)
	sortEntries(f.entries)
	return f.entries, nil
}

func sortEntries(entries []workflow.Entry) {
	slices.SortFunc(entries, func(a, b workflow.Entry) int {
		return strings.Compare(a.Key, b.Key)
	})
}

func dedupe(entries []workflow.Entry) []workflow.Entry {
	seen := make(map[string]bool, len(entries))
	return slices.DeleteFunc(entries, func(e workflow.Entry) bool {
		if seen[e.Key] {
			return true
		}
		seen[e.Key] = true
		return false
	})
}
