package lockops

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/scope"
)

// The rules a forced removal of another worker's lock is judged by.
const (
	// ForceRuleAdmin: through lockgate serve, only an admin user forces
	// another user's lock. A token is handed to scripts and tools, and
	// the board is open in browsers: most should only end their own.
	ForceRuleAdmin = "serve_admin"
	// ForceRuleAgentsClearHuman: an agent does not force a person's lock
	// unless locks.agents_clear_human says so, on the command line as
	// through the server: a person's claim is not undone by a program.
	ForceRuleAgentsClearHuman = "agents_clear_human"
)

// ForceRefusedError is a forced removal (lock clear --force, lock release
// --force, unpause --force, ports release --force, git lfs unlock
// --force, the board's clear) of a lock another worker holds that a rule
// refuses.
type ForceRefusedError struct {
	// Lock is the lock that was to be removed.
	Lock locks.Lock
	// By is the worker who asked.
	By locks.Owner
	// Rule is ForceRuleAdmin or ForceRuleAgentsClearHuman.
	Rule string
}

func (e *ForceRefusedError) Error() string {
	l := e.Lock
	if e.Rule == ForceRuleAdmin {
		return fmt.Sprintf("refused: %s is held by %s (%s); through lockgate serve only an admin may clear another user's lock, and %s is no admin",
			l.Key, l.Holder, l.HolderType, e.By.Holder)
	}
	return fmt.Sprintf("refused: %s is held by %s, a person; agent %s may not clear a person's lock (locks.agents_clear_human is not true in .lockgate.yaml)",
		l.Key, l.Holder, e.By.Holder)
}

// ForceCheck is the judge of the workspace's forced removals: another
// session of its own worker is always its own to end; another worker's
// lock needs, through lockgate serve, an admin user, and from an agent,
// a lock not held by a person unless locks.agents_clear_human.
func (e *Handler) ForceCheck(ctx context.Context) locks.ForceCheck {
	return func(l locks.Lock) error {
		if l.Holder == e.Me.Holder {
			return nil
		}
		if e.ServeUser != nil && !e.ServeUser.Admin {
			return &ForceRefusedError{Lock: l, By: e.Me, Rule: ForceRuleAdmin}
		}
		if e.Me.HolderType == scope.WorkerAgent && l.HolderType == scope.WorkerHuman {
			allowed, err := e.agentsClearHuman(ctx)
			if err != nil {
				return err
			}
			if !allowed {
				return &ForceRefusedError{Lock: l, By: e.Me, Rule: ForceRuleAgentsClearHuman}
			}
		}
		return nil
	}
}

// agentsClearHuman is locks.agents_clear_human as both the policy in use
// and the one committed on HEAD say it: an agent edits the worktree's
// .lockgate.yaml (or names a policy of its own with -c) as easily as any
// file, and must not grant itself a person's locks by doing so.
func (e *Handler) agentsClearHuman(ctx context.Context) (bool, error) {
	if !e.Cfg.Locks.AgentsClearHuman {
		return false, nil
	}
	if e.WorkTree() == "" || e.Judging {
		return true, nil // a server's or a judge's policy is the committed one
	}
	committed, err := e.CommittedConfig(ctx)
	if err != nil {
		return false, err
	}
	if committed != nil {
		return committed.Locks.AgentsClearHuman, nil
	}
	// None: HEAD's policy is the one in use byte for byte, or HEAD has
	// none, which allows nothing.
	_, found, err := gitexec.HeadFile(ctx, e.repo(), config.DefaultFile)
	var unborn *gitexec.MissingHeadError
	if errors.As(err, &unborn) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the policy committed on HEAD: %w", err)
	}
	return found, nil
}

// ForceRefused is the lock whose removal was refused, and whether the rule
// is serve's (only admins force another's lock).
func (e *ForceRefusedError) ForceRefused() (locks.Lock, bool) {
	return e.Lock, e.Rule == ForceRuleAdmin
}
