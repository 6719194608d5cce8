package session

import (
	"context"
	"errors"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/scope"
)

// Runner builds the hook runner for this repository: compiled policy,
// opened store (or why it could not be opened), identity. It opens the
// store for purpose p, judging changes.
func (e *Workspace) Runner(ctx context.Context, p Purpose, profile string) (*hooks.Runner, error) {
	h, err := e.LogRunner(ctx, profile)
	if err != nil {
		return nil, err
	}
	if err := e.judgeByCommitted(ctx, h.Checker); err != nil {
		return nil, err
	}
	if err := e.attachStore(ctx, h, p); err != nil {
		return nil, err
	}
	return h, nil
}

// attachStore opens the lock store for purpose p, judging changes, and
// gives it to h's checker — or why it could not be opened, which the
// checks report as the policy says (hooks.on_store_unavailable).
func (e *Workspace) attachStore(ctx context.Context, h *hooks.Runner, p Purpose) error {
	p.Judges = true
	if err := e.Open(ctx, p); err != nil {
		var ue *locks.UnavailableError
		if !errors.As(err, &ue) {
			return err
		}
		h.Checker.StoreErr = err
		return nil
	}
	h.Checker.Store = e.Store
	return nil
}

// LogRunner is Runner without a lock store: for judging against the lock
// log (verify), in a clone that may have none.
func (e *Workspace) LogRunner(ctx context.Context, profile string) (*hooks.Runner, error) {
	ignoreCase, err := e.IgnoreCase(ctx)
	if err != nil {
		return nil, err
	}
	pol := e.Cfg.Scope.Policy
	pol.IgnoreCase = ignoreCase
	policy, err := scope.Compile(pol)
	if err != nil {
		return nil, Usagef("%s: scope: %v", e.Cfg.Path, err)
	}
	if profile != "" && !policy.HasProfile(profile) {
		return nil, &UnknownProfileError{Usagef("unknown profile %q; .lockgate.yaml defines %v", profile, policy.Profiles())}
	}
	ck := &hooks.Checker{
		Policy: policy, Me: e.Me, Profile: profile, RequireLock: e.Cfg.Hooks.RequireLock,
		PerBranch: e.Cfg.Locks.PerBranch,
		Now:       e.Now(), WarnUnavailable: e.Cfg.Hooks.OnStoreUnavailable == "warn",
		Dir:         e.UserDir(),
		PolicyFiles: policyFiles(e.Cfg), AgentEditable: e.Cfg.Scope.AgentEditable, IgnoreCase: ignoreCase,
	}
	return &hooks.Runner{GitDir: e.repo.GitDir, CommonDir: e.repo.CommonDir, Dir: e.Root(), Checker: ck, LockStates: e.GitLockStates,
		MaxCommits: e.Cfg.Hooks.PrePush.MaxCommits, MaxPaths: e.Cfg.Hooks.PrePush.MaxPaths}, nil
}

// UnknownProfileError is a scope profile that the config does not define.
type UnknownProfileError struct{ Err error }

func (e *UnknownProfileError) Error() string { return e.Err.Error() }

func (e *UnknownProfileError) Unwrap() error { return e.Err }

// RecordWhere is the where of hint.CorruptLine for the opened store: the
// file of a key's record when the store keeps records in files, else nil
// (see locks.RecordWhere).
func (e *Workspace) RecordWhere() func(string) string { return locks.RecordWhere(e.Store) }
