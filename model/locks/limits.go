package locks

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// Limits on what a request carries into every lock record, journal event
// and message about it. Real values are far shorter; longer ones are
// refused rather than cut, so that two different ids never become one.
const (
	MaxHolderLen  = 256  // worker id
	MaxSessionLen = 256  // session id
	MaxReasonLen  = 1024 // reason shown to other workers
	MaxTaskIDLen  = 256  // task id
	// MaxRequestKeys bounds the keys of one acquisition.
	MaxRequestKeys = 10_000
)

// InvalidRequestError is a request refused before the store is touched:
// an owner or reason out of bounds (exit 2).
type InvalidRequestError struct{ Msg string }

func (e *InvalidRequestError) Error() string { return e.Msg }

// Check refuses an owner whose worker id is empty, or whose worker or
// session id is too long, padded with whitespace or holds control
// characters.
func (o Owner) Check() error {
	if o.Holder == "" {
		return &InvalidRequestError{Msg: "worker id is empty"}
	}
	if err := checkID("worker id", o.Holder, MaxHolderLen); err != nil {
		return err
	}
	return checkID("session", o.Session, MaxSessionLen)
}

// Check refuses a request whose owner, reason or task id is out of bounds.
func (r Request) Check() error {
	if err := r.Owner.Check(); err != nil {
		return err
	}
	if len(r.Keys) > MaxRequestKeys {
		return &InvalidRequestError{Msg: fmt.Sprintf("%d keys in one request: at most %d", len(r.Keys), MaxRequestKeys)}
	}
	if len(r.Reason) > MaxReasonLen {
		return &InvalidRequestError{Msg: fmt.Sprintf("reason of %d bytes: at most %d", len(r.Reason), MaxReasonLen)}
	}
	if len(r.TaskID) > MaxTaskIDLen {
		return &InvalidRequestError{Msg: fmt.Sprintf("task id %q: longer than %d bytes", lockkey.Shorten(r.TaskID), MaxTaskIDLen)}
	}
	return nil
}

func checkID(what, s string, limit int) error {
	switch {
	case len(s) > limit:
		return &InvalidRequestError{Msg: fmt.Sprintf("%s %q: longer than %d bytes", what, lockkey.Shorten(s), limit)}
	case strings.TrimSpace(s) != s || strings.ContainsFunc(s, unicode.IsControl):
		return &InvalidRequestError{Msg: fmt.Sprintf("%s %q: no surrounding whitespace or control characters", what, lockkey.Shorten(s))}
	}
	return nil
}
