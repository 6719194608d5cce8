package service

import (
	"context"
	"errors"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/scope"
	"github.com/lockgate/lockgate/service/hooks"
)

// Evaluate checks paths as the pre-commit hook does, for e's identity.
func (e *Workspace) Evaluate(ctx context.Context, p Purpose, profile string, paths []string, branch string) (*hooks.Report, error) {
	h, err := e.Runner(ctx, p, profile)
	if err != nil {
		return nil, err
	}
	r := &hooks.Report{Hook: "check"}
	if err := h.Checker.Check(ctx, paths, branch, r); err != nil {
		return nil, err
	}
	r.Finish()
	return r, nil
}

// Runner builds the hook runner for this repository: compiled policy,
// opened store (or why it could not be opened), identity. It opens the
// store for purpose p, judging changes.
func (e *Workspace) Runner(ctx context.Context, p Purpose, profile string) (*hooks.Runner, error) {
	h, err := e.LogRunner(ctx, profile)
	if err != nil {
		return nil, err
	}
	p.Judges = true
	if err := e.Open(ctx, p); err != nil {
		var ue *locks.UnavailableError
		if !errors.As(err, &ue) {
			return nil, err
		}
		h.Checker.StoreErr = err
	} else {
		h.Checker.Store = e.Store
	}
	return h, nil
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
		Now: e.Now(), WarnUnavailable: e.Cfg.Hooks.OnStoreUnavailable == "warn",
		Dir: e.UserDir(),
	}
	dir := e.Repo.Toplevel
	if dir == "" {
		dir = e.Repo.GitDir
	}
	return &hooks.Runner{GitDir: e.Repo.GitDir, Dir: dir, Checker: ck,
		MaxCommits: e.Cfg.Hooks.PrePush.MaxCommits, MaxPaths: e.Cfg.Hooks.PrePush.MaxPaths}, nil
}

// UnknownProfileError is a scope profile that the config does not define.
type UnknownProfileError struct{ Err error }

func (e *UnknownProfileError) Error() string { return e.Err.Error() }

func (e *UnknownProfileError) Unwrap() error { return e.Err }
