package cli

import (
	"context"
	"errors"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/lockgate/lockgate/internal/agentsetup"
	"github.com/lockgate/lockgate/internal/config"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/lockkey"
)

// Exit codes, as docs/exit-codes.md lists them.
const (
	ExitOK           = 0
	ExitPolicy       = 1
	ExitUsage        = 2
	ExitUnavailable  = 3
	ExitLockFailed   = 4
	ExitRateLimited  = 5
	ExitNotPermitted = 6
)

// ExitError carries an exit code for an outcome already reported to the
// user, such as `lock check` finding a key held (exit 4).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return "exit " + itoa(e.Code) }

// exitCode is the single mapping from errors to exit codes.
func exitCode(err error) int {
	var (
		usage    *service.UsageError
		exit     *ExitError
		keyErr   *lockkey.Error
		cfgErr   *config.Error
		held     *locks.HeldError
		timeout  *locks.TimeoutError
		corrupt  *locks.CorruptError
		notOwner *locks.NotOwnerError
		unavail  *locks.UnavailableError
		journalE *locks.JournalError
		rate     *locks.RateLimitedError
		gitErr   *gitexec.Error
		hookErr  *HookError
		mismatch *service.StoreMismatchError
		ident    *service.IdentityError
		invalid  *locks.InvalidRequestError
		agentErr *agentsetup.Error
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exit):
		return exit.Code
	case errors.As(err, &hookErr), errors.As(err, &mismatch):
		return ExitUnavailable
	case errors.As(err, &keyErr):
		if keyErr.NotPermitted {
			return ExitNotPermitted
		}
		return ExitUsage
	case errors.As(err, &usage), errors.As(err, &cfgErr), errors.As(err, &invalid), errors.As(err, &agentErr):
		return ExitUsage
	case errors.As(err, &notOwner), errors.As(err, &ident):
		return ExitNotPermitted
	case errors.As(err, &rate):
		return ExitRateLimited
	case errors.As(err, &timeout), errors.As(err, &held), errors.As(err, &corrupt),
		errors.Is(err, locks.ErrNotFound), errors.Is(err, locks.ErrTokenMismatch):
		return ExitLockFailed
	case errors.As(err, &unavail), errors.As(err, &journalE), errors.As(err, &gitErr), errors.Is(err, gitexec.ErrNotRepo):
		return ExitUnavailable
	case errors.Is(err, context.Canceled):
		return 130
	default:
		return ExitUnavailable
	}
}
