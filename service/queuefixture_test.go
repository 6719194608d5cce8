package service

import (
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/queue/queuetest"
)

// fakeClock is the workspaces' one clock in these tests.
type fakeClock = queuetest.Clock

const queuePackages = queuetest.Packages

// queueRepo is queuetest.Repo, its workers' workspaces the service's.
func queueRepo(t *testing.T, yaml string) (*gittest.Repo, *fakeClock, func(worker string) *Workspace) {
	t.Helper()
	r, clock, open := queuetest.Repo(t, yaml)
	return r, clock, func(worker string) *Workspace { return wrap(open(worker)) }
}

func pkgReq(id string) queue.PackageRequest { return queue.PackageRequest{ID: id} }

func claimed(t *testing.T, e *Workspace, id string) queue.Claimed {
	t.Helper()
	c, err := e.Queue().ClaimWork(context.Background(), queue.ClaimRequest{PackageRequest: pkgReq(id), TTL: time.Hour})
	if err != nil {
		t.Fatalf("claim %q: %v", id, err)
	}
	return c
}

// statusOf is package id's status in q.
func statusOf(q *queue.Queue, id string) (*queue.PackageStatus, bool) {
	for i := range q.Packages {
		if q.Packages[i].ID == id {
			return &q.Packages[i], true
		}
	}
	return nil, false
}
