// Package locks is lockgate's lock model: the lock record, the
// Store interface every backend implements, the typed errors stores and
// the Manager return (service/outcome says what each means to a caller),
// and the Manager that builds multi-key, owner-checked operations on top of
// a Store. It knows the Store interface, not the stores: they import it.
package locks
