package redisstore

import (
	"sync"

	"github.com/redis/go-redis/v9"
)

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
//
// A script answers its common outcomes with a bare value: an integer for
// success (the fence, or 1), and acquireScript the holder's record, a
// string, for a held key. Anything else is a table {status, values…}.
// Redis converts a table returned by Lua with a dozen lookups, more than
// half a microsecond of its one thread per call.
//
// Numbers go to redis.call as strings ('1', not 1): Redis formats a Lua
// number argument with snprintf("%.17g"), about 2,000 instructions of its
// thread each (callgrind). A library call (tonumber, string.len) costs
// several hundred, so the hot paths use Lua's operators where they can
// (#v, arithmetic on a string of digits).

// prelude is shared by acquireScript and updateScript.
const prelude = `
-- parse reads a record's header: expiry, fence, token, the session and the
-- offset of the JSON; nil when it is not a record.
local function parse(v)
  local _, e, exp, fence, tok, n = string.find(v, '^(%-?%d+)\n(%d+)\n([^\n]*)\n(%d+)\n')
  if not e then return nil end
  -- n is a string of digits: arithmetic converts it without tonumber
  if e + n > #v then return nil end
  return tonumber(exp), tonumber(fence), tok, string.sub(v, e + 1, e + n), e + n + 1
end
`

