package session

import (
	"context"

	"github.com/lockgate/lockgate/model/config"
)

// The steps of the session that the black-box tests (package
// session_test) drive one at a time. Only the session calls them, so they
// are not part of its API: these names exist for the tests alone.

var (
	ResolveExisting = resolveExisting
	Within          = within
	Owner           = owner
)

func (e *Workspace) PrefixOf(ctx context.Context, cfg *config.Config) (string, string) {
	return e.prefixOf(ctx, cfg)
}

func (e *Workspace) RecordStore(ctx context.Context, spec, prefix, remote, ref string) error {
	return e.recordStore(ctx, spec, prefix, remote, ref)
}

func (e *Workspace) WarnSkipped(path string, lines []int) { e.warnSkipped(path, lines) }
