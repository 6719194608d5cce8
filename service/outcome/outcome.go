package outcome

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/redisstore"
	"github.com/lockgate/lockgate/service/session"
)

// Exit codes (docs/exit-codes.md).
const (
	ExitOK           = 0
	ExitPolicy       = 1
	ExitUsage        = 2
	ExitUnavailable  = 3
	ExitLockFailed   = 4
	ExitRateLimited  = 5
	ExitNotPermitted = 6
	ExitInterrupted  = 130
)

// MCP error classes.
const (
	ClassBusy            = "busy"
	ClassInvalidKey      = "invalid_key"
	ClassNotPermitted    = "operation_not_permitted"
	ClassNotOwner        = "not_owner"
	ClassLockLost        = "lock_lost"
	ClassCorrupt         = "corrupt_lock"
	ClassUnavailable     = "unavailable"
	ClassRateLimited     = "rate_limited"
	ClassInvalidArgument = "invalid_argument"
	ClassError           = "error"
)

// Reasons that refine ClassBusy.
const (
	ReasonContended = "lock_contended"
	ReasonTimeout   = "lock_timeout"
	// ReasonPackage: a work package's state refuses the claim (done,
	// failed, waiting for dependencies) or no package can be claimed now.
	ReasonPackage = "package_state"
)

// ExitError carries an exit code for an outcome already reported to the
// user, such as `lock check` finding a key held (exit 4).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return "exit " + strconv.Itoa(e.Code) }

// Context is what the hints of an error depend on besides the error.
type Context struct {
	// UserDir is the directory the user works in, repo-relative with a
	// trailing slash: the user's own commands name paths relative to it.
	UserDir string
	// Wait renders the command that waits up to d for a held lock; nil
	// when the command that failed cannot wait.
	Wait func(d string) string
	// Where is where the lock store keeps the record of a key (the file
	// store's path), for a record that must be cleared by its location;
	// nil for a store that clears every record by its key.
	Where func(key string) string
	// Now is the request's clock reading (zero: time.Now()), against which
	// hints say how long a lock is held.
	Now time.Time
}

// Outcome is what an error means.
type Outcome struct {
	// Exit is the CLI's exit code.
	Exit int
	// Class and Reason are the MCP server's error class and its
	// refinement (busy: lock_contended or lock_timeout).
	Class, Reason string
	// Held is the lock that stands in the way, if one does.
	Held *locks.Lock
	// Expected is the canonical form of an invalid key, when one exists.
	Expected string
	// Detail describes Held for people; Hints resolve the error with
	// commands a person runs (lockgate's own, with the user's paths).
	Detail string
	Hints  []string
	// AgentHint resolves it for an agent using the MCP tools.
	AgentHint string
}

// Of classifies err (nil: ExitOK). The first kind err is, in the order
// of the steps below, decides: an error may wrap another of another kind.
func Of(err error, c Context) Outcome {
	if err == nil {
		return Outcome{Exit: ExitOK}
	}
	o := Outcome{Exit: ExitUnavailable, Class: ClassError}
	if c.Now.IsZero() {
		c.Now = time.Now()
	}
	switch {
	case o.undecided(err):
	case o.busy(err, c):
	case o.refused(err, c):
	case o.storeAnswer(err, c):
	default:
		o.failed(err)
	}
	var noFree noPackageNow
	if errors.As(err, &noFree) {
		// A package whose task record cannot be read waits for someone to
		// clear the record, whatever else waits.
		for _, cr := range noFree.UnreadableRecords() {
			o.Hints = append(o.Hints, hint.CorruptLine(c.Where, cr.Path, cr.Key, lockkey.RelArg(cr.Key, c.UserDir)))
		}
	}
	return o
}

// The errors of use cases this package does not link (the lock log's, the
// queue's, a forced removal's) are known by what they say of themselves,
// so that a binary that serves only the hooks classifies its errors
// without linking those use cases.
type (
	// logMissing: no lock log to judge by; the branch and remote to
	// fetch it from.
	logMissing interface {
		error
		LogMissing() (branch, remote string)
	}
	// packageRefused: a change of a work package its state does not allow.
	packageRefused interface {
		error
		PackageRefused()
	}
	// noPackageNow: no work package can be claimed now; the task records
	// that cannot be read.
	noPackageNow interface {
		error
		UnreadableRecords() []*locks.CorruptError
	}
	// queueStuck: nothing left in a work queue can be finished until a
	// failed package is retried.
	queueStuck interface {
		error
		QueueStuck()
	}
	// invalidArgument: an argument a use case refuses (agent setup's
	// unknown harness).
	invalidArgument interface {
		error
		InvalidArgument()
	}
	// forceRefused: a forced removal of another's lock a rule refuses;
	// admin when the rule is serve's (only admins force another's lock).
	forceRefused interface {
		error
		ForceRefused() (l locks.Lock, admin bool)
	}
)

