package service_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// TestBoardEventsFromTheLockLog: the board's last events are the lock
// log's, as `lockgate log` reads it: events that reached the workflow
// branch but are not in this clone's journal (another clone's, synced)
// show with the journal's, each once.
func TestBoardEventsFromTheLockLog(t *testing.T) {
	ctx := context.Background()
	r := repoWith(t, map[string]string{".lockgate.yaml": logPolicy})
	e := openAs(t, r.Dir, "alice", nil)
	takeKeys(t, e, "api:GET /a")
	syncBranch(t, e)
	// The journal loses what the branch holds: those events are on the
	// branch alone, as another clone's are once it synced.
	if err := os.Remove(e.JournalFile().Path()); err != nil {
		t.Fatal(err)
	}
	takeKeys(t, e, "api:GET /b")
	syncBranch(t, e) // both on the branch now, /b in the journal too: shown once
	takeKeys(t, e, "api:GET /c")

	v, err := e.Board().Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var acquired []string
	for _, ev := range v.Events {
		if ev.Action == journal.ActionAcquire {
			acquired = append(acquired, ev.Key)
		}
	}
	slices.Sort(acquired) // the test's clock stands still: ties go by event id
	if want := []string{"api:GET /a", "api:GET /b", "api:GET /c"}; !slices.Equal(acquired, want) {
		t.Fatalf("the board's acquisitions %v, want %v (events %+v)", acquired, want, v.Events)
	}
}
