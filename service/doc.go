// Package service is what every request does, whichever front end made it:
// the command line and the MCP server parse their input, call one method
// of a Workspace and render its typed result or typed error (classified
// by service/outcome).
//
// A Workspace is one request's setting: the repository, the policy that
// judges it, the worker's identity (resolved here and nowhere else), the
// lock store the clone uses and how it was chosen, the audit trail to the
// journal and the workflow branch, and one clock. Its methods are the use
// cases: locks (acquire, release, refresh, check, list, clear, prune,
// hold), the work queue (claim, done, give back, retry, the worker loop),
// pause, port leases, plan, git's hook contracts, check and verify, the
// store a clone uses, and the board's data. Its fields are unexported:
// front ends read what they render through accessors (Owner, Dir,
// StoreName, UserDir, ...), and only programs that seed the lock table
// reach the raw store (LockStore).
package service
