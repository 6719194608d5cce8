// Package locks is lockgate's lock model: the lock record, the
// Store interface every backend implements, the typed errors that the CLI maps
// to exit codes, and the Manager that builds multi-key, owner-checked
// operations on top of a Store.
package locks
