package locks

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrNotFound: no record for the key.
	ErrNotFound = errors.New("no such lock")
	// ErrTokenMismatch: the record belongs to another acquisition.
	ErrTokenMismatch = errors.New("lock token does not match: it was taken over")
	// ErrFenceExhausted: the next fence would pass the highest number the
	// store keeps. A fence that wrapped to 0 or 1 would be one an earlier
	// holder used, so the store refuses the acquisition instead (exit 3).
	ErrFenceExhausted = errors.New("the fence counter is at the highest number the store keeps: no new fence can be handed out")
	// ErrNotRecord: a store's RemoveRecord was given a name that is not a
	// record of that store.
	ErrNotRecord = errors.New("not a lock record file of this store")
	// ErrReadable: a store's RemoveRecord was given a record that can be
	// cleared by its key.
	ErrReadable = errors.New("clear it by its key")
)

// HeldError reports a key held by a live lock of someone else.
type HeldError struct {
	Lock  Lock
	Where string // the lock's location, for the message
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is held by %s (%s) until %s", e.Lock.Key, e.Lock.Holder,
		e.Lock.HolderType, e.Lock.ExpiresAt.UTC().Format(time.RFC3339))
}

// TimeoutError reports that --wait ran out while a key stayed held.
type TimeoutError struct {
	Held *HeldError
	Wait time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("timed out after %s waiting: %v", e.Wait, e.Held)
}

func (e *TimeoutError) Unwrap() error { return e.Held }

// CorruptError reports a record that exists but cannot be read as a lock.
// It is never treated as free.
type CorruptError struct {
	Key  string
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt lock record %s: %v", e.Path, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// NotOwnerError reports an attempt to release or refresh another's lock.
type NotOwnerError struct {
	Lock Lock
	Op   string
}

func (e *NotOwnerError) Error() string {
	return fmt.Sprintf("cannot %s %s: held by %s (%s, session %s)", e.Op, e.Lock.Key,
		e.Lock.Holder, e.Lock.HolderType, e.Lock.Session)
}

// UnavailableError reports a store that cannot be reached or read (exit 3).
type UnavailableError struct {
	Store string
	Err   error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("lock store %s unavailable: %v", e.Store, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// RateLimitedError reports a session over its acquisition quota (exit 5).
type RateLimitedError struct {
	Limit  int
	Window time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("rate limited: more than %d acquisitions per %s", e.Limit, e.Window)
}

// JournalError reports events that could not be recorded (exit 3). When
// Made is false the change they record was not made (or was undone); when
// true it was, and the next lockgate command that can write the journal
// appends its events.
type JournalError struct {
	Err  error
	Made bool
}

func (e *JournalError) Error() string {
	if e.Made {
		return fmt.Sprintf("event not recorded: %v (the change was made; the next lockgate command that can write the journal records it)", e.Err)
	}
	return fmt.Sprintf("event not recorded: %v; nothing was changed", e.Err)
}

func (e *JournalError) Unwrap() error { return e.Err }

// LostError is a lock the caller expected to hold that is not there: it
// expired and was taken or cleared, or was never taken. It is ErrNotFound
// (errors.Is), with the key.
type LostError struct {
	Key string
	Op  string // what was asked: "refresh"
}

func (e *LostError) Error() string { return e.Op + " " + e.Key + ": " + ErrNotFound.Error() }

func (e *LostError) Unwrap() error { return ErrNotFound }

// ContendedError reports a change that kept losing to other writers of
// the store (exit 4): nothing was changed; trying again may succeed.
type ContendedError struct {
	Store    string
	Attempts int
}

func (e *ContendedError) Error() string {
	return fmt.Sprintf("lock store %s: other writers changed it first %d times in a row; nothing was changed, try again", e.Store, e.Attempts)
}

// UncertainError is a change whose outcome the store could not learn (a
// push the remote did not answer in time): it may have been made. Nothing
// is lost: the command's intent stays, and the next lockgate command asks
// the store and records what was made.
type UncertainError struct {
	Err error
}

func (e *UncertainError) Error() string {
	return e.Err.Error() + "; it may have gone through: the next lockgate command finds out and records it (`lockgate lock list --mine` shows what you hold)"
}

func (e *UncertainError) Unwrap() error { return e.Err }
