package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// migrateScript moves a record an earlier version kept under a spelling
// (ARGV[1]) to its identity (ARGV[2]), with its index entries and fence
// counter, unless the identity has a record of its own.
//
//	KEYS: 1 record of the spelling, 2 record of the identity, 3 index of
//	      keys, 4 index of patterns, 5 fence counters
//
// Replies "MOVED", "GONE" (no record: its stale index entries dropped),
// or "TAKEN" (left where it is).
const migrateScript = `
local f = tonumber(redis.call('HGET', KEYS[5], ARGV[1]) or '0')
if f > tonumber(redis.call('HGET', KEYS[5], ARGV[2]) or '0') then
  redis.call('HSET', KEYS[5], ARGV[2], f)
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('SREM', KEYS[4], ARGV[1])
  return 'GONE'
end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'TAKEN' end
redis.call('RENAME', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[3], 0, ARGV[2])
if redis.call('SREM', KEYS[4], ARGV[1]) == 1 then redis.call('SADD', KEYS[4], ARGV[2]) end
return 'MOVED'
`

// foldedKey names the key that says every path and pattern record under
// the prefix is kept under its identity (lockkey.FoldCase). Versions
// before keys were always folded kept them under their spelling when
// core.ignorecase was off; migrate moves such records once per prefix, so
// lookups need no more than the identity.
func (s *Store) foldedKey() string { return s.p + "meta:folded" }

// unicodeKey names the key that says so for this version's identities:
// versions that folded A-Z only set foldedKey with records under that
// identity (lockkey.FoldCaseASCII), which migrate moves too.
func (s *Store) unicodeKey() string { return s.p + "meta:folded-unicode" }

// migrate moves records kept under a spelling to their identity, each
// atomically. A record whose identity has one of its own (two spellings
// locked by earlier versions) stays, in s.leftovers, read by every lookup
// of the identity; the prefix is marked only once none is left, so a later
// Open moves it once the other is gone.
func (s *Store) migrate(ctx context.Context) error {
	var members, fenced *redis.StringSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		members = p.ZRange(ctx, s.kKeys, 0, -1)
		fenced = p.HKeys(ctx, s.kFences)
		return nil
	})
	if err != nil {
		return s.fail(ctx, "open: migrate", err)
	}
	var spelled []string
	seen := map[string]bool{}
	for _, m := range append(members.Val(), fenced.Val()...) {
		if !seen[m] && lockkey.IsPathLike(m) && lockkey.FoldCase(m) != m {
			seen[m] = true
			spelled = append(spelled, m)
		}
	}
	// One round trip: each move is its own script, atomic on the server.
	moves := make([]*redis.Cmd, len(spelled))
	if len(spelled) > 0 {
		_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, m := range spelled {
				id := lockkey.FoldCase(m)
				keys := []string{s.recKey(m), s.recKey(id), s.kKeys, s.kPat, s.kFences}
				moves[i] = p.Eval(ctx, migrateScript, keys, m, id)
			}
			return nil
		})
		if err != nil {
			return s.fail(ctx, "open: migrate", err)
		}
	}
	s.leftovers = map[string]string{}
	for i, m := range spelled {
		if moves[i].Val() == "TAKEN" {
			s.leftovers[lockkey.FoldCase(m)] = m
		}
	}
	if len(s.leftovers) > 0 {
		return nil
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, s.foldedKey(), "1", 0) // earlier versions look no further
		p.Set(ctx, s.unicodeKey(), "1", 0)
		return nil
	})
	if err != nil {
		return s.fail(ctx, "open: migrate", err)
	}
	return nil
}
