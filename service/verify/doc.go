// Package verify proves commits against the lock log: it reads the log
// (the workflow branch, local and fetched, and the clone's journal, each
// event once, only the span and the keys the commits bear on), keeps only
// the events their workers' signatures vouch for when the policy asks,
// and judges each commit by the locks live when it was made. `lockgate
// verify`, pre-receive and the floor of a new lock store's fences read
// the log through it.
package verify
