package service

import (
	"context"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/workflow"
)

// The steps of the use cases that the black-box tests (package
// service_test) drive one at a time. Only the service calls them, so they
// are not part of its API: these names exist for the tests alone.

var (
	Canonicals      = canonicals
	CheckID         = checkID
	IsBookkeeping   = isBookkeeping
	IsPathArg       = isPathArg
	Owner           = owner
	PortKey         = portKey
	ResolveExisting = resolveExisting
	Within          = within
)

func (e *Workspace) AllEvents(ctx context.Context, since time.Time) ([]journal.Event, error) {
	return e.allEvents(ctx, since, time.Time{})
}

func (e *Workspace) BranchWriter(ctx context.Context) func() (*workflow.Writer, error) {
	return e.branchWriter(ctx)
}

func (e *Workspace) CmdFile(p string) string { return e.cmdFile(p) }

func (e *Workspace) FetchLockLog(ctx context.Context) error { return e.fetchLockLog(ctx) }

func (e *Workspace) JudgeByBase(ctx context.Context, rng string) error {
	return e.judgeByBase(ctx, rng)
}

func (e *Workspace) JudgeByHead(ctx context.Context) error { return e.judgeByHead(ctx) }

func (e *Workspace) LogRunner(ctx context.Context, profile string) (*hooks.Runner, error) {
	return e.logRunner(ctx, profile)
}

func (e *Workspace) NoteRejections(ctx context.Context, taskType string, r *hooks.Report) (int, []string, error) {
	return e.noteRejections(ctx, taskType, r)
}

func (e *Workspace) PrefixOf(ctx context.Context, cfg *config.Config) (string, string) {
	return e.prefixOf(ctx, cfg)
}

func (e *Workspace) ReadLockLog(ctx context.Context, extra ...string) ([]journal.Event, error) {
	return e.readLockLog(ctx, extra...)
}

func (e *Workspace) RecordStore(ctx context.Context, spec, prefix, remote, ref string) error {
	return e.recordStore(ctx, spec, prefix, remote, ref)
}

func (e *Workspace) StateAgeNote() string { return e.stateAgeNote() }

func (e *Workspace) StateDir() string { return e.stateDir() }

func (e *Workspace) WarnSkipped(path string, lines []int) { e.warnSkipped(path, lines) }
