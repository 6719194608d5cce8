package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/service/verify/verifytest"
)

// commitDay is when verifytest's commits are made.
var commitDay = verifytest.CommitDay

var (
	lockEv     = verifytest.LockEv
	oldHistory = verifytest.OldHistory
)

// verifyRepo is verifytest.Repo and the handler of worker me in it.
func verifyRepo(t *testing.T) (*gittest.Repo, Handler) {
	t.Helper()
	r, opts := verifytest.Repo(t)
	s, err := session.Load(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return r, Handler{Workspace: s}
}

func seedBranch(t *testing.T, e Handler, evs []journal.Event) {
	verifytest.SeedBranch(t, e.Workspace, evs)
}

func record(t *testing.T, e Handler, evs []journal.Event) { verifytest.Record(t, e.Workspace, evs) }

// A release whose take the log lacks, of a file no verified commit
// touches, does not make verify read the whole log: the grant cannot
// bear on the commits (history.BuildFor leaves it out). One of a file
// they touch still does, and verify's answer is the same either way.
func TestVerifyAsksAgainOnlyForKeysOfItsCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, key := range []string{"src/other.go", "src/a.go"} {
		t.Run(key, func(t *testing.T) {
			_, e := verifyRepo(t)
			// The release of a grant whose take is in no event read, as
			// after an event was lost (or written with another fence).
			orphan := lockEv(journal.ActionRelease, "other", key, 99, commitDay.Add(30*time.Minute), 0)
			seedBranch(t, e, append(oldHistory(2000),
				lockEv(journal.ActionAcquire, "me", "src/a.go", 1, commitDay.Add(-10*time.Minute), time.Hour), orphan))
			// The events cache is written by the first read.
			rep, err := e.Verify(ctx, Request{Range: "init..HEAD"})
			bears := key == "src/a.go"
			if err != nil || rep.Commits != 5 || len(rep.Violations) > 0 || bears != (len(rep.Undecided) == 5) || !bears && !rep.OK {
				// A grant of src/a.go that may have begun any time
				// before its release leaves each commit undecided.
				t.Fatalf("verify = %+v, %v", rep, err)
			}
			since := e.judgedSince(ctx, []string{"init..HEAD"})
			all, err := e.readLockLogSince(ctx, since)
			if err != nil {
				t.Fatal(err)
			}
			commits := func() (*history.Keys, bool) { return history.KeysFor([]string{"src/a.go"}), true }
			got, err := e.readLockLogFor(ctx, since, commits)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("events read: %d for every key, %d for the commits' keys", all.read, got.read)
			if all.read < 2000 {
				t.Fatalf("for every key %d events read: the orphan release did not make it read the whole log", all.read)
			}
			if bears != (got.read >= 2000) {
				t.Fatalf("for the commits' keys %d events read (the orphan's key bears on them: %v)", got.read, bears)
			}
			// The grants verify builds from either read are the same.
			want, have := history.BuildFor(all.events, []string{"src/a.go"}), history.BuildFor(got.events, []string{"src/a.go"})
			for _, fence := range []uint64{1, 99} {
				if a, b := want.ByFence(key, fence), have.ByFence(key, fence); len(a) != len(b) || len(a) > 0 && *a[0] != *b[0] {
					t.Fatalf("fence %d: grants %v from the whole log, %v from the read for the commits", fence, a, b)
				}
			}
		})
	}
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
		rep, err := e.Verify(ctx, Request{Range: "init..HEAD"})
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
				rep, err := e.Verify(ctx, Request{Range: "init..HEAD"})
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
			rep, err := e.Verify(ctx, Request{Range: "init..HEAD"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || len(rep.Undecided) > 0 || len(rep.Violations) != 10 {
				t.Fatalf("verify under another's lock = %+v", rep)
			}
		})
	}
}
