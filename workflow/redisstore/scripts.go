package redisstore

import "github.com/redis/go-redis/v9"

// The scripts below are the store's only writers. Each runs atomically in
// Redis, so the check (is the key free, is the token ours) and the write it
// guards are one step for every client of the server. They are kept short
// on purpose: every redis.call costs about a microsecond of the server's
// one thread, and at high concurrency that thread is the limit.
//
// A record is a string (see encodeValue):
//
//	<expires_at, Unix ms>\n<fence>\n<token>\n<len(session)>\n<session><record JSON>
//
// The scripts read the short header and never scan the JSON (a Lua
// pattern walking 400 bytes costs more than the rest of a script), except
// to vet a record before taking it over. Tokens holding a newline are
// refused.

// prelude is shared by the scripts.
const prelude = `
-- parse reads a record's header: expiry, fence, token, the session and the
-- offset of the JSON; nil when it is not a record.
local function parse(v)
  local _, e, exp, fence, tok, n = string.find(v, '^(%-?%d+)\n(%d+)\n([^\n]*)\n(%d+)\n')
  if not e then return nil end
  n = tonumber(n)
  if e + n > string.len(v) then return nil end
  return tonumber(exp), tonumber(fence), tok, string.sub(v, e + 1, e + n), e + n + 1
end
`

// acquireScript stores a record when the key is free or its record expired.
//
//	KEYS: 1 record, 2 fence counters (hash), 3 index of keys, 4 index of
//	      patterns, 5 session history, 6 session rate-limit log (only with
//	      a rate limit)
//	ARGV: 1 lock key, 2 caller's now (ms), 3 record lifetime (ms), 4 record
//	      head (before the fence), 5 record tail (after the fence), 6 "1"
//	      for a pattern key; only when set: 7 history TTL ms, 8 rate limit,
//	      9 rate window ms (every argument costs the server a little)
//
// Replies: {"OK", fence, replaced record or ""}, {"HELD", record},
// {"RATE"}, {"CORRUPT", reason}.
var acquireScript = newScript(prelude + `
local cur = redis.pcall('GET', KEYS[1])
if type(cur) == 'table' then return {'CORRUPT', 'the key holds something else than a lock record'} end
local prevFence = 0
if cur then
  local exp, fence, tok, _, at = parse(cur)
  if not exp then return {'CORRUPT', 'malformed lock record'} end
  -- expired means expires_at < now: at the expiry instant it is still held
  if exp >= tonumber(ARGV[2]) then return {'HELD', cur} end
  -- taking over is the one time the JSON is read: a record that does not
  -- name its key and token is corrupt, and a corrupt record is never free
  local ok, j = pcall(cjson.decode, string.sub(cur, at))
  if not ok or type(j) ~= 'table' or j['key'] ~= ARGV[1] or j['token'] ~= tok then
    return {'CORRUPT', 'expired record is not a whole lock record of this key'}
  end
  prevFence = fence
end
local limit, now = tonumber(ARGV[8] or '0'), 0
if limit > 0 then
  -- a sliding window over the session's grants on the server's clock;
  -- refusals do not count, so a --wait loop does not use up the quota
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', string.format('%d', now - tonumber(ARGV[9])))
  if redis.call('ZCARD', KEYS[6]) >= limit then return {'RATE'} end
end
-- the counter outlives records, so a key's fences grow across holders,
-- releases and forced clears; the replaced record's fence guards against
-- a counter lost while the record was not
local fence = redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
if fence <= prevFence then
  fence = prevFence + 1
  redis.call('HSET', KEYS[2], ARGV[1], string.format('%d', fence))
end
local rec = ARGV[4] .. string.format('%d', fence) .. ARGV[5]
redis.call('SET', KEYS[1], rec, 'PX', ARGV[3])
if not cur then
  -- a key with a record is always in the index; a replaced one already is
  redis.call('ZADD', KEYS[3], 0, ARGV[1])
  if ARGV[6] == '1' then redis.call('SADD', KEYS[4], ARGV[1]) end
end
redis.call('HSET', KEYS[5], ARGV[1], rec)
if ARGV[7] and ARGV[7] ~= '0' then redis.call('PEXPIRE', KEYS[5], ARGV[7]) end
if limit > 0 then
  redis.call('ZADD', KEYS[6], string.format('%d', now), ARGV[1] .. '\n' .. string.format('%d', fence))
  redis.call('PEXPIRE', KEYS[6], ARGV[9])
end
return {'OK', fence, cur or ''}
`)

