package service

import (
	"context"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/service/verify"
	"github.com/lockgate/lockgate/workflow"
)

// Workspace is what a request works on: a session (the repository, its
// config, the worker it acts as and, once opened, its lock store) and the
// use cases that need more than the git hooks do — the lock log, the
// queue, the planner, serve's users.
type Workspace struct {
	*session.Workspace
}

// Load discovers the repository and reads its config and the identity
// the request acts as (session.Load), for the use cases of this package.
func Load(ctx context.Context, opts Options) (*Workspace, error) {
	s, err := session.Load(ctx, opts)
	if err != nil {
		return nil, err
	}
	return wrap(s), nil
}

// wrap is the workspace of session s, its store's fence floor read from
// the lock log.
func wrap(s *session.Workspace) *Workspace {
	e := &Workspace{Workspace: s}
	v := verify.Handler{Workspace: s}
	s.LogFenceFloor = v.FenceFloor
	s.OpenBranch = e.openBranch
	s.OpenGitStore = e.openGitStore
	s.GitLockStates = gitLockStates
	s.CheckSignatures = v.SignersAt
	return e
}

// openBranch opens the workflow branch for the session's audit trail.
func (e *Workspace) openBranch(b session.BranchSetup) (session.Branch, error) {
	w, err := workflow.Open(workflow.Config{
		GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree(), Branch: e.Cfg.Workflow.Branch, Remote: e.Cfg.Workflow.Remote,
		Lock: b.Lock, RotateJournal: int64(e.Cfg.Journal.RotateBytes), Sign: b.Sign, Vouches: b.Vouches,
	})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// branchWriter is the workflow branch the session's audit trail writes,
// opened once per run.
func (e *Workspace) branchWriter(ctx context.Context) (*workflow.Writer, error) {
	b, err := e.BranchWriter(ctx)()
	if err != nil {
		return nil, err
	}
	return b.(*workflow.Writer), nil
}

// Identity names who one request acts as; empty fields keep the
// workspace's.
type Identity = session.Identity

// Verifier is the session's handler of the lock log: verify, and the
// readers of the log the other use cases share.
func (e *Workspace) Verifier() verify.Handler { return verify.Handler{Workspace: e.Workspace} }

// Locks is the session's handler of lock requests: acquire, release,
// refresh, check, list, clear, prune, hold, pause, ports, branch locks.
func (e *Workspace) Locks() *lockops.Handler { return &lockops.Handler{Workspace: e.Workspace} }

// Queue is the session's handler of the work queue: claims, done, give
// back, retry, the package list and the worker loop.
func (e *Workspace) Queue() *queue.Handler { return &queue.Handler{Workspace: e.Workspace} }

// ActAs is session.Workspace.ActAs for the use cases of this package: the
// workspace one request of a server works on.
func (e *Workspace) ActAs(id Identity) (*Workspace, error) {
	s, err := e.Workspace.ActAs(id)
	if err != nil {
		return nil, err
	}
	return wrap(s), nil
}

// repo is the session's repository, for the git the service runs.
func (e *Workspace) repo() *gitexec.Repo {
	return &gitexec.Repo{Toplevel: e.WorkTree(), GitDir: e.GitDir(), CommonDir: e.CommonDir()}
}
