package workflow

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// TestCatchUpLeavesOthersEvents: a writer told whom its signature vouches
// for (workflow.signed: required) commits only those workers' events of
// the journal, which the worktrees of a clone share; another worker's
// event waits in the journal, and CatchUp's mark stays before it until
// its own worker's writer commits it.
func TestCatchUpLeavesOthersEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := repoOf(newRepo(t))
	writer := func(me string) *Writer {
		w, err := Open(Config{GitDir: repo.GitDir, CommonDir: repo.CommonDir, WorkTree: repo.Toplevel,
			Vouches: func(worker string) bool { return worker == me }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		return w
	}
	alice, bob := writer("alice"), writer("bob")
	j := journal.Open(filepath.Join(repo.CommonDir, "lockgate", "events.jsonl"))
	a, b := events("alice", 2), events("bob", 2)
	// alice's first event is in the journal and not on the branch (its
	// commit failed); bob records his.
	if err := j.Append(a[0], b[0]); err != nil {
		t.Fatal(err)
	}
	if n, err := bob.CatchUp(ctx, j); err != nil || n != 1 {
		t.Fatalf("bob's CatchUp = %d, %v; want his 1 event", n, err)
	}
	equalIDs(t, "branch after bob's CatchUp", branchIDs(t, bob), idsOf(b[:1]))
	if got := readMark(bob.syncedFile(j.Path())).off; got != 0 {
		t.Fatalf("bob's CatchUp moved the mark to %d, past alice's event not on the branch", got)
	}
	res, err := bob.Sync(ctx, j)
	if err != nil || res.Committed != 0 || res.Others != 1 {
		t.Fatalf("bob's Sync = %+v, %v; want nothing committed, alice's 1 event left", res, err)
	}
	// alice's next command commits hers; the mark then passes both.
	if err := j.Append(a[1]); err != nil {
		t.Fatal(err)
	}
	if n, err := alice.CatchUp(ctx, j); err != nil || n != 2 {
		t.Fatalf("alice's CatchUp = %d, %v; want her 2 events", n, err)
	}
	equalIDs(t, "branch after alice's CatchUp", branchIDs(t, alice), idsOf([]journal.Event{a[0], a[1], b[0]}))
	fi, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := readMark(alice.syncedFile(j.Path())).off; got != fi.Size() {
		t.Fatalf("mark at %d after every event is on the branch, want the journal's size %d", got, fi.Size())
	}
	// bob's event, on the branch, does not hold alice's mark back.
	if err := j.Append(b[1]); err != nil {
		t.Fatal(err)
	}
	if n, err := bob.CatchUp(ctx, j); err != nil || n != 1 {
		t.Fatalf("bob's CatchUp = %d, %v; want his 1 new event", n, err)
	}
	if _, err := alice.CatchUp(ctx, j); err != nil {
		t.Fatal(err)
	}
	if fi, err = os.Stat(j.Path()); err != nil {
		t.Fatal(err)
	}
	if got := readMark(alice.syncedFile(j.Path())).off; got != fi.Size() {
		t.Fatalf("mark at %d, want the journal's size %d: bob's event is on the branch", got, fi.Size())
	}
}
