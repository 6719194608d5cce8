// Package redisstore is lockgate's lock store for many machines: a
// locks.Store on Redis, one server, a primary behind Sentinel or a
// cluster (docs/stores.md: The Redis store,
// `lockgate store use redis://…`). It is the only package that imports
// the Redis client.
//
// # Keys
//
// Every key starts with Options.Prefix P, so one server serves many
// repositories (RepoPrefix derives P from a repository's identity; the
// default is "lockgate:"). Under P:
//
//	r:<key>        the record of a lock key, a string with PX expiry:
//	               <expires_at ms>\n<fence>\n<token>\n<len(session)>\n<session><record JSON>
//	fence          hash: lock key -> last fence granted (never expires);
//	               the field "" holds the floor every fence is above
//	i:keys         sorted set of the keys with a record, all scored 0, so
//	               that ZRANGEBYLEX answers prefix and namespace queries
//	i:pat          set of the pattern keys among them (lockkey.IsPattern)
//	h:<session>    hash: lock key -> record, the session's history
//	               (Options.HistoryTTL)
//	rl:<session>   sorted set: the session's grants within the rate window
//	c:<key>        pub/sub channel: the key was released (WaitRelease)
//	meta:folded    set once every path and pattern record is kept under
//	               its identity (see below)
//	meta:primary   through Sentinel: the replication id of the primary
//	               that last wrote the store
//
// <key> in these names, and the members of i:keys and i:pat, are for a
// path or pattern key its identity, lockkey.FoldCase(key), whatever
// core.ignorecase says, so that spellings differing in the case of A-Z are
// one record, fence counter and channel in every clone; the record keeps
// the spelling. Earlier versions kept them under their spelling without
// core.ignorecase: Open moves such records (one script each) unless
// meta:folded is set. A record whose identity has a record of its own
// stays, and lookups of the identity read it too, until a later Open can
// move it. A lookup of a spelling also reads the record under that
// spelling, in the same round trip: a server is shared by machines that
// may not all run a version that folds.
//
// "r:" and "i:" keep lock keys from naming any other structure. Nothing
// runs KEYS or SCAN: List reads i:keys, InNamespace the range "ns:" to
// "ns;" of it, Covering reads the paths' own records and i:pat (matched
// with pathmatch), Overlapping a key's own record and i:pat, and for a
// pattern also the keys that start with its literal prefix. Index members
// whose records Redis has expired are pruned lazily, by the readers that
// meet them, with a script that checks each record again.
//
// # Operations
//
// Acquire, Release, Update and Remove are each one Lua script, one round
// trip, atomic on the server. Acquire is SET-NX-PX semantics plus
// takeover of an expired record, a fence from the key's counter (HINCRBY;
// never below the replaced record's fence or the counters' floor, so a
// key's fences only grow, across holders, releases and forced clears), the
// session's rate limit and history. Release and Update compare the owner token, so a holder whose
// TTL lapsed can neither release nor refresh its successor's lock. Release
// and Remove PUBLISH the key on its channel, which WaitRelease listens to:
// the Store is a locks.Waiter, so the Manager's --wait sleeps until the
// key it waits for is released instead of polling.
// Concurrent callers of one Store share round trips: their scripts go out
// together as one pipeline (see batcher), each still atomic on its own.
//
// # Expiry
//
// A lock is expired when expires_at < now, with now the caller's clock as
// the Store contract says (hosts sharing a server need synchronized clocks,
// as with any lease). Redis itself drops a record ExpiredGrace (default
// 24h) after its expires_at. Until then an expired record is listed and an
// acquisition that replaces it returns it as prev (a lock_takeover in the
// journal); after that the key is simply free and prev is nil.
//
// # Durability
//
// The store keeps what Redis keeps. Fence counters and session histories
// survive a restart of Redis only when it persists its data (appendonly
// yes, and appendfsync always for every grant): without persistence a
// restart forgets every lock, fence and history, so Restore has nothing to
// bring back. Fences do not start again at 1: the floor is lost with the
// counters, and the next acquisition sets it to the highest fence of the
// lock log (Options.FenceFloor) before it is granted, so no fence a lost
// grant used is handed out again.
//
// # Sentinel, Cluster, replicas
//
// Open also takes redis+sentinel:// (a primary found through Sentinel,
// go-redis's failover client) and redis+cluster:// URLs (topology.go). On
// a cluster the prefix is a hash tag, "{P}", so every key of the store is
// in one slot and the scripts, which touch several keys and derive some
// (a session's history), run on one node; elsewhere P is used as it is,
// so existing stores keep their key names. Replication is asynchronous:
// with Options.MinReplicas an acquisition sends WAIT on the connection
// that ran its script and undoes a grant too few replicas confirmed
// (replicas.go). Each new connection through Sentinel compares the
// primary's replication id with P+"meta:primary" and, on a primary that
// did not write the store before, raises the fence floor FailoverFenceGap
// above every counter, so that the fences of grants a failover lost are
// not handed out again (failover.go).
//
// # Errors
//
// A held key is a *locks.HeldError (busy/lock_contended, docs/exit-codes.md:
// MCP error classes; the Manager's --wait turns it into a
// *locks.TimeoutError, lock_timeout),
// a session over its quota a *locks.RateLimitedError, and a server that
// cannot be used a *locks.UnavailableError whose Err is a *Cause with a
// normalized reason ("connection refused", "authentication failed",
// "timeout", …), returned within the operation timeout (2s by default)
// since the client never retries by itself. As with any timeout, a write
// that timed out may still have been applied (the server can run it once
// it answers again). With Options.OneTimeout, once an operation timed out
// every later one fails at once ("not asked again"). Classify maps any of
// these to the classes and reasons docs/exit-codes.md (MCP error classes)
// names.
package redisstore
