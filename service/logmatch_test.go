package service

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/workflow"
)

// `log --key` and `log --worker` without --since decode the blocks of
// the events cache that may hold the key's or the worker's events, not
// the whole branch, and show what a read of every event shows: with
// 2,000 older events on the branch as with 10, and with events in the
// journal, one of them on the branch too.
func TestLogByKeyOrWorkerReadsItsBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := commitDay.Add(time.Hour)
	for _, n := range []int{10, 2000} {
		_, e := verifyRepo(t)
		old := oldHistory(n)
		mine := []journal.Event{
			lockEv(journal.ActionAcquire, "me", "src/a.go", 1, now.Add(-200*time.Hour), time.Hour),
			lockEv(journal.ActionRelease, "me", "src/a.go", 1, now.Add(-199*time.Hour), 0),
		}
		seedBranch(t, e, append(old, mine...))
		if _, err := e.Log(ctx, LogRequest{}); err != nil { // writes the events cache
			t.Fatal(err)
		}
		recent := []journal.Event{
			lockEv(journal.ActionAcquire, "me", "src/a.go", 2, now.Add(-30*time.Minute), time.Hour),
			lockEv(journal.ActionAcquire, "other", "src/b.go", 3, now.Add(-20*time.Minute), time.Hour),
		}
		if err := e.JournalFile().Append(recent...); err != nil {
			t.Fatal(err)
		}
		seedBranch(t, e, recent[:1])
		for _, req := range []LogRequest{
			{Key: "src/a.go"}, {Worker: "me"}, {Worker: "other"}, {Key: "src/old/7.go"}, {Key: "src/none.go"},
			{Key: "src/a.go", Worker: "me", Action: journal.ActionRelease}, {Worker: "me", Limit: 2},
			{Key: "src/a.go", Until: now.Add(-time.Hour)},
		} {
			all, err := e.Log(ctx, LogRequest{Action: req.Action, Until: req.Until})
			if err != nil {
				t.Fatal(err)
			}
			want := []LogEvent{}
			for _, ev := range all {
				if req.keep(ev) {
					want = append(want, ev)
				}
			}
			if req.Limit > 0 && len(want) > req.Limit {
				want = want[len(want)-req.Limit:]
			}
			got, err := e.Log(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%d: %+v: %d events, want %d as a full read shows", n, req, len(got), len(want))
			}
		}
		// The events of "me", read by key and by worker: the journal's
		// two and the branch's block that holds mine (and the one the
		// new event was added to).
		for _, m := range []LogRequest{{Key: "src/a.go"}, {Worker: "me"}} {
			_, read, err := e.logEvents(ctx, time.Time{}, time.Time{}, workflow.Match{Key: m.Key, Worker: m.Worker})
			if err != nil {
				t.Fatal(err)
			}
			if n > 1000 && read > 2+2*256 {
				t.Fatalf("%d: %+v: %d events decoded, want those of two blocks at most", n, m, read)
			}
		}
	}
}
