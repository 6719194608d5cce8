// Package service is what every request does, whichever front end made it:
// the command line, the MCP server and `lockgate serve` parse their input,
// call one method of a Workspace or of a handler it hands out, and render
// its typed result or typed error (classified by service/outcome).
//
// A Workspace is one request's setting — a session.Workspace (the
// repository, the policy that judges it, the worker's identity, the lock
// store and how it was chosen, the audit trail, one clock, and git's hook
// contracts) with every opener the session cannot link handed in — and
// the handlers that work on that session: lock requests (Locks,
// service/lockops), the work queue (Queue, service/queue), the lock log
// and verify (Verifier, service/verify) and serve's users (Users,
// service/serveusers). Its own methods are the use cases that compose
// them: check and the guards, pre-receive and the post-* hooks, serve's
// git-lfs API, the board's data, plan, init, config validate, workflow
// sync and the log. Front ends read what they render through accessors
// (Owner, Dir, StoreName, UserDir, ...), never the session's fields, and
// only programs that seed the lock table reach the raw store (LockStore).
package service