// undecided classifies an outcome already reported (an exit code) and
// what keeps a command from deciding: no lock log, a hook that failed
// closed, a store other than the clone's.
func (o *Outcome) undecided(err error) bool {
	var (
		exit     *ExitError
		noLog    logMissing
		hookErr  *session.HookError
		mismatch *session.StoreMismatchError
	)
	switch {
	case errors.As(err, &exit):
		o.Exit = exit.Code
	case errors.As(err, &noLog):
		o.Class = ClassUnavailable
		branch, remote := noLog.LogMissing()
		o.Hints = []string{hint.Line(hint.LogFetch, branch, remote)}
	case errors.As(err, &hookErr):
		o.Class = ClassUnavailable
		o.Hints = []string{hookHint(hookErr)}
	case errors.As(err, &mismatch):
		o.Class = ClassUnavailable
	default:
		return false
	}
	return true
}

// busy classifies what is taken for now: a lock another holds (after
// waiting, or at once), a work package no one can claim now.
func (o *Outcome) busy(err error, c Context) bool {
	var (
		timeout  *locks.TimeoutError
		held     *locks.HeldError
		pkgState packageRefused
		noFree   noPackageNow
		stuck    queueStuck
	)
	switch {
	case errors.As(err, &timeout):
		o.Exit, o.Class, o.Reason = ExitLockFailed, ClassBusy, ReasonTimeout
		o.held(timeout.Held.Lock)
		o.Detail = heldDetail(timeout.Held, c.Now)
		o.Hints = heldHints(timeout.Held.Lock, nil, c.UserDir, c.Now)
		o.AgentHint = hint.Line(hint.MCPTimeout, timeout.Wait, timeout.Held.Lock.Holder)
	case errors.As(err, &held):
		o.Exit, o.Class, o.Reason = ExitLockFailed, ClassBusy, ReasonContended
		o.held(held.Lock)
		o.Detail = heldDetail(held, c.Now)
		o.Hints = heldHints(held.Lock, c.Wait, c.UserDir, c.Now)
		o.AgentHint = hint.Line(hint.MCPHeld, held.Lock.Holder, held.Lock.Key)
	case errors.As(err, &stuck):
		// No later claim finds anything: a loop that waits on exit 4
		// would wait for ever.
		o.Exit, o.Class, o.Reason = ExitPolicy, ClassError, ReasonPackage
	case errors.As(err, &pkgState), errors.As(err, &noFree):
		// Nothing to take now: exit 4 like a held lock, so a worker loop
		// tries again later (a drained queue is no error).
		o.Exit, o.Class, o.Reason = ExitLockFailed, ClassBusy, ReasonPackage
	default:
		return false
	}
	return true
}

// refused classifies a request refused for what it asks: an invalid key
// or one outside the namespaces, invalid input, another's identity,
// another's lock.
func (o *Outcome) refused(err error, c Context) bool {
	var (
		keyErr   *lockkey.Error
		usage    *session.UsageError
		cfgErr   *config.Error
		invalid  *locks.InvalidRequestError
		agentErr invalidArgument
		ident    *session.IdentityError
		notOwner *locks.NotOwnerError
		forced   forceRefused
	)
	switch {
	case errors.As(err, &keyErr):
		o.Exit, o.Class, o.Expected = ExitUsage, ClassInvalidKey, keyErr.Expected
		if keyErr.NotPermitted {
			o.Exit, o.Class = ExitNotPermitted, ClassNotPermitted
			// port:N is a lease of `ports`, which lock commands do not take.
			if p := portOf(keyErr.Input); p != "" && strings.Trim(p, "0123456789") == "" {
				o.Hints = []string{hint.Line(hint.PortKey, p)}
			}
		}
		if strings.HasPrefix(keyErr.Input, "env:") && strings.Contains(keyErr.Reason, "port") {
			o.AgentHint = hint.Line(hint.MCPPortEnv)
		}
	case errors.As(err, &usage), errors.As(err, &cfgErr), errors.As(err, &invalid), errors.As(err, &agentErr):
		o.Exit, o.Class = ExitUsage, ClassInvalidArgument
	case errors.As(err, &ident):
		o.Exit, o.Class = ExitNotPermitted, ClassNotPermitted
	case errors.As(err, &forced):
		o.Exit, o.Class = ExitNotPermitted, ClassNotPermitted
		l, admin := forced.ForceRefused()
		o.held(l)
		if admin {
			o.Hints = []string{hint.Line(hint.ForceNeedsAdmin, l.Holder)}
		} else {
			o.Hints = []string{hint.Line(hint.ForceAgentHuman, l.Holder, lockkey.RelArg(l.Key, c.UserDir))}
		}
		o.AgentHint = o.Hints[0]
	case errors.As(err, &notOwner):
		o.Exit, o.Class = ExitNotPermitted, ClassNotOwner
		o.held(notOwner.Lock)
		o.Hints = []string{notOwnerHint(notOwner, c.UserDir)}
		o.AgentHint = hint.Line(hint.MCPNotOwner, notOwner.Lock.Holder, notOwner.Lock.Session, notOwner.Op)
	default:
		return false
	}
	return true
}

