// Package service is what every request does, whichever front end made it:
// the command line and the MCP server parse their input, call one method
// of a Workspace and render its typed result or typed error (classified
// by service/outcome).
//
// A Workspace is one request's setting — a session.Workspace (the
// repository, the policy that judges it, the worker's identity, the lock
// store and how it was chosen, the audit trail, one clock, and git's hook
// contracts) — and the use cases that need more than the hooks do: locks
// (acquire, release, refresh, check, list, clear, prune, hold), pause,
// port leases, plan, check, the store a clone uses and the board's data.
// The handlers it hands out work on the same session: the work queue
// (Queue, service/queue), the lock log and verify (Verifier,
// service/verify) and serve's users (Users, service/serveusers).
// Front ends read what they render through accessors (Owner, Dir,
// StoreName, UserDir, ...), never the session's fields, and only programs
// that seed the lock table reach the raw store (LockStore).
package service
