package session

import (
	"fmt"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// UsageError is bad command-line input (exit 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef formats a usage error. Strings in args are user input more often
// than not: long ones are shortened, never echoed whole.
func Usagef(format string, args ...any) error {
	for i, v := range args {
		if s, ok := v.(string); ok {
			args[i] = lockkey.Shorten(s)
		}
	}
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// HookError is a hook that could not decide — unreadable config or store,
// git failing — and so refuses: exit 3, whatever the cause's own code.
type HookError struct {
	Hook string
	Err  error
}

func (e *HookError) Error() string { return e.Err.Error() }

func (e *HookError) Unwrap() error { return e.Err }