// storeAnswer classifies what the lock store answered against a change:
// a race lost to another writer, the session's rate limit, an unreadable
// record, a lock that is gone or was taken over.
func (o *Outcome) storeAnswer(err error, c Context) bool {
	var (
		contend *locks.ContendedError
		rate    *locks.RateLimitedError
		corrupt *locks.CorruptError
		lost    *locks.LostError
	)
	switch {
	case errors.As(err, &contend):
		o.Exit, o.Class, o.Reason = ExitLockFailed, ClassBusy, ReasonContended
		o.Hints = []string{hint.Line(hint.Contended)}
		o.AgentHint = hint.Line(hint.MCPContended)
	case errors.As(err, &rate):
		o.Exit, o.Class = ExitRateLimited, ClassRateLimited
		o.AgentHint = hint.Line(hint.MCPRateLimited, rate.Limit, rate.Window)
	case errors.As(err, &corrupt):
		o.Exit, o.Class = ExitLockFailed, ClassCorrupt
		o.Hints = []string{hint.CorruptLine(c.Where, corrupt.Path, corrupt.Key, lockkey.RelArg(corrupt.Key, c.UserDir))}
		o.AgentHint = hint.Line(hint.MCPCorrupt, corrupt.Path, corrupt.Key)
		if corrupt.Key == "" || safetext.Field(corrupt.Key) != corrupt.Key {
			o.AgentHint = hint.Line(hint.MCPCorruptRecord, corrupt.Path, corrupt.Path)
		}
	case errors.As(err, &lost):
		o.Exit, o.Class = ExitLockFailed, ClassLockLost
		o.Hints = []string{hint.Line(hint.Reacquire, lockkey.RelArg(lost.Key, c.UserDir))}
		o.AgentHint = hint.Line(hint.MCPLockLost)
	case errors.Is(err, locks.ErrNotFound), errors.Is(err, locks.ErrTokenMismatch):
		o.Exit, o.Class = ExitLockFailed, ClassLockLost
		o.AgentHint = hint.Line(hint.MCPLockLost)
	default:
		return false
	}
	return true
}

// failed classifies the rest: a store, journal or git that could not be
// used, an interrupted command, and what lockgate cannot classify.
func (o *Outcome) failed(err error) {
	var (
		unavail  *locks.UnavailableError
		journalE *locks.JournalError
		gitErr   *gitexec.Error
	)
	var cause *redisstore.Cause
	switch {
	case errors.As(err, &cause) && cause.Reason == redisstore.ReasonReplicas:
		o.Class = ClassUnavailable
		o.Hints = []string{hint.Line(hint.TooFewReplicas)}
	case errors.Is(err, gitexec.ErrNotRepo):
		o.Class = ClassUnavailable
		o.Hints = []string{hint.Line(hint.NotRepo)}
	case errors.As(err, &unavail), errors.As(err, &journalE), errors.As(err, &gitErr):
		o.Class = ClassUnavailable
	case errors.Is(err, context.Canceled):
		o.Exit = ExitInterrupted
	default:
		// What lockgate cannot classify is a failure to decide, never a
		// pass: exit 3, as a store or git that failed.
		o.Class = ClassUnavailable
	}
}

func (o *Outcome) held(l locks.Lock) { o.Held = &l }

// hookHint says how to get past a hook that failed closed; only hooks that
// honour LOCKGATE_SKIP in the committer's environment offer the bypass,
// and hooks.on_store_unavailable only when the store is what could not be
// read.
func hookHint(e *session.HookError) string {
	var ue *locks.UnavailableError
	store := errors.As(e.Err, &ue)
	if git, ok := hint.BypassGit[e.Hook]; ok {
		if store {
			return hint.Line(hint.HookFailedStore, git)
		}
		return hint.Line(hint.HookFailed, git)
	}
	if store {
		return hint.Line(hint.HookFailedStoreNoBypass)
	}
	return hint.Line(hint.HookFailedNoBypass)
}

