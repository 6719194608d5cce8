// Package redistest starts real redis-server processes for tests: one per
// call to Start, on a free loopback port, in a temporary directory, with
// persistence off unless asked for, stopped when the test ends.
//
//	srv := redistest.Start(t, redistest.Options{})
//	store, err := redisstore.Open(ctx, srv.URL(), redisstore.Options{})
//
// A server can be stopped and restarted on the same port and directory
// (fault tests), paused with SIGSTOP (timeout tests), and measured with
// redis-benchmark (the floor of the lock store's benchmarks).
//
// StartReplica, StartSentinels and StartCluster start a primary's replica,
// the Sentinels that watch it, and a Redis Cluster of primaries.
//
// The package speaks just enough RESP to send PING and SHUTDOWN: it does not
// import a Redis client, so the lock store stays the only package that does.
// When redis-server is not installed, Start fails the test (it never skips):
// `make test` installs it through scripts/test-deps.sh.
package redistest
