package service

import (
	"cmp"
	"context"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/gitstore"
)

// gitLockStates are the git store's readers of its lock table's states,
// which the hooks judge a push to its ref by.
var gitLockStates = hooks.LockStates{Follows: gitstore.Follows, Unlogged: gitstore.Unlogged, Released: gitstore.Released}

// openGitStore opens the git store at remote's ref for the session: where
// the locks are is the clone's (see the session's gitWhere); how to talk
// to the remote is the policy's.
func (e *Workspace) openGitStore(ctx context.Context, remote, ref string) (locks.Store, error) {
	g := e.Cfg.Locks.Git
	opts := gitstore.Options{
		GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree(),
		Remote: remote, Ref: ref, ClockSkew: g.ClockSkew.Std(), Timeout: g.Timeout.Std(),
	}
	opts.RemoteFrom = e.gitRemoteFrom()
	if e.Purpose.Cached {
		opts.MaxAge = g.MaxAge.Std()
	}
	if e.Purpose.Server {
		opts.Reuse = -1 // every call of a long-lived server asks
	}
	opts.FenceFloor = e.LogFenceFloor
	opts.Warn = func(msg string) { e.Warn("warning", msg) }
	sign, err := e.Signer(ctx)
	if err != nil {
		return nil, err
	}
	opts.Sign = sign
	s, err := gitstore.Open(opts)
	if err != nil {
		return nil, Usagef("%v (locks.git in %s)", err, cmp.Or(e.Cfg.Path, config.DefaultFile))
	}
	return s, nil
}

// gitRemoteFrom says where the git store's remote comes from, in a
// sentence for the error of a clone without it.
func (e *Workspace) gitRemoteFrom() string {
	file := cmp.Or(e.Cfg.Path, config.DefaultFile)
	if e.Cfg.Locks.Git.Remote != "" {
		return "locks.git.remote in " + file
	}
	return "workflow.remote, origin unless " + file + " sets it, as locks.git.remote is not set"
}