func heldDetail(h *locks.HeldError, now time.Time) string {
	l := h.Lock
	reason := ""
	if l.Reason != "" {
		reason = ", reason: " + l.Reason
	}
	return hint.Line(hint.HeldDetail, h.Where, l.Holder, l.HolderType, l.Session,
		l.CreatedAt.UTC().Format(time.RFC3339), l.ExpiresAt.UTC().Format(time.RFC3339), duration.Until(l.ExpiresAt, now), reason)
}

// heldHints resolves a lock held by someone else: wait for it (when the
// command can, as wait renders), ask its holder to give it back, or clear
// it. The user's own commands name paths relative to dir; the holder's,
// from the top of the worktree.
func heldHints(l locks.Lock, wait func(string) string, dir string, now time.Time) []string {
	var out []string
	if wait != nil {
		out = append(out, wait(duration.Format(max(l.ExpiresAt.Sub(now), time.Minute))))
	}
	// Port leases are never held against `lock acquire`: ports allocate
	// skips them.
	switch feature := pausedFeature(l.Key); {
	case feature != "":
		out = append(out, hint.Line(hint.AskUnpause, l.Holder, feature))
	case l.Action == "claim" && l.TaskID != "" && l.Key != lockkey.TaskKey(l.TaskID):
		// A file of a claimed package goes back with the package.
		out = append(out, hint.Line(hint.AskFinishPackage, l.Holder, l.TaskID, l.TaskID, l.TaskID))
	default:
		out = append(out, hint.Line(hint.AskRelease, l.Holder, l.Key))
	}
	return append(out, hint.Line(hint.Clear, lockkey.RelArg(l.Key, dir)))
}

// notOwnerHint resolves a release or refresh of another's lock with the
// command that overrides it for that kind of key, paths relative to dir.
func notOwnerHint(e *locks.NotOwnerError, dir string) string {
	l := e.Lock
	key := lockkey.RelArg(l.Key, dir)
	port, feature := portOf(l.Key), pausedFeature(l.Key)
	switch {
	case e.Op == "refresh" && port != "":
		return hint.Line(hint.RefreshPortNotOwner, l.Holder, l.Session)
	case e.Op == "refresh":
		return hint.Line(hint.RefreshNotOwner, l.Holder, l.Session, key, key)
	case port != "":
		return hint.Line(hint.ForcePortsRelease, l.Holder, l.Session, port)
	case feature != "":
		return hint.Line(hint.ForceUnpause, l.Holder, l.Session, feature)
	default:
		return hint.Line(hint.ForceRelease, l.Holder, l.Session, key)
	}
}

// portOf is the port number of a port lease key, or "".
func portOf(key string) string {
	p, ok := strings.CutPrefix(key, lockkey.PortNS+":")
	if !ok {
		return ""
	}
	return p
}

// pausedFeature is the feature id of a pause key, or "".
func pausedFeature(key string) string {
	if !lockkey.IsPause(key) {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(key, "feature:"), ":pause")
}

// ErrorObject is an error as JSON shows it: the error object of a refused
// MCP tool call, and of a failed command under --json.
type ErrorObject struct {
	// Class: busy, invalid_key, operation_not_permitted, not_owner,
	// lock_lost, corrupt_lock, unavailable, rate_limited, invalid_argument
	// or error.
	Class string `json:"class"`
	// Reason refines busy: lock_contended or lock_timeout.
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message"`
	ExitCode int    `json:"exit_code" jsonschema:"the exit code lockgate's CLI gives the same outcome"`
	// Expected is the canonical form of an invalid key, when one exists.
	Expected string            `json:"expected,omitempty"`
	HeldBy   *session.LockView `json:"held_by,omitempty" jsonschema:"the lock that stands in the way"`
	Hint     string            `json:"hint,omitempty"`
}

// Object is err as JSON shows it, with hint as its hint.
func (o Outcome) Object(err error, hint string) *ErrorObject {
	obj := &ErrorObject{Class: o.Class, Reason: o.Reason, Message: err.Error(), ExitCode: o.Exit, Expected: o.Expected, Hint: hint}
	if o.Held != nil {
		v := session.ViewOf(*o.Held)
		obj.HeldBy = &v
	}
	return obj
}
