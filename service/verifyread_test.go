package service

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/workflow"
)

// commitDay is when gittest's commits are made.
var commitDay = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const verifyReadPolicy = `workflow:
  auto_commit: false
hooks:
  require_lock: true
scope:
  profiles:
    backfill: {}
    agents: {}
`

// verifyRepo is a repository whose init commit is followed by five
// commits of src/a.go, all made at commitDay, and the workspace of
// worker me in it.
func verifyRepo(t *testing.T) (*gittest.Repo, *Workspace) {
	t.Helper()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", verifyReadPolicy)
	r.Write("src/a.go", "package a\n")
	r.Commit("init")
	r.Git("tag", "init")
	for i := range 5 {
		r.Write("src/a.go", fmt.Sprintf("package a\n\n// %d\n", i))
		r.Commit(fmt.Sprintf("change %d", i))
	}
	e, err := Load(context.Background(), Options{Dir: r.Dir, As: "me", WorkerType: "agent", Session: "me",
		Clock: func() time.Time { return commitDay.Add(time.Hour) }, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return r, e
}

// seedBranch commits evs to the workflow branch.
func seedBranch(t *testing.T, e *Workspace, evs []journal.Event) {
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

// record appends evs to the journal and commits them to the workflow
// branch as a command does (workflow.Writer.CatchUp).
func record(t *testing.T, e *Workspace, evs []journal.Event) {
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

// lockEv is a lock event of worker on key at t, its grant fence, expiring
// after ttl when ttl is not 0.
func lockEv(action, worker, key string, fence uint64, t time.Time, ttl time.Duration) journal.Event {
	ev := journal.Event{ID: journal.NewID(), Timestamp: t, Worker: worker, WorkerType: "agent", Session: worker,
		Action: action, Key: key, Fence: fence, Store: "file"}
	if ttl != 0 {
		exp := t.Add(ttl)
		ev.ExpiresAt = &exp
	}
	return ev
}

// oldHistory is n events of other workers' hour-long locks on other
// files, ten seconds apart, from ten days before the commits.
func oldHistory(n int) []journal.Event {
	evs := make([]journal.Event, n)
	for i := range evs {
		evs[i] = lockEv(journal.ActionAcquire, "other", fmt.Sprintf("src/old/%d.go", i), uint64(i+1),
			commitDay.Add(-240*time.Hour+time.Duration(i)*10*time.Second), time.Hour)
	}
	return evs
}

// Verify of the last five commits reads about as many events of the lock
// log with 1,000 or 4,000 older events (in the journal and on the
// workflow branch: 4 and 16 blocks of the events cache) as with 10:
// those older than the commits, whose locks had expired, are not read,
// and the journal is read from where its events stop being on the
// branch.
func TestVerifyReadsTheLogOfItsRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reads := map[int]int{}
	for _, n := range []int{10, 1000, 4000} {
		_, e := verifyRepo(t)
		record(t, e, oldHistory(n))
		record(t, e, []journal.Event{lockEv(journal.ActionAcquire, "me", "src/a.go", 1, commitDay.Add(-10*time.Minute), time.Hour)})
		rep, err := e.Verify(ctx, VerifyRequest{Range: "init..HEAD"})
		if err != nil || !rep.OK || rep.Commits != 5 || len(rep.Undecided) > 0 {
			t.Fatalf("%d: verify = %+v, %v", n, rep, err)
		}
		// The first read wrote the cache; a lock event since is on the
		// branch too.
		record(t, e, []journal.Event{lockEv(journal.ActionRelease, "me", "src/a.go", 1, commitDay.Add(30*time.Minute), 0)})
		// One not on the branch yet (its commit failed).
		if err := e.JournalFile().Append(lockEv(journal.ActionAcquire, "me", "src/b.go", 2, commitDay.Add(40*time.Minute), time.Hour)); err != nil {
			t.Fatal(err)
		}
		lr, err := e.readLockLogSince(ctx, e.judgedSince(ctx, []string{"init..HEAD"}))
		if err != nil {
			t.Fatal(err)
		}
		if got := lr.events[len(lr.events)-1]; got.Key != "src/b.go" {
			t.Fatalf("%d: the journal's event not on the branch was not read: last %+v", n, got)
		}
		reads[n] = lr.read
	}
	t.Logf("events read: %v", reads)
	for _, n := range []int{1000, 4000} {
		if reads[n] > reads[10]+256 {
			t.Fatalf("events read by verify of 5 commits: %v: the older history was read", reads)
		}
	}
}

// A lock taken three days before the commits and renewed every half hour
// since counts for them: the log is read back to its take, though the
// take's own expiry is long past.
func TestVerifyReadsALongHeldLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, holder := range []string{"me", "other"} {
		t.Run(holder, func(t *testing.T) {
			_, e := verifyRepo(t)
			take := lockEv(journal.ActionAcquire, holder, "src/a.go", 7, commitDay.Add(-72*time.Hour), time.Hour)
			evs := append(oldHistory(600), take)
			for at := take.Timestamp.Add(30 * time.Minute); at.Before(commitDay.Add(time.Hour)); at = at.Add(30 * time.Minute) {
				evs = append(evs, lockEv(journal.ActionRefresh, holder, "src/a.go", 7, at, time.Hour))
				for i := range 10 { // others' locks between
					evs = append(evs, lockEv(journal.ActionAcquire, "another", fmt.Sprintf("src/b/%d.go", i), 1, at.Add(time.Duration(i)*time.Second), time.Minute))
				}
			}
			seedBranch(t, e, evs)
			for round := range 2 { // without, then with the cache
				rep, err := e.Verify(ctx, VerifyRequest{Range: "init..HEAD"})
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Undecided) > 0 || rep.OK != (holder == "me") || holder == "other" && len(rep.Violations) != 10 {
					t.Fatalf("round %d: verify = %+v", round, rep)
				}
				lr, err := e.readLockLogSince(ctx, e.judgedSince(ctx, []string{"init..HEAD"}))
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, ev := range lr.events {
					found = found || ev.ID == take.ID
				}
				if !found {
					t.Fatalf("round %d: the take of the lock was not read (%d events read)", round, lr.read)
				}
			}
		})
	}
}

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
	clock := &lockClock{t: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
	e, err := Load(ctx, Options{Dir: r.Dir, As: "me", WorkerType: "agent", Session: "me", Clock: clock.now, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.Open(ctx, Purpose{TakesLocks: true}); err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	for range rounds {
		if _, err := e.AcquireLocks(ctx, AcquireRequest{Keys: []string{"src/a.go"}}); err != nil {
			t.Fatal(err)
		}
		clock.add(time.Minute)
		if _, err := e.ReleaseLocks(ctx, ReleaseRequest{Keys: []string{"src/a.go"}}); err != nil {
			t.Fatal(err)
		}
		clock.add(time.Minute)
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

// A clone with no events cache (a fresh CI clone) judges the commits by
// every lock held then, whatever the file names of their events say: an
// event's id carries the time it was planned, not when its grant began
// (an acquire that waited hours) nor until when it holds (a human's
// eight-hour lock taken hours before, never renewed).
func TestVerifyWithoutCacheReadsLocksTheirNamesDoNotDate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	idAt := func(at time.Time, n int) string { return fmt.Sprintf("%016x%016x", at.UnixNano(), n) }
	for _, tc := range []struct {
		name         string
		planned, got time.Time
		ttl          time.Duration
	}{
		{"long ttl", commitDay.Add(-4 * time.Hour), commitDay.Add(-4 * time.Hour), 8 * time.Hour},
		{"waited", commitDay.Add(-3 * time.Hour), commitDay.Add(-30 * time.Minute), time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e := verifyRepo(t)
			evs := oldHistory(600)
			for i := range evs {
				evs[i].ID = idAt(evs[i].Timestamp, i)
			}
			// Others' short locks on other files after the take was
			// planned and before the commits.
			for i := range 10 {
				at := commitDay.Add(-2*time.Hour + time.Duration(i)*5*time.Minute)
				ev := lockEv(journal.ActionAcquire, "another", fmt.Sprintf("src/c/%d.go", i), 1, at, time.Minute)
				ev.ID = idAt(at, len(evs))
				evs = append(evs, ev)
			}
			take := lockEv(journal.ActionAcquire, "other", "src/a.go", 7, tc.got, tc.ttl)
			take.ID = idAt(tc.planned, len(evs))
			seedBranch(t, e, append(evs, take))
			if err := os.RemoveAll(filepath.Join(e.CommonDir(), "lockgate", "cache")); err != nil {
				t.Fatal(err)
			}
			rep, err := e.Verify(ctx, VerifyRequest{Range: "init..HEAD"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || len(rep.Undecided) > 0 || len(rep.Violations) != 10 {
				t.Fatalf("verify under another's lock = %+v", rep)
			}
		})
	}
}
