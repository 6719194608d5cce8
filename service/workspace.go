package service

import (
	"context"

	"github.com/lockgate/lockgate/service/session"
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
	s.LogFenceFloor = e.FenceFloor
	return e
}

// Identity names who one request acts as; empty fields keep the
// workspace's.
type Identity = session.Identity

// ActAs is session.Workspace.ActAs for the use cases of this package: the
// workspace one request of a server works on.
func (e *Workspace) ActAs(id Identity) (*Workspace, error) {
	s, err := e.Workspace.ActAs(id)
	if err != nil {
		return nil, err
	}
	return wrap(s), nil
}
