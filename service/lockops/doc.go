// Package lockops runs the lock requests of a session: acquire, release,
// refresh, check, list, clear, prune, the candidates shell completion
// offers, `lock hold`, who may force another's lock away, branch locks and
// their release on merge, pausing a feature, port leases and the
// read-only files of locked paths. It works on a session (service/session):
// its store, its lock manager, its worker.
package lockops
