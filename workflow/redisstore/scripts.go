package redisstore

import "github.com/redis/go-redis/v9"

// The scripts below are the store's only writers. Each runs atomically in
// Redis, so the check (is the key free, is the token ours) and the write it
// guards are one step for every client of the server.
//
// A record is a hash with the fields
//
//	tok    owner token, compared by release, refresh and takeover
//	exp    expires_at in Unix milliseconds, compared with the caller's now
//	fence  the fence number granted with the record
//	sess   the holder's session: whose history the record is in
//	rec    the whole record as JSON (its fence field is not used)
//
// Numbers handed to redis.call are formatted with %d: Lua would print a
// large number as 1.2e+14.

// prelude is shared by the scripts.
const prelude = `
local function int(n) return string.format('%d', n) end

-- srvnow is the server's clock in milliseconds: index deadlines and the
-- rate-limit window use it, so clients with skewed clocks agree on them.
local function srvnow()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- load returns the record at k, nil when there is none, or false and a
-- reason when k holds something that is not a whole record.
local function load(k)
  local ty = redis.call('TYPE', k)['ok']
  if ty == 'none' then return nil end
  if ty ~= 'hash' then return false, 'holds a ' .. ty .. ', not a lock record' end
  local v = redis.call('HMGET', k, 'tok', 'exp', 'fence', 'rec', 'sess')
  if not v[1] or not v[2] or not v[3] or not v[4] then
    return false, 'lock record lacks a field (tok, exp, fence, rec)'
  end
  local exp, fence = tonumber(v[2]), tonumber(v[3])
  if not exp or not fence then return false, 'lock record has a non-numeric exp or fence' end
  return {tok = v[1], exp = exp, fence = fence, rec = v[4], sess = v[5] or ''}
end

-- lifetime is how long Redis keeps a record: until its expiry plus grace,
-- so that an expired record can still be reported when it is taken over.
local function lifetime(exp, now, grace)
  local ttl = exp - now
  if ttl < 0 then ttl = 0 end
  ttl = ttl + grace
  if ttl < 1 then ttl = 1 end
  if ttl > 70368744177664 then ttl = 70368744177664 end
  return ttl
end

-- nsof is lockkey.Namespace: the text before the first ':' when the key
-- starts like a namespace, else '' (paths, workflow, claim).
local function nsof(m)
  return string.match(m, '^([a-z][a-z0-9%-]*):') or ''
end

-- prune drops up to 256 members of the index of all keys whose records
-- Redis has dropped (their score, the record's deadline, has passed), and
-- the same members from the pattern and namespace indexes.
local function prune(P, srv)
  local all = P .. 'i:all'
  local dead = redis.call('ZRANGEBYSCORE', all, '-inf', '(' .. int(srv), 'LIMIT', 0, 256)
  for _, m in ipairs(dead) do
    redis.call('ZREM', all, m)
    redis.call('ZREM', P .. 'i:pat', m)
    redis.call('ZREM', P .. 'i:ns:' .. nsof(m), m)
  end
  return #dead
end

-- index puts key in the index sorted sets, scored by the instant Redis
-- drops its record, and prunes members whose records are gone.
local function index(P, srv, deadline, member, all, ns, pat, pattern)
  local sets = {all, ns}
  if pattern == '1' then sets[3] = pat end
  for _, z in ipairs(sets) do
    redis.call('ZADD', z, int(deadline), member)
  end
  prune(P, srv)
end

local function unindex(member, all, ns, pat)
  redis.call('ZREM', all, member)
  redis.call('ZREM', ns, member)
  redis.call('ZREM', pat, member)
end
`

// acquireScript stores a record when the key is free or its record expired.
//
//	KEYS: 1 record, 2 fence counters (hash), 3 index all, 4 index of the
//	      key's namespace, 5 index of patterns, 6 session history, 7 session
//	      rate-limit log
//	ARGV: 1 lock key, 2 token, 3 expiry ms, 4 caller's now ms, 5 grace ms,
//	      6 record JSON, 7 session, 8 "1" for a pattern key, 9 history TTL ms
//	      (0: none), 10 rate limit (0: none), 11 rate window ms, 12 prefix
//
// Replies: {"OK", fence, prev fence (0: none), prev JSON ("": none)},
// {"HELD", fence, JSON}, {"RATE", limit}, {"CORRUPT", reason}.
var acquireScript = newScript(prelude + `
local cur, why = load(KEYS[1])
if cur == false then return {'CORRUPT', why} end
local now = tonumber(ARGV[4])
local prevFence, prevRec = 0, ''
if cur then
  -- expired means expires_at < now: at the expiry instant it is still held
  if cur.exp >= now then return {'HELD', cur.fence, cur.rec} end
  -- the JSON is read only here, on takeover: a record that does not name
  -- its key and token is corrupt, and a corrupt record is never free
  local ok, j = pcall(cjson.decode, cur.rec)
  if not ok or type(j) ~= 'table' or j['key'] ~= ARGV[1] or j['token'] ~= cur.tok then
    return {'CORRUPT', 'expired record is not a whole lock record of this key'}
  end
  prevFence, prevRec = cur.fence, cur.rec
end
local srv = srvnow()
local limit = tonumber(ARGV[10])
if limit > 0 then
  -- a sliding window over the session's grants; refusals do not count, so
  -- a --wait loop polling a held key does not use up the quota
  local win = tonumber(ARGV[11])
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', int(srv - win))
  if redis.call('ZCARD', KEYS[7]) >= limit then return {'RATE', limit} end
  redis.call('ZADD', KEYS[7], int(srv), ARGV[2])
  redis.call('PEXPIRE', KEYS[7], int(win))
end
-- the counter outlives records, so a key's fences grow across holders,
-- releases and forced clears; the record's own fence guards against a
-- counter that was lost while the record was not
local fence = redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
if fence <= prevFence then
  fence = prevFence + 1
  redis.call('HSET', KEYS[2], ARGV[1], int(fence))
end
local ttl = lifetime(tonumber(ARGV[3]), now, tonumber(ARGV[5]))
redis.call('HSET', KEYS[1], 'tok', ARGV[2], 'exp', ARGV[3], 'fence', int(fence), 'sess', ARGV[7], 'rec', ARGV[6])
redis.call('PEXPIRE', KEYS[1], int(ttl))
index(ARGV[12], srv, srv + ttl, ARGV[1], KEYS[3], KEYS[4], KEYS[5], ARGV[8])
redis.call('HSET', KEYS[6], ARGV[1], int(fence) .. '\n' .. ARGV[6])
local httl = tonumber(ARGV[9])
if httl > 0 then redis.call('PEXPIRE', KEYS[6], int(httl)) end
return {'OK', fence, prevFence, prevRec}
`)