// acquireScript stores a record when the key is free or its record expired.
//
//	KEYS: 1 record, 2 fence counters (hash, with the floor), 3 index of keys, 4 session
//	      history; then only when used: the session's rate-limit log (with
//	      a rate limit), the index of patterns (for a pattern key)
//	ARGV: 1 member (the lock key, or its identity under case folding), 2
//	      caller's now (ms), 3 record lifetime (ms), 4 record head (before
//	      the fence), 5 record tail (after the fence); only when set: 6
//	      history TTL ms, 7 rate limit, 8 rate window ms; for a path key
//	      under case folding: 9 "fold", then 10 and 11 the record and
//	      member of a leftover of the key's identity (see migrate)
//
// Under case folding the record keeps the spelling that was locked, which
// folds (A-Z lowered, as string.lower does in Redis's C locale) to the
// member, or to the member without its leading "/" (lockkey.FoldCase). A
// spelling beyond ASCII folds by Unicode's rules, which Lua does not
// know: such a record counts as the key's when it names a key and its
// token, as every record must.
// A record an earlier version kept under a spelling (a leftover of
// migrate) counts as the key's too: a live one holds it, an expired one is
// taken over (removed).
//
// Every argument costs the server about a tenth of a microsecond, so
// what a call does not need is left out.
//
// Every fence is above the floor, kept in the counters' field "" (no
// lock key is empty, so no counter has it). The floor and the counters
// are one Redis key: whatever loses the counters (no persistence,
// FLUSHALL, eviction, a DEL) loses the floor with them, and the script
// then grants nothing and answers {"FLOOR"}: the client sets the floor
// from the lock log (floorScript) and runs it again.
//
// Replies: fence (a free key), {"OK", fence, replaced record} (a
// takeover), record (a string: the key is held), {"RATE"},
// {"CORRUPT", reason}, {"FENCE"} (no fence left below MaxFence),
// {"FLOOR"} (no floor: nothing was written).
var acquireScript = &script{src: prelude + `
local cur = redis.pcall('GET', KEYS[1])
if type(cur) == 'table' then return {'CORRUPT', 'the key holds something else than a lock record'} end
local prevFence = 0
if cur then
  local exp, fence, tok, _, at = parse(cur)
  if not exp then return {'CORRUPT', 'malformed lock record'} end
  -- expired means expires_at < now: at the expiry instant it is still held
  if exp >= tonumber(ARGV[2]) then return cur end
  -- taking over is the one time the JSON is read: a record that does not
  -- name its key and token is corrupt, and a corrupt record is never free
  local ok, j = pcall(cjson.decode, string.sub(cur, at))
  local named = ok and type(j) == 'table' and j['key'] == ARGV[1]
  if not named and ARGV[9] and ok and type(j) == 'table' and type(j['key']) == 'string' then
    local k = string.lower(j['key'])
    named = k == ARGV[1] or '/' .. k == ARGV[1] or string.find(j['key'], '[\128-\255]') ~= nil
  end
  if not named or j['token'] ~= tok then
    return {'CORRUPT', 'expired record is not a whole lock record of this key'}
  end
  prevFence = fence
end
local old
if ARGV[10] then
  old = redis.pcall('GET', ARGV[10])
  if type(old) == 'table' then return {'CORRUPT', 'the key of its spelling holds something else than a lock record'} end
  if old then
    local exp, fence = parse(old)
    if not exp then return {'CORRUPT', 'malformed lock record of its spelling'} end
    if exp >= tonumber(ARGV[2]) then return old end
    if fence > prevFence then prevFence = fence end
  end
end
-- before any write: a reply of FLOOR leaves everything as it was
local floor = redis.call('HGET', KEYS[2], '')
if not floor then return {'FLOOR'} end
floor = tonumber(floor)
if not floor then return redis.error_reply('the fence floor in ' .. KEYS[2] .. ' is not a number') end
if prevFence > floor then floor = prevFence end
local limit, now = 0, 0
if ARGV[7] then limit = tonumber(ARGV[7]) end
if limit > 0 then
  -- a sliding window over the session's grants on the server's clock;
  -- refusals do not count, so a --wait loop does not use up the quota
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', string.format('%d', now - tonumber(ARGV[8])))
  if redis.call('ZCARD', KEYS[5]) >= limit then return {'RATE'} end
end
-- the counter outlives records, so a key's fences grow across holders,
-- releases and forced clears; the floor and the replaced record's fence
-- guard against a counter lost while the lock log or the record was not
local fence = redis.pcall('HINCRBY', KEYS[2], ARGV[1], '1')
if type(fence) == 'table' then
  -- at the top of int64 HINCRBY refuses; any other error is Redis's
  if string.find(fence['err'], 'overflow', 1, true) then return {'FENCE'} end
  return fence
end
local raised = fence <= floor
if raised then fence = floor + 1 end
-- fences stop at MaxFence (2^53-1): a Lua number holds no larger integer
-- exactly, and a fence that wrapped or rounded would repeat an old one
if fence > 9007199254740991 then
  redis.call('HINCRBY', KEYS[2], ARGV[1], '-1')
  return {'FENCE'}
end
if raised then
  redis.call('HSET', KEYS[2], ARGV[1], string.format('%d', fence))
end
local rec = ARGV[4] .. string.format('%d', fence) .. ARGV[5]
redis.call('SET', KEYS[1], rec, 'PX', ARGV[3])
local patterns = KEYS[limit > 0 and 6 or 5]
if not cur then
  -- a key with a record is always in the index; a replaced one already is
  redis.call('ZADD', KEYS[3], '0', ARGV[1])
  if patterns then redis.call('SADD', patterns, ARGV[1]) end
end
if old then
  -- the expired record of the spelling is replaced by the one above
  redis.call('DEL', ARGV[10])
  redis.call('ZREM', KEYS[3], ARGV[11])
  if patterns then redis.call('SREM', patterns, ARGV[11]) end
end
redis.call('HSET', KEYS[4], ARGV[1], rec)
if ARGV[6] and ARGV[6] ~= '0' then redis.call('PEXPIRE', KEYS[4], ARGV[6]) end
if limit > 0 then
  redis.call('ZADD', KEYS[5], string.format('%d', now), ARGV[1] .. '\n' .. string.format('%d', fence))
  redis.call('PEXPIRE', KEYS[5], ARGV[8])
end
if cur or old then return {'OK', fence, cur or old} end
return fence
`}

// floorScript sets the floor of the fence counters, unless they have one
// at least as high: clients that met {"FLOOR"} together may each set one,
// and a floor only ever rises, so no fence granted above it is repeated.
//
//	KEYS: 1 fence counters
//	ARGV: 1 the floor (decimal)
var floorScript = &script{src: `
local cur = redis.call('HGET', KEYS[1], '')
if cur and (tonumber(cur) or -1) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], '', ARGV[1])
return 1
`}

