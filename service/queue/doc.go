// Package queue is the work queue a fleet drains: the work packages file
// read and checked, each package's state kept as a task record in the lock
// store (ready, claimed, done, failed), claims that take a package's locks
// all at once, done, give back and retry, and the worker loop of
// `lockgate work` (its steps; the front end runs the command). It works on
// a session (service/session): its store, its lock manager, its worker.
package queue
