// Package verifytest builds, for tests, the lock logs verify and the
// service's log readers are tested on: a repository of five commits made
// at one time, lock events of any worker, and ways to put them on the
// workflow branch and in the journal.
package verifytest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/workflow"
)

// CommitDay is when the commits of Repo are made.
var CommitDay = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// policy keeps events in the journal until a test commits them, and asks
// for a lock on every change.
const policy = `workflow:
  auto_commit: false
hooks:
  require_lock: true
scope:
  profiles:
    backfill: {}
    agents: {}
`

// Repo is a repository whose init commit (tagged init) is followed by
// five commits of src/a.go, all made at CommitDay, and the options that
// load the session of worker me in it an hour later.
func Repo(t *testing.T) (*gittest.Repo, session.Options) {
	t.Helper()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", policy)
	r.Write("src/a.go", "package a\n")
	r.Commit("init")
	r.Git("tag", "init")
	for i := range 5 {
		r.Write("src/a.go", fmt.Sprintf("package a\n\n// %d\n", i))
		r.Commit(fmt.Sprintf("change %d", i))
	}
	return r, session.Options{Dir: r.Dir, As: "me", WorkerType: "agent", Session: "me",
		Clock: func() time.Time { return CommitDay.Add(time.Hour) }, Getenv: func(string) string { return "" }}
}

// SeedBranch commits evs to the workflow branch.
func SeedBranch(t testing.TB, e *session.Workspace, evs []journal.Event) {
	t.Helper()
	w, err := workflow.Open(workflow.Config{GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree(), Branch: e.Cfg.Workflow.Branch})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Commit(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
}

// Record appends evs to the journal and commits them to the workflow
// branch as a command does (workflow.Writer.CatchUp).
func Record(t testing.TB, e *session.Workspace, evs []journal.Event) {
	t.Helper()
	if err := e.JournalFile().Append(evs...); err != nil {
		t.Fatal(err)
	}
	w, err := workflow.Open(workflow.Config{GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree(), Branch: e.Cfg.Workflow.Branch})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.CatchUp(context.Background(), e.JournalFile()); err != nil {
		t.Fatal(err)
	}
}

// LockEv is a lock event of worker on key at t, its grant fence, expiring
// after ttl when ttl is not 0.
func LockEv(action, worker, key string, fence uint64, t time.Time, ttl time.Duration) journal.Event {
	ev := journal.Event{ID: journal.NewID(), Timestamp: t, Worker: worker, WorkerType: "agent", Session: worker,
		Action: action, Key: key, Fence: fence, Store: "file"}
	if ttl != 0 {
		exp := t.Add(ttl)
		ev.ExpiresAt = &exp
	}
	return ev
}

// OldHistory is n events of other workers' hour-long locks on other
// files, ten seconds apart, from ten days before the commits.
func OldHistory(n int) []journal.Event {
	evs := make([]journal.Event, n)
	for i := range evs {
		evs[i] = LockEv(journal.ActionAcquire, "other", fmt.Sprintf("src/old/%d.go", i), uint64(i+1),
			CommitDay.Add(-240*time.Hour+time.Duration(i)*10*time.Second), time.Hour)
	}
	return evs
}
