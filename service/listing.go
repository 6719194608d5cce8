package service

import (
	"context"
	"os"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// StagedListing is git's listing of the staged change, started before the
// workspace loads (StartListing): a hook's git then runs while lockgate
// reads its command line, finds the repository and loads the config —
// git is most of a hook's time.
type StagedListing struct {
	dir  string
	wait func() ([]byte, error)
	stop context.CancelFunc
}

// StartListing starts git listing the staged change in the current
// directory, for hook: nil unless hook judges the staged change
// (pre-commit, pre-merge-commit) and LOCKGATE_SKIP, which may skip it, is
// unset. Load (Options.Listing) takes it when the repository's work tree
// is that directory, where git runs its hooks; otherwise, or when nothing
// takes it, Stop stops it.
func StartListing(ctx context.Context, hook string, getenv func(string) string) *StagedListing {
	if getenv == nil {
		getenv = os.Getenv
	}
	if !listsStaged(hook) || getenv("LOCKGATE_SKIP") != "" {
		return nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil // Load lists the change when it has found the repository
	}
	ctx, stop := context.WithCancel(ctx)
	return &StagedListing{dir: dir, wait: gitexec.StartStaged(ctx, dir), stop: stop}
}

// Stop stops git if it is still listing; the listing's result is then an
// error. It may be called more than once, and on nil.
func (l *StagedListing) Stop() {
	if l != nil {
		l.stop()
	}
}

// listStaged starts git's listing of the staged change of repo for
// Options.Hook, or takes Options.Listing when it lists the same work
// tree; it stops a listing it does not take. The workspace's Close stops
// the one it keeps.
func (e *Workspace) listStaged(ctx context.Context, repo *gitexec.Repo) {
	early := e.opts.Listing
	if !listsStaged(e.opts.Hook) || repo.Toplevel == "" || e.opts.Getenv("LOCKGATE_SKIP") != "" {
		early.Stop()
		return
	}
	if early == nil || early.dir != repo.Toplevel {
		early.Stop()
		ctx, stop := context.WithCancel(ctx)
		early = &StagedListing{dir: repo.Toplevel, wait: gitexec.StartStaged(ctx, repo.Toplevel), stop: stop}
	}
	e.staged = early.wait
	e.closers = append(e.closers, func() error { early.Stop(); return nil })
}