// releaseScript deletes a record whose token matches, or any record when
// ARGV[5] is "force" (Remove).
//
//	KEYS: 1 record, 2 index of keys, 3 index of patterns
//	ARGV: 1 lock key, 2 token, 3 history key prefix (+ session), 4 release
//	      channel, 5 "force" to delete whatever is there, 6 "1" for a
//	      pattern key
//
// Replies: {"OK"} ({"OK", record} with force), {"NOTFOUND"},
// {"MISMATCH"}, {"CORRUPT", reason} (with force the corrupt record is
// deleted first).
var releaseScript = newScript(prelude + `
local force = ARGV[5] == 'force'
local cur = redis.pcall('GET', KEYS[1])
local why
if type(cur) == 'table' then
  why = 'the key holds something else than a lock record'
elseif not cur then
  return {'NOTFOUND'}
end
local exp, fence, tok, sess
if not why then
  exp, fence, tok, sess = parse(cur)
  if not exp then why = 'malformed lock record' end
end
if why and not force then return {'CORRUPT', why} end
if not why and not force and tok ~= ARGV[2] then return {'MISMATCH'} end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if ARGV[6] == '1' then redis.call('SREM', KEYS[3], ARGV[1]) end
redis.call('PUBLISH', ARGV[4], ARGV[1])
if why then return {'CORRUPT', why} end
-- the record is its session's latest acquisition of the key (a later one
-- would have replaced it), so the session's history entry is this record
redis.call('HDEL', ARGV[3] .. sess, ARGV[1])
if force then return {'OK', cur} end
return {'OK'}
`)

// updateScript replaces a record whose token matches, keeping its fence.
//
//	KEYS: 1 record, 2 history of the record's (new) session
//	ARGV: 1 lock key, 2 token, 3 record lifetime (ms), 4 record head, 5
//	      record tail, 6 history TTL ms, 7 history key prefix (+ session),
//	      8 the new session
//
// Replies: {"OK", fence}, {"NOTFOUND"}, {"MISMATCH"}, {"CORRUPT", reason}.
var updateScript = newScript(prelude + `
local cur = redis.pcall('GET', KEYS[1])
if type(cur) == 'table' then return {'CORRUPT', 'the key holds something else than a lock record'} end
if not cur then return {'NOTFOUND'} end
local exp, fence, tok, sess = parse(cur)
if not exp then return {'CORRUPT', 'malformed lock record'} end
if tok ~= ARGV[2] then return {'MISMATCH'} end
local rec = ARGV[4] .. string.format('%d', fence) .. ARGV[5]
redis.call('SET', KEYS[1], rec, 'PX', ARGV[3])
if sess ~= ARGV[8] then redis.call('HDEL', ARGV[7] .. sess, ARGV[1]) end
redis.call('HSET', KEYS[2], ARGV[1], rec)
if ARGV[6] ~= '0' then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
return {'OK', fence}
`)

// pruneScript drops index members whose records Redis has dropped; it
// checks each record in the script, so a key acquired again meanwhile
// stays. It returns the members whose keys exist but hold no string: those
// are corrupt records, which MGET cannot tell from absent ones.
//
//	KEYS: 1 index of keys, 2 index of patterns
//	ARGV: 1 record key prefix, then the members
var pruneScript = newScript(`
local odd = {}
for i = 2, #ARGV do
  if redis.call('EXISTS', ARGV[1] .. ARGV[i]) == 0 then
    redis.call('ZREM', KEYS[1], ARGV[i])
    redis.call('SREM', KEYS[2], ARGV[i])
  else
    odd[#odd + 1] = ARGV[i]
  end
end
return odd
`)

// historyDropScript removes history entries, each only while it still is
// what Restore judged (the same fence, or for an unreadable entry the same
// value), so that a concurrent re-acquisition's entry survives.
//
//	KEYS: 1 history
//	ARGV: pairs of lock key and "f<fence>" or "v<value>"
var historyDropScript = newScript(`
local n = 0
for i = 1, #ARGV, 2 do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  local want, mode = string.sub(ARGV[i + 1], 2), string.sub(ARGV[i + 1], 1, 1)
  if v and ((mode == 'v' and v == want) or (mode == 'f' and string.match(v, '^%-?%d+\n(%d+)\n') == want)) then
    n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return n
`)

// allScripts are loaded by Open.
var allScripts = []*script{acquireScript, releaseScript, updateScript, pruneScript, historyDropScript}

// script is a Lua script with its source, which Open loads in a pipeline.
type script struct {
	*redis.Script
	src string
}

func newScript(src string) *script { return &script{Script: redis.NewScript(src), src: src} }