// releaseScript deletes a record whose token matches, or any record when
// the token is empty and ARGV[5] is "force" (Remove).
//
//	KEYS: 1 record, 2 index all, 3 index of the key's namespace, 4 index
//	      of patterns
//	ARGV: 1 lock key, 2 token, 3 history key prefix (+ session), 4 release
//	      channel, 5 "force" to delete whatever is there
//
// Replies: {"OK", fence, JSON}, {"NOTFOUND"}, {"MISMATCH"},
// {"CORRUPT", reason} (with force the corrupt record is deleted first).
var releaseScript = newScript(prelude + `
local cur, why = load(KEYS[1])
local force = ARGV[5] == 'force'
if cur == nil then return {'NOTFOUND'} end
if cur == false then
  if not force then return {'CORRUPT', why} end
  redis.call('DEL', KEYS[1])
  unindex(ARGV[1], KEYS[2], KEYS[3], KEYS[4])
  redis.call('PUBLISH', ARGV[4], ARGV[1])
  return {'CORRUPT', why}
end
if not force and cur.tok ~= ARGV[2] then return {'MISMATCH'} end
redis.call('DEL', KEYS[1])
unindex(ARGV[1], KEYS[2], KEYS[3], KEYS[4])
-- the record is the session's latest acquisition of the key (a later one
-- would have replaced it), so its history entry is this record's
redis.call('HDEL', ARGV[3] .. cur.sess, ARGV[1])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return {'OK', cur.fence, cur.rec}
`)

// updateScript replaces a record whose token matches, keeping its fence.
//
//	KEYS: 1 record, 2 index all, 3 index of the key's namespace, 4 index
//	      of patterns, 5 history of the record's (new) session
//	ARGV: 1 lock key, 2 token, 3 expiry ms, 4 caller's now ms, 5 grace ms,
//	      6 record JSON, 7 session, 8 "1" for a pattern key, 9 history TTL
//	      ms, 10 history key prefix (+ session), 11 prefix
//
// Replies: {"OK", fence}, {"NOTFOUND"}, {"MISMATCH"}, {"CORRUPT", reason}.
var updateScript = newScript(prelude + `
local cur, why = load(KEYS[1])
if cur == nil then return {'NOTFOUND'} end
if cur == false then return {'CORRUPT', why} end
if cur.tok ~= ARGV[2] then return {'MISMATCH'} end
local srv = srvnow()
local ttl = lifetime(tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]))
redis.call('HSET', KEYS[1], 'exp', ARGV[3], 'sess', ARGV[7], 'rec', ARGV[6])
redis.call('PEXPIRE', KEYS[1], int(ttl))
index(ARGV[11], srv, srv + ttl, ARGV[1], KEYS[2], KEYS[3], KEYS[4], ARGV[8])
if cur.sess ~= ARGV[7] then redis.call('HDEL', ARGV[10] .. cur.sess, ARGV[1]) end
redis.call('HSET', KEYS[5], ARGV[1], int(cur.fence) .. '\n' .. ARGV[6])
local httl = tonumber(ARGV[9])
if httl > 0 then redis.call('PEXPIRE', KEYS[5], int(httl)) end
return {'OK', cur.fence}
`)

// pruneScript drops index members whose records Redis has expired.
//
//	ARGV: 1 prefix
var pruneScript = newScript(prelude + `
local srv, n = srvnow(), 0
repeat
  local k = prune(ARGV[1], srv)
  n = n + k
until k < 256 or n >= 4096
return n
`)

// nsofScript answers nsof for ARGV[1], for tests that hold it to
// lockkey.Namespace.
var nsofScript = newScript(prelude + `return nsof(ARGV[1])`)

// historyDropScript removes history entries, each only if it still is the
// acquisition (fence) that Restore judged, so that a concurrent
// re-acquisition's entry survives.
//
//	KEYS: 1 history
//	ARGV: pairs of lock key, fence
var historyDropScript = newScript(`
local n = 0
for i = 1, #ARGV, 2 do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v and (ARGV[i + 1] == '' or string.sub(v, 1, string.len(ARGV[i + 1]) + 1) == ARGV[i + 1] .. '\n') then
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
