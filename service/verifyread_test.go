package service

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/usecasetest"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/verify/verifytest"
)

// commitDay is when verifytest's commits are made.
var commitDay = verifytest.CommitDay

var (
	lockEv     = verifytest.LockEv
	oldHistory = verifytest.OldHistory
)

// verifyRepo is verifytest.Repo and the workspace of worker me in it.
func verifyRepo(t *testing.T) (*gittest.Repo, *Workspace) {
	t.Helper()
	r, opts := verifytest.Repo(t)
	e, err := Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return r, e
}

func seedBranch(t *testing.T, e *Workspace, evs []journal.Event) {
	verifytest.SeedBranch(t, e.Workspace, evs)
}

func record(t *testing.T, e *Workspace, evs []journal.Event) { verifytest.Record(t, e.Workspace, evs) }

// `log --since 1h` decodes about as many events with 1,000 older events
// in the journal and on the workflow branch as with 10.
func TestLogReadsItsSpan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := commitDay.Add(time.Hour)
	reads := map[int]int{}
	for _, n := range []int{10, 1000} {
		_, e := verifyRepo(t)
		old := oldHistory(n)
		if err := e.JournalFile().Append(old...); err != nil {
			t.Fatal(err)
		}
		seedBranch(t, e, old)
		if _, err := e.Log(ctx, LogRequest{}); err != nil { // writes the events cache
			t.Fatal(err)
		}
		recent := []journal.Event{
			lockEv(journal.ActionAcquire, "me", "src/a.go", 1, now.Add(-30*time.Minute), time.Hour),
			lockEv(journal.ActionRelease, "me", "src/a.go", 1, now.Add(-10*time.Minute), 0),
		}
		if err := e.JournalFile().Append(recent...); err != nil {
			t.Fatal(err)
		}
		seedBranch(t, e, recent[:1])
		evs, read, err := e.readAllEvents(ctx, now.Add(-time.Hour), time.Time{})
		if err != nil || len(evs) != 2 || evs[0].ID != recent[0].ID || evs[1].ID != recent[1].ID {
			t.Fatalf("%d: %d events, %v", n, len(evs), err)
		}
		got, err := e.Log(ctx, LogRequest{Since: time.Hour, UntilAgo: 20 * time.Minute})
		if err != nil || len(got) != 1 || got[0].ID != recent[0].ID {
			t.Fatalf("%d: log --since 1h --until 20m = %d events, %v", n, len(got), err)
		}
		reads[n] = read
	}
	if reads[1000] > reads[10]+256 {
		t.Fatalf("events decoded by log --since 1h: %v: the older history was read", reads)
	}
}

// With journal.rotate_bytes small, lock commands rotate the journal as
// they commit to the workflow branch, and log, workflow sync and the
// board still read every event: the branch's, and those of both
// segments.
func TestJournalRotatesUnderCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\njournal:\n  rotate_bytes: 2048\n")
	r.Write("src/a.go", "package a\n")
	r.Commit("init")
	clock := usecasetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	e, err := Load(ctx, Options{Dir: r.Dir, As: "me", WorkerType: "agent", Session: "me", Clock: clock.Now, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.Open(ctx, Purpose{TakesLocks: true}); err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	for range rounds {
		if _, err := e.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"src/a.go"}}); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Minute)
		if _, err := e.Locks().Release(ctx, lockops.ReleaseRequest{Keys: []string{"src/a.go"}}); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Minute)
	}
	if _, err := os.Stat(e.JournalFile().PreviousPath()); err != nil {
		t.Fatalf("the journal was not rotated: %v", err)
	}
	evs, err := e.Log(ctx, LogRequest{Key: "src/a.go"})
	if err != nil || len(evs) != 2*rounds {
		t.Fatalf("log: %d events, %v; want %d", len(evs), err, 2*rounds)
	}
	res, err := e.SyncWorkflow(ctx, SyncRequest{NoPush: true})
	if err != nil || res.Committed != 0 {
		t.Fatalf("workflow sync = %+v, %v", res, err)
	}
	snap, err := e.Board().Snapshot(ctx)
	if err != nil || len(snap.Events) != boardEvents {
		t.Fatalf("board: %d events, %v", len(snap.Events), err)
	}
}

// journal.rotate_bytes must be 0 or more.
func TestJournalRotateBytesNegative(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\njournal:\n  rotate_bytes: -1\n")
	r.Commit("init")
	_, err := Load(context.Background(), Options{Dir: r.Dir, As: "me", Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "journal.rotate_bytes") {
		t.Fatalf("Load = %v, want a problem naming journal.rotate_bytes", err)
	}
}
