package session

import (
	"context"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// listStaged starts git's listing of the staged change of repo for
// Options.Hook, as soon as the repository is found: git then runs while
// lockgate loads the config and the identity, and git is most of a
// hook's time. The workspace's Close stops it if no one waited for it.
func (e *Workspace) listStaged(ctx context.Context, repo *gitexec.Repo) {
	if !listsStaged(e.Opts.Hook) || repo.Toplevel == "" || e.Opts.Getenv("LOCKGATE_SKIP") != "" {
		return
	}
	ctx, stop := context.WithCancel(ctx)
	e.Staged = gitexec.StartStaged(ctx, repo.Toplevel)
	e.Closers = append(e.Closers, func() error { stop(); return nil })
}
