// Package queuetest builds, for tests, the work queues the queue and the
// service are tested on: a repository of four files and a work packages
// file, and one clock its workers' sessions share.
package queuetest

import (
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/usecasetest"
	"github.com/lockgate/lockgate/service/session"
)

// Clock is the sessions' one clock in these tests: expiry and takeover
// follow it, not the wall clock.
type Clock = usecasetest.Clock

// Packages is a work packages file: WP-2 comes first (priority), WP-3 waits for WP-1, WP-4
// shares WP-1's file.
const Packages = `packages:
  - id: WP-1
    title: one
    locks:
      files: [src/a.go]
  - id: WP-2
    title: two
    priority: 5
    locks:
      files: [src/b.go]
  - id: WP-3
    title: after one
    depends_on: [WP-1]
    locks:
      files: [src/c.go]
  - id: WP-4
    title: one again
    locks:
      files: [src/a.go, src/d.go]
`

// Repo is a repository of src/a.go to src/d.go and the work packages file
// yaml, its events kept in the journal; open loads a worker's session in
// it on the clock, its store opened to take locks.
func Repo(t *testing.T, yaml string) (r *gittest.Repo, clock *Clock, open func(worker string) *session.Workspace) {
	t.Helper()
	r = gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nworkflow:\n  auto_commit: false\n")
	r.Write("work-packages.yaml", yaml)
	for _, f := range []string{"src/a.go", "src/b.go", "src/c.go", "src/d.go"} {
		r.Write(f, "package src\n")
	}
	r.Commit("init")
	clock = usecasetest.NewClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	open = func(worker string) *session.Workspace {
		t.Helper()
		ctx := context.Background()
		e, err := session.Load(ctx, session.Options{Dir: r.Dir, As: worker, WorkerType: "agent", Session: worker, Clock: clock.Now,
			Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Open(ctx, session.Purpose{TakesLocks: true}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e
	}
	return r, clock, open
}
