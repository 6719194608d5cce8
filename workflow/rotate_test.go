package workflow

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// CatchUp rotates the journal once it is past Config.RotateJournal and
// all of it is on the branch; an event that is not on the branch keeps
// it from rotating until it is; Sync and CatchUp read across the
// rotation, whatever mark CatchUp left.
func TestCatchUpRotatesTheJournal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	repo := repoOf(r)
	w, err := Open(Config{GitDir: repo.GitDir, CommonDir: repo.CommonDir, WorkTree: repo.Toplevel, RotateJournal: 2 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	j := journal.Open(filepath.Join(repo.CommonDir, "lockgate", "events.jsonl"))
	first := events("a", 20)
	if err := j.Append(first...); err != nil {
		t.Fatal(err)
	}
	if n, err := w.CatchUp(ctx, j); err != nil || n != len(first) {
		t.Fatalf("CatchUp = %d, %v", n, err)
	}
	if _, err := os.Stat(j.PreviousPath()); err != nil {
		t.Fatalf("not rotated: %v", err)
	}
	// An event the branch lacks (its commit failed) keeps the journal
	// whole past the size.
	lost := events("b", 1)
	if err := j.Append(lost...); err != nil {
		t.Fatal(err)
	}
	// The mark CatchUp would leave in the segment as it is now.
	_, _, oldSegment, err := j.ReadFrom(0, "")
	if err != nil || oldSegment == "" {
		t.Fatalf("segment %q, %v", oldSegment, err)
	}
	more := events("c", 20)
	if err := j.Append(more...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx, more); err != nil {
		t.Fatal(err)
	}
	if ok, err := w.rotate(ctx, j); ok || err != nil {
		t.Fatalf("rotated with an event not on the branch: %v, %v", ok, err)
	}
	if evs, err := j.Read(first[0].Timestamp); err != nil || !hasID(evs, lost[0].ID) {
		t.Fatalf("the event not on the branch is not in the journal: %v", err)
	}
	// CatchUp commits it and rotates; a mark of the old segment, written
	// late by another CatchUp, does not hide the new one's events.
	if _, err := w.CatchUp(ctx, j); err != nil {
		t.Fatal(err)
	}
	if ok, _ := w.Has(ctx, lost[0].ID); !ok {
		t.Fatal("CatchUp did not commit the event")
	}
	if _, err := os.Stat(j.Path()); !os.IsNotExist(err) {
		t.Fatalf("not rotated once on the branch: %v", err)
	}
	last := events("d", 5)
	if err := j.Append(last...); err != nil {
		t.Fatal(err)
	}
	// The stale mark's offset as if it were the end of the new segment's
	// second line.
	data, err := os.ReadFile(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	second := bytes.Index(data[bytes.IndexByte(data, '\n')+1:], []byte("\n")) + bytes.IndexByte(data, '\n') + 2
	writeFile(t, w.syncedFile(j.Path()), fmt.Sprintf("%d %s\n", second, oldSegment), 0o644)
	if n, err := w.CatchUp(ctx, j); err != nil || n != len(last) {
		t.Fatalf("CatchUp after the rotation with a stale mark = %d, %v; want %d", n, err, len(last))
	}
	res, err := w.Sync(ctx, j)
	if err != nil || res.Committed != 0 {
		t.Fatalf("Sync = %+v, %v", res, err)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(append(append(append(first, lost...), more...), last...)))
}
