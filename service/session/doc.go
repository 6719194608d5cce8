// Package session is one request's setting, the part of the service that
// git's hooks need: the repository, the policy that judges the request,
// the worker's identity (resolved here and nowhere else), the lock store
// the clone uses and how it was chosen, the audit trail to the journal
// (and, when the binary links it, the workflow branch), one clock — and
// the hook contracts that run on it (pre-commit, pre-merge-commit,
// commit-msg, pre-push, reference-transaction), with the check runner
// they share with `check` and the guards.
//
// The use cases that need more (the lock log, the queue, the planner,
// serve's users) are package service, whose Workspace embeds this one.
// A binary that serves only the hooks links this package and not service.
package session
