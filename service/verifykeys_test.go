package service

import (
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
)

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
			rep, err := e.Verify(ctx, VerifyRequest{Range: "init..HEAD"})
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
