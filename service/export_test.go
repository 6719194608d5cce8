package service

import (
	"context"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// The steps of the use cases that the black-box tests (package
// service_test) drive one at a time. Only the service calls them, so they
// are not part of its API: these names exist for the tests alone.

func (e *Workspace) AllEvents(ctx context.Context, since time.Time) ([]journal.Event, error) {
	return e.allEvents(ctx, since, time.Time{})
}

func (e *Workspace) NoteRejections(ctx context.Context, taskType string, r *hooks.Report) (int, []string, error) {
	return e.noteRejections(ctx, taskType, r)
}
