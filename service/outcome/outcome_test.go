package outcome

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/agentsetup"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/session"
)

// TestOf is the table of every typed error lockgate returns, each also
// wrapped with context as callers wrap it: its exit code, MCP class and
// reason, the lock in the way, and whether people and agents get a hint.
func TestOf(t *testing.T) {
	t.Parallel()
	bob := locks.Lock{Key: "src/a.go", Holder: "bob", HolderType: "human", Session: "s1",
		CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}
	pause := bob
	pause.Key = "feature:FEAT-1:pause"
	port := bob
	port.Key = "port:41000"
	held := &locks.HeldError{Lock: bob, Where: "store"}
	gitFailed := &gitexec.Error{Args: []string{"rev-parse"}, Stderr: "fatal: bad", Err: &exec.ExitError{}}
	for _, tt := range []struct {
		name          string
		err           error
		exit          int
		class, reason string
		held          string // key of the lock in the way
		hints, agent  bool   // hint lines for people, a hint for agents
		hintHas       string
	}{
		{name: "already reported", err: &ExitError{Code: 4}, exit: 4, class: ClassError},
		{name: "usage", err: service.Usagef("bad %s", "flag"), exit: ExitUsage, class: ClassInvalidArgument},
		{name: "invalid key", err: &lockkey.Error{Input: "API:x", Reason: "r", Expected: "api:x"}, exit: ExitUsage, class: ClassInvalidKey},
		{name: "key not permitted", err: &lockkey.Error{Input: "zz:x", Reason: "r", NotPermitted: true}, exit: ExitNotPermitted, class: ClassNotPermitted},
		{name: "port key", err: &lockkey.Error{Input: "port:41000", Reason: "r", NotPermitted: true}, exit: ExitNotPermitted, class: ClassNotPermitted, hints: true, hintHas: "ports"},
		{name: "port as env key", err: &lockkey.Error{Input: "env:41000", Reason: "must not be a port number"}, exit: ExitUsage, class: ClassInvalidKey, agent: true},
		{name: "config", err: &config.Error{Problems: []config.Problem{{Msg: "x"}}}, exit: ExitUsage, class: ClassInvalidArgument},
		{name: "invalid request", err: &locks.InvalidRequestError{Msg: "too many"}, exit: ExitUsage, class: ClassInvalidArgument},
		{name: "agent setup", err: &agentsetup.Error{Msg: "not JSON"}, exit: ExitUsage, class: ClassInvalidArgument},
		{name: "held", err: held, exit: ExitLockFailed, class: ClassBusy, reason: ReasonContended, held: "src/a.go", hints: true, agent: true, hintHas: "lock clear --force"},
		{name: "held pause", err: &locks.HeldError{Lock: pause}, exit: ExitLockFailed, class: ClassBusy, reason: ReasonContended, held: pause.Key, hints: true, agent: true, hintHas: "unpause FEAT-1"},
		{name: "timeout", err: &locks.TimeoutError{Held: held, Wait: time.Second}, exit: ExitLockFailed, class: ClassBusy, reason: ReasonTimeout, held: "src/a.go", hints: true, agent: true},
		{name: "corrupt", err: &locks.CorruptError{Key: "src/a.go", Path: "/r/.git/lockgate/locks/x.lock", Err: errors.New("bad")}, exit: ExitLockFailed, class: ClassCorrupt, hints: true, agent: true},
		{name: "not owner", err: &locks.NotOwnerError{Lock: bob, Op: "release"}, exit: ExitNotPermitted, class: ClassNotOwner, held: "src/a.go", hints: true, agent: true, hintHas: "release --force"},
		{name: "not owner refresh", err: &locks.NotOwnerError{Lock: bob, Op: "refresh"}, exit: ExitNotPermitted, class: ClassNotOwner, held: "src/a.go", hints: true, agent: true, hintHas: "lock clear --force"},
		{name: "not owner port", err: &locks.NotOwnerError{Lock: port, Op: "release"}, exit: ExitNotPermitted, class: ClassNotOwner, held: port.Key, hints: true, agent: true, hintHas: "ports release --force"},
		{name: "not owner pause", err: &locks.NotOwnerError{Lock: pause, Op: "release"}, exit: ExitNotPermitted, class: ClassNotOwner, held: pause.Key, hints: true, agent: true, hintHas: "unpause --force"},
		{name: "identity", err: &service.IdentityError{Me: locks.Owner{Holder: "a"}}, exit: ExitNotPermitted, class: ClassNotPermitted},
		{name: "force needs an admin", err: &lockops.ForceRefusedError{Lock: bob, By: locks.Owner{Holder: "al"}, Rule: lockops.ForceRuleAdmin}, exit: ExitNotPermitted, class: ClassNotPermitted, held: "src/a.go", hints: true, agent: true, hintHas: "serve user add NAME --admin"},
		{name: "agent forcing a person's lock", err: &lockops.ForceRefusedError{Lock: bob, By: locks.Owner{Holder: "bot", HolderType: "agent"}, Rule: lockops.ForceRuleAgentsClearHuman}, exit: ExitNotPermitted, class: ClassNotPermitted, held: "src/a.go", hints: true, agent: true, hintHas: "locks.agents_clear_human: true"},
		{name: "rate limited", err: &locks.RateLimitedError{Limit: 10, Window: time.Minute}, exit: ExitRateLimited, class: ClassRateLimited, agent: true},
		{name: "contended", err: &locks.ContendedError{Store: "git origin refs/lockgate/locks", Attempts: 30}, exit: ExitLockFailed, class: ClassBusy, reason: ReasonContended, hints: true, agent: true, hintHas: "run the command again"},
		{name: "lock lost on refresh", err: &locks.LostError{Key: "src/a.go", Op: "refresh"}, exit: ExitLockFailed, class: ClassLockLost, hints: true, agent: true, hintHas: "lock acquire src/a.go"},
		{name: "lock lost", err: locks.ErrNotFound, exit: ExitLockFailed, class: ClassLockLost, agent: true},
		{name: "token mismatch", err: locks.ErrTokenMismatch, exit: ExitLockFailed, class: ClassLockLost, agent: true},
		{name: "store unavailable", err: &locks.UnavailableError{Store: "redis", Err: errors.New("refused")}, exit: ExitUnavailable, class: ClassUnavailable},
		{name: "journal", err: &locks.JournalError{Err: errors.New("disk full")}, exit: ExitUnavailable, class: ClassUnavailable},
		{name: "git", err: gitFailed, exit: ExitUnavailable, class: ClassUnavailable},
		{name: "not a repository", err: gitexec.ErrNotRepo, exit: ExitUnavailable, class: ClassUnavailable, hints: true, hintHas: "-C DIR"},
		{name: "hook, store down", err: &service.HookError{Hook: "pre-commit", Err: &locks.UnavailableError{Store: "redis", Err: errors.New("x")}}, exit: ExitUnavailable, class: ClassUnavailable, hints: true, hintHas: "on_store_unavailable"},
		{name: "hook, git failed", err: &service.HookError{Hook: "pre-push", Err: gitFailed}, exit: ExitUnavailable, class: ClassUnavailable, hints: true, hintHas: "LOCKGATE_SKIP"},
		{name: "hook on a server", err: &service.HookError{Hook: "pre-receive", Err: gitFailed}, exit: ExitUnavailable, class: ClassUnavailable, hints: true},
		{name: "store mismatch", err: &session.StoreMismatchError{}, exit: ExitUnavailable, class: ClassUnavailable},
		{name: "interrupted", err: context.Canceled, exit: ExitInterrupted, class: ClassError},
		{name: "fences exhausted", err: fmt.Errorf("fence counter: %w", locks.ErrFenceExhausted), exit: ExitUnavailable, class: ClassUnavailable},
		{name: "anything else fails closed", err: errors.New("surprise"), exit: ExitUnavailable, class: ClassUnavailable},
	} {
		for _, wrapped := range []bool{false, true} {
			name := tt.name
			err := tt.err
			if wrapped {
				name += " (wrapped)"
				err = fmt.Errorf("context: %w", err)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				wait := func(d string) string { return "`lockgate lock acquire --wait " + d + " x`" }
				o := Of(err, Context{Wait: wait})
				if o.Exit != tt.exit || o.Class != tt.class || o.Reason != tt.reason {
					t.Errorf("exit %d class %q reason %q, want %d %q %q", o.Exit, o.Class, o.Reason, tt.exit, tt.class, tt.reason)
				}
				switch {
				case tt.held == "" && o.Held != nil:
					t.Errorf("held %s, want none", o.Held.Key)
				case tt.held != "" && (o.Held == nil || o.Held.Key != tt.held):
					t.Errorf("held %v, want %s", o.Held, tt.held)
				}
				if (len(o.Hints) > 0) != tt.hints || (o.AgentHint != "") != tt.agent {
					t.Errorf("hints %q, agent hint %q; want hints %v, agent hint %v", o.Hints, o.AgentHint, tt.hints, tt.agent)
				}
				if tt.hintHas != "" && !strings.Contains(strings.Join(o.Hints, "\n"), tt.hintHas) {
					t.Errorf("hints %q lack %q", o.Hints, tt.hintHas)
				}
				obj := o.Object(err, o.AgentHint)
				if obj.ExitCode != o.Exit || obj.Class != o.Class || obj.Message != err.Error() || (obj.HeldBy != nil) != (o.Held != nil) {
					t.Errorf("object %+v does not match %+v", obj, o)
				}
			})
		}
	}
	if o := Of(nil, Context{}); o.Exit != ExitOK {
		t.Errorf("Of(nil) = %+v", o)
	}
}

// A held lock's hints wait only when the command can.
func TestHeldWaits(t *testing.T) {
	t.Parallel()
	err := &locks.HeldError{Lock: locks.Lock{Key: "src/a.go", Holder: "bob", ExpiresAt: time.Now().Add(time.Hour)}}
	waiting := Of(err, Context{Wait: func(d string) string { return "wait " + d }})
	plain := Of(err, Context{})
	if len(waiting.Hints) != len(plain.Hints)+1 || !strings.HasPrefix(waiting.Hints[0], "wait ") {
		t.Errorf("with a wait: %q; without: %q", waiting.Hints, plain.Hints)
	}
}
