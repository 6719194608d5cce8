package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// FailoverFenceGap is how far above every fence counter the floor is set
// when the store finds its keys on a primary other than the one that
// wrote them last (see checkPrimary). A replica promoted by Sentinel may
// lack the primary's last writes, and with them increments of the fence
// counters whose fences were handed out; those were at most this many per
// key, so no fence is handed out twice.
const FailoverFenceGap = 1 << 20

// primaryScript records the replication id of the primary the store's keys
// are written on, and when another primary wrote them before, raises the
// floor of the fence counters FailoverFenceGap above the highest counter
// (and the floor), so that the fences the lost writes handed out are not
// handed out again.
//
//	KEYS: 1 the key of the primary's replication id, 2 fence counters
//	ARGV: 1 this primary's replication id, 2 FailoverFenceGap
//
// Replies 0 (the same primary, or a store without counters), 1 (the
// floor was raised).
var primaryScript = &script{src: `
local was = redis.call('GET', KEYS[1])
if was == ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
if not was then return 0 end
local top = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do
  local n = tonumber(v)
  if n and n > top then top = n end
end
if top == 0 and redis.call('HEXISTS', KEYS[2], '') == 0 then return 0 end
redis.call('HSET', KEYS[2], '', string.format('%d', top + tonumber(ARGV[2])))
return 1
`}

// primaryKey names the key holding the replication id of the primary the
// store's keys were last written on.
func (s *Store) primaryKey() string { return s.p + "meta:primary" }

// checkPrimary runs on every new connection through Sentinel, before the
// connection is used (go-redis runs it on its connections to the
// Sentinels too, which have no role): when it reaches a primary that did not write the
// store's keys before (a promoted replica), it raises the fence floor (see
// primaryScript). A connection to a replica is left alone: it can write
// nothing.
func (s *Store) checkPrimary(ctx context.Context, cn *redis.Conn) error {
	var info, was *redis.StringCmd
	// One round trip: a Sentinel's connections come here too, and answer
	// GET with an error, which only matters on a primary.
	_, _ = cn.Pipelined(ctx, func(p redis.Pipeliner) error {
		info = p.Info(ctx, "replication")
		was = p.Get(ctx, s.primaryKey())
		return nil
	})
	if err := info.Err(); err != nil {
		return fmt.Errorf("check the primary: %w", err)
	}
	role, id := replication(info.Val())
	if role != "master" || id == "" {
		return nil
	}
	if err := was.Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("check the primary: %w", err)
	}
	if was.Val() == id {
		return nil
	}
	if err := primaryScript.redisScript().Run(ctx, cn, []string{s.primaryKey(), s.kFences}, id, FailoverFenceGap).Err(); err != nil {
		return fmt.Errorf("raise the fence floor on a new primary: %w", err)
	}
	return nil
}

// replication reads role and master_replid from INFO replication.
func replication(info string) (role, id string) {
	for line := range strings.SplitSeq(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "role:"); ok {
			role = v
		} else if v, ok := strings.CutPrefix(line, "master_replid:"); ok {
			id = v
		}
	}
	return role, id
}
