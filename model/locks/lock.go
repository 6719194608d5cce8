package locks

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Lock is one lock record, as stored by every backend and printed by
// `lock list --json`.
type Lock struct {
	Key        string    `json:"key"`
	Holder     string    `json:"holder"`
	HolderType string    `json:"holder_type"`
	Session    string    `json:"session"`
	Action     string    `json:"action,omitempty"`
	PID        int       `json:"pid"`
	Host       string    `json:"host"`
	CreatedAt  time.Time `json:"created_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	Reason     string    `json:"reason,omitempty"`
	TaskID     string    `json:"task_id,omitempty"`
	// Activity locks may carry one task sub-lock with its own expiry.
	TaskAcquired *time.Time `json:"task_acquired,omitempty"`
	TaskExpires  *time.Time `json:"task_expires,omitempty"`
	// Token is random per acquisition: release and refresh compare it, so a
	// late release never removes a successor's lock.
	Token string `json:"token"`
	// Fence only grows for a key, across holders.
	Fence uint64 `json:"fence"`
	// RequestID and TraceID tie the record to the command run and the
	// caller's trace (W3C TRACEPARENT) that took it.
	RequestID string `json:"request_id,omitempty"`
	TraceID   string `json:"trace_id,omitempty"`
	// EventID is the journal event of the record's last change (its
	// acquisition, renewal or refresh): how lockgate tells, after a crash,
	// whether a change whose event may be missing was made.
	EventID string `json:"event_id,omitempty"`
	// A work package's task record, once the package is finished (Action
	// "done" or "failed"), says when and, for one done, at which commit.
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	Commit     string     `json:"commit,omitempty"`
}

// Never is the expiry of a record that stays until it is removed: a
// finished work package's.
var Never = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// Owner identifies who holds a lock: the same worker in the same session.
type Owner struct {
	Holder     string
	HolderType string
	Session    string
}

// OwnedBy reports whether o holds l.
func (l *Lock) OwnedBy(o Owner) bool {
	return l.Holder == o.Holder && l.Session == o.Session
}

// Expired reports whether the lock's expiry has passed.
func (l *Lock) Expired(now time.Time) bool {
	return l.ExpiresAt.Before(now)
}

// Stale reports whether the lock is older than staleAfter (0 disables).
func (l *Lock) Stale(now time.Time, staleAfter time.Duration) bool {
	return staleAfter > 0 && now.Sub(l.CreatedAt) > staleAfter
}

// TaskLive reports whether an activity lock's task sub-lock is held and unexpired.
func (l *Lock) TaskLive(now time.Time) bool {
	return l.TaskID != "" && l.TaskExpires != nil && !l.TaskExpires.Before(now)
}

// Validate reports a record no store may keep: one without a key or an
// expiry, or whose key is not valid UTF-8 (JSON would store U+FFFD
// instead, and the record would no longer name its key).
func (l *Lock) Validate() error {
	if l.Key == "" {
		return errors.New("lock record has no key")
	}
	if !utf8.ValidString(l.Key) {
		return fmt.Errorf("lock key %q is not valid UTF-8", l.Key)
	}
	if l.ExpiresAt.IsZero() {
		return fmt.Errorf("lock record for %s has no expiry", l.Key)
	}
	return nil
}