// releaseScript deletes a record whose token matches, or any record when
// ARGV[5] is "force" (Remove). With "undo" (a grant too few replicas
// confirmed) the session's history entry becomes ARGV[6], the one the grant
// replaced, with the grant's fence: that grant was the session's, and
// `session restore` must not take it for another holder's. Without
// ARGV[6] the entry is dropped, as by a release.
//
// A forced removal (Remove: lock clear, release --force) is written to the
// store's clear log, KEYS[3], by the script itself: a client that clears a
// lock cannot leave it out of the log, whatever it journals.
//
//	KEYS: 1 record, 2 index of keys, 3 the clear log (a stream); 4 index
//	      of patterns (for a pattern key only)
//	ARGV: 1 lock key, 2 token, 3 history key prefix (+ session), 4 release
//	      channel; 5 "force" to delete whatever is there (only for Remove)
//	      or "undo"; 6 with "undo", the history entry to put back
//
// Replies: 1 ({"OK", record} with force), {"NOTFOUND"}, {"MISMATCH"},
// {"CORRUPT", reason} (with force the corrupt record is deleted first).
var releaseScript = &script{src: `
-- owner reads a record's token and session; nil when it is not a record.
-- It checks the header as parse does, without converting what it skips.
local function owner(v)
  local _, e, tok, n = string.find(v, '^%-?%d+\n%d+\n([^\n]*)\n(%d+)\n')
  if not e then return nil end
  -- n is a string of digits: arithmetic converts it without tonumber
  if e + n > #v then return nil end
  return tok, string.sub(v, e + 1, e + n)
end

local force = ARGV[5] == 'force'
local cur = redis.pcall('GET', KEYS[1])
local why
if type(cur) == 'table' then
  why = 'the key holds something else than a lock record'
elseif not cur then
  return {'NOTFOUND'}
end
local tok, sess
if not why then
  tok, sess = owner(cur)
  if not tok then why = 'malformed lock record' end
end
if why and not force then return {'CORRUPT', why} end
if not why and not force and tok ~= ARGV[2] then return {'MISMATCH'} end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if KEYS[4] then redis.call('SREM', KEYS[4], ARGV[1]) end
if force then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', '100000', '*', 'key', ARGV[1], 'record', type(cur) == 'string' and cur or '', 'corrupt', why or '')
end
redis.call('PUBLISH', ARGV[4], ARGV[1])
if why then return {'CORRUPT', why} end
-- the record is its session's latest acquisition of the key (a later one
-- would have replaced it), so the session's history entry is this record
if ARGV[5] == 'undo' and ARGV[6] then
  local fence = string.match(cur, '^%-?%d+\n(%d+)\n')
  local prev, n = string.gsub(ARGV[6], '^(%-?%d+\n)%d+\n', '%1' .. fence .. '\n', 1)
  -- an entry that is not a record goes back as it was: restore drops it
  if n == 0 then prev = ARGV[6] end
  redis.call('HSET', ARGV[3] .. sess, ARGV[1], prev)
else
  redis.call('HDEL', ARGV[3] .. sess, ARGV[1])
end
if force then return {'OK', cur} end
return 1
`}

// updateScript replaces a record whose token matches, keeping its fence.
//
//	KEYS: 1 record, 2 history of the record's (new) session
//	ARGV: 1 lock key, 2 token, 3 record lifetime (ms), 4 record head, 5
//	      record tail, 6 history TTL ms, 7 history key prefix (+ session),
//	      8 the new session
//
// Replies: fence, {"NOTFOUND"}, {"MISMATCH"}, {"CORRUPT", reason}.
var updateScript = &script{src: prelude + `
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
return fence
`}

// pruneScript drops index members whose records Redis has dropped; it
// checks each record in the script, so a key acquired again meanwhile
// stays. It returns the members whose keys exist but hold no string: those
// are corrupt records, which MGET cannot tell from absent ones.
//
//	KEYS: 1 index of keys, 2 index of patterns
//	ARGV: 1 record key prefix, then the members
var pruneScript = &script{src: `
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
`}

// historyDropScript removes history entries, each only while it still is
// what Restore judged (the same fence, or for an unreadable entry the same
// value), so that a concurrent re-acquisition's entry survives.
//
//	KEYS: 1 history
//	ARGV: pairs of lock key and "f<fence>" or "v<value>"
var historyDropScript = &script{src: `
local n = 0
for i = 1, #ARGV, 2 do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  local want, mode = string.sub(ARGV[i + 1], 2), string.sub(ARGV[i + 1], 1, 1)
  if v and ((mode == 'v' and v == want) or (mode == 'f' and string.match(v, '^%-?%d+\n(%d+)\n') == want)) then
    n = n + redis.call('HDEL', KEYS[1], ARGV[i])
  end
end
return n
`}

// allScripts are loaded by Open.
var allScripts = []*script{acquireScript, releaseScript, updateScript, pruneScript, historyDropScript}

// script is a Lua script with its source, which Open loads in a pipeline.
// Its hash is computed on first use, not when the process starts: every
// lockgate command links this package, most never talk to Redis.
type script struct {
	src  string
	once sync.Once
	rs   *redis.Script
}

func (s *script) redisScript() *redis.Script {
	s.once.Do(func() { s.rs = redis.NewScript(s.src) })
	return s.rs
}
