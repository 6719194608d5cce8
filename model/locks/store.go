package locks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// Store keeps lock records. Keys are canonical (see lockkey) and opaque to
// the store except for case and overlap: path and pattern keys that differ
// only in the case of A-Z are one key, kept under its identity
// (lockkey.FoldCase) with the record keeping the spelling locked, and
// overlap is lockkey.OverlapFoldCase.
// Every backend asserts `var _ locks.Store = (*Store)(nil)` and passes
// locktest.Run.
type Store interface {
	// Acquire stores rec under rec.Key when no live lock holds the key. A
	// lock that expired before now is taken over atomically: of many racing
	// callers exactly one wins, and the replaced record is returned as prev.
	// The store assigns rec.Fence. A live holder yields a *HeldError.
	Acquire(ctx context.Context, rec Lock, now time.Time) (stored Lock, prev *Lock, err error)
	// Release removes key's record if its token is token; otherwise it
	// returns ErrNotFound or ErrTokenMismatch and leaves the record alone.
	Release(ctx context.Context, key, token string) error
	// Update replaces key's record if its token is token (refresh, task
	// sub-locks). Key and token of rec must match; the fence is kept.
	Update(ctx context.Context, rec Lock) (Lock, error)
	// Remove deletes key's record whatever its owner (a forced clear) and
	// returns it. A corrupt record is removed and reported as *CorruptError;
	// an absent one is ErrNotFound.
	Remove(ctx context.Context, key string) (Lock, error)
	// Get returns key's record, ErrNotFound, or a *CorruptError.
	Get(ctx context.Context, key string) (Lock, error)
	// List returns every record, corrupt ones included, sorted by key.
	List(ctx context.Context) ([]Entry, error)
	// Overlapping returns the records whose keys may overlap key (key's own
	// record included), without reading unrelated records.
	Overlapping(ctx context.Context, key string) ([]Entry, error)
	// Covering returns the records of the given path keys and of every
	// pattern lock that matches one of them, each once, sorted by key; it is
	// what a hook asks for a change set.
	Covering(ctx context.Context, paths []string) ([]Entry, error)
	// InNamespace returns every record whose key is in namespace ns (the
	// part before the first ':'), sorted by key.
	InNamespace(ctx context.Context, ns string) ([]Entry, error)
	// Page returns, in the store's own order of its records, at most
	// limit records (below 1 counts as 1), corrupt ones included, that
	// come after position after ("" starts at the first), and next: the
	// position of the last record the page took, to pass as after for
	// the next page, "" when no record follows. A position is a string
	// the store gave (its name for a record); any other string is read
	// as a place in that order. A record kept through a whole walk of
	// pages is returned exactly once, whatever is added or removed
	// meanwhile. A page reads the records it returns, beside at most a
	// listing of the store's record names: so that a server's page of
	// 100 costs about the same with 10 or 10,000 locks.
	Page(ctx context.Context, after string, limit int) (page []Entry, next string, err error)
	// Where names the store and the place a key lives, for messages.
	Where(key string) string
	Close() error
}

// Entry is one listed record; Err is set (a *CorruptError) when the record
// could not be read, and then only Key (if known) and Name are meaningful.
type Entry struct {
	Lock
	Name string `json:"-"`
	Err  error  `json:"-"`
}

// RecordFiler is implemented by stores that keep each record in a file a
// key may not name (the file store: long and case-folded keys are hashed
// into file names). The hint to clear a record that cannot be read then
// names that file; a store that clears every record by its key does not
// implement it.
type RecordFiler interface {
	// RecordFile is the file that holds key's record.
	RecordFile(key string) string
}

// RecordWhere is the where of hint.CorruptLine for s: the file of a
// key's record when s keeps records in files (RecordFiler), else nil.
func RecordWhere(s Store) func(string) string {
	if f, ok := s.(RecordFiler); ok {
		return f.RecordFile
	}
	return nil
}

// Waiter is implemented by stores that signal releases (the Redis store
// publishes every release and forced removal). The Manager's --wait then
// blocks until the key it waits for is released instead of polling.
type Waiter interface {
	// WaitRelease returns, once it is listening, a channel that is closed
	// when key is next released or removed, or when ctx ends; cancelling
	// ctx frees what the wait holds. A release after WaitRelease returns is
	// never missed. A lock that merely expires need not be signalled.
	WaitRelease(ctx context.Context, key string) (<-chan struct{}, error)
}

// Transactor is implemented by stores whose changes travel whole (the git
// store: one commit, one push). Transact runs fn on a view of one state of
// the store and makes every change fn made through the view at once, all
// or none; when another writer changed the store meanwhile, fn runs again
// on the new state. An error from fn changes nothing and is returned. The
// Manager runs each multi-key operation in one Transact, so that a command
// costs one exchange with the store.
type Transactor interface {
	Transact(ctx context.Context, fn func(Store) error) error
}

// Sealer is implemented by stores where a change sent by a process that
// died may still land afterwards (the git store: a push the server is
// still receiving). Seal runs check on a current view of the store; when
// check reports that a change it looked for is not there, the store moves
// on past that view, so that no change decided before can land later.
// Recovery of an interrupted command settles its intent under Seal.
type Sealer interface {
	Seal(ctx context.Context, check func(Store) (settled bool, err error)) error
}

// PageOf is Store.Page over entries, a listing of every record, for a
// store whose records are all read anyway (an in-memory view): pos is a
// record's position, and entries are taken in its order.
func PageOf(entries []Entry, pos func(Entry) string, after string, limit int) (page []Entry, next string) {
	limit = max(limit, 1)
	rest := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if pos(e) > after {
			rest = append(rest, e)
		}
	}
	slices.SortStableFunc(rest, func(a, b Entry) int { return strings.Compare(pos(a), pos(b)) })
	if len(rest) > limit {
		return rest[:limit], pos(rest[limit-1])
	}
	return rest, ""
}

// MultiGetter is implemented by stores that read many records in one
// exchange (Redis: one pipeline); GetMany reads through it.
type MultiGetter interface {
	// GetMany returns one entry per key, in order: the record, or Err set
	// to ErrNotFound or a *CorruptError (Key set either way).
	GetMany(ctx context.Context, keys []string) ([]Entry, error)
}

// GetMany reads the records of keys from s: one entry per key, in order,
// as MultiGetter says; through s's GetMany when it has one, else one Get
// a key. An error that is neither a missing nor a corrupt record (the
// store is unreachable) is returned.
func GetMany(ctx context.Context, s Store, keys []string) ([]Entry, error) {
	if m, ok := s.(MultiGetter); ok {
		return m.GetMany(ctx, keys)
	}
	out := make([]Entry, len(keys))
	for i, k := range keys {
		l, err := s.Get(ctx, k)
		var corrupt *CorruptError
		switch {
		case err == nil:
			out[i] = Entry{Lock: l}
		case errors.Is(err, ErrNotFound) || errors.As(err, &corrupt):
			out[i].Key, out[i].Err = k, err
		default:
			return nil, err
		}
	}
	return out, nil
}
