package workflow

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// formatOneBranch writes evs as a branch of format 1 (every event in the
// tip's tree, no format blob), as earlier versions did, in two commits.
func formatOneBranch(t *testing.T, evs []journal.Event) (*gittest.Repo, *Writer, func() []journal.Event) {
	t.Helper()
	r := newRepo(t)
	files := map[string]string{}
	for i, ev := range evs {
		ev, _ = normalize(ev)
		evs[i] = ev
		files[EventPath(ev.ID)] = "100644 " + line(t, ev)
	}
	importFiles(t, r, mainRef, files)
	w := openWriter(t, repoOf(r))
	return r, w, func() []journal.Event { return coldRead(t, r, mainRef) }
}

// TestMigrate: a branch of format 1 is refused by Commit, naming the
// command that moves it; Migrate moves it in place with one commit on
// its tip (no history rewritten), every event still read, and later
// commits hold their segment only: the tip's tree stays small however
// many events follow. The pushed commits pass the server's check.
func TestMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := events("old", 40)
	r, w, cold := formatOneBranch(t, old)
	if o, err := w.OldFormat(ctx); err != nil || !o {
		t.Fatalf("OldFormat of a format-1 branch = %v, %v", o, err)
	}
	if _, err := w.Commit(ctx, events("w", 1)); !errors.Is(err, ErrOldFormat) || !strings.Contains(err.Error(), "lockgate workflow migrate") {
		t.Fatalf("Commit on format 1 = %v, want ErrOldFormat naming the command", err)
	}
	before := strings.TrimSpace(r.Git("rev-parse", mainRef))
	done, err := w.Migrate(ctx)
	if err != nil || done.Base != before || done.Merged != "" {
		t.Fatalf("Migrate = %+v, %v; want the tip %s as base", done, err, before)
	}
	if parent := strings.TrimSpace(r.Git("rev-parse", mainRef+"^")); parent != before {
		t.Fatalf("the migration's parent is %s, want the old tip %s", parent, before)
	}
	if again, err := w.Migrate(ctx); err != nil || again != (Migrated{}) {
		t.Fatalf("Migrate twice = %+v, %v; want nothing to do", again, err)
	}
	if o, err := w.OldFormat(ctx); err != nil || o {
		t.Fatalf("OldFormat after Migrate = %v, %v", o, err)
	}
	equalIDs(t, "after the migration", idsOf(cold()), idsOf(old))

	var later []journal.Event
	for i := range 300 {
		ev := event("new", i)
		later = append(later, ev)
		if _, err := w.Commit(ctx, []journal.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	all := append(append([]journal.Event(nil), old...), later...)
	equalIDs(t, "ReadEvents", idsOf(cold()), idsOf(all))
	equalIDs(t, "Events", branchIDs(t, w), idsOf(all))
	files := strings.Count(r.Git("ls-tree", "-r", "--name-only", mainRef), "\n")
	if files > 2*segmentShards {
		t.Fatalf("the tip's tree holds %d files after 340 events, want a segment (about %d)", files, segmentShards)
	}
	commits := strings.Fields(r.Git("rev-list", mainRef, "^"+before))
	cfg := Config{GitDir: w.repo.GitDir, CommonDir: w.common, WorkTree: w.repo.Toplevel}
	if err := CheckEventCommits(ctx, cfg, []string{before}, commits); err != nil {
		t.Fatalf("CheckEventCommits of the migration and the commits after = %v", err)
	}
	// What each commit adds, as a server checking signatures reads it:
	// the migration adds nothing, each later commit its one event (also
	// those that start a new segment).
	added, err := AddedEvents(ctx, r.Dir, commits)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range commits {
		want := 1
		if r.Git("rev-parse", c+"^") == before {
			want = 0 // the migration
		}
		if len(added[c]) != want {
			t.Fatalf("commit %s adds %d events, want %d", c, len(added[c]), want)
		}
		n += len(added[c])
	}
	if n != len(later) {
		t.Fatalf("the commits add %d events in all, want %d (the migration none)", n, len(later))
	}
}

// TestMigrationMustKeepEvents: a commit that moves a branch to format 2
// but leaves out an event of its format-1 parent, names a base that is
// not its parent, or puts anything beside events/, is refused by the
// server's check.
func TestMigrationMustKeepEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	old := events("old", 3)
	r, w, _ := formatOneBranch(t, old)
	tip := strings.TrimSpace(r.Git("rev-parse", mainRef))
	cfg := Config{GitDir: w.repo.GitDir, CommonDir: w.common, WorkTree: w.repo.Toplevel}
	for name, tc := range map[string]struct {
		del    []string
		format string
		want   string
	}{
		"drops an event":       {[]string{EventPath(old[1].ID)}, branchFormat{version: formatVersion}.withBases(tip).encode2(), "deletes " + EventPath(old[1].ID)},
		"names another base":   {nil, branchFormat{version: formatVersion}.withBases(tip, strings.Repeat("e", 40)).encode2(), "not one of its parents' bases"},
		"bad format":           {nil, "lockgate workflow\nformat 9\n", "format 9"},
		"format beside events": {nil, "", "more than events/"},
	} {
		r.Git("update-ref", "refs/heads/pushed", tip)
		put := map[string]string{eventsDir + "/" + formatFile: tc.format}
		if tc.format == "" {
			put = map[string]string{formatFile: branchFormat{version: formatVersion}.withBases(tip).encode2(), eventsDir + "/" + formatFile: branchFormat{version: formatVersion}.withBases(tip).encode2()}
		}
		c := commitOnTop(t, r, "refs/heads/pushed", "migrate\n", "", tc.del, put)
		err := CheckEventCommits(ctx, cfg, []string{tip}, []string{c})
		var ne *NotEventsError
		if !errors.As(err, &ne) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckEventCommits = %v, want a *NotEventsError naming %q", name, err, tc.want)
		}
	}
}

func (f branchFormat) encode2() string { return string(f.encode()) }

// TestReadEventsShallow: a clone that fetched only the last commits of
// the branch (--depth) has only some of its events: reading them is an
// error naming the fix, never a log that lacks a lock.
func TestReadEventsShallow(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	for i := range 3 {
		commitTo(t, r, "lockgate/workflow", []journal.Event{event("w", i)})
	}
	shallow := filepath.Join(t.TempDir(), "shallow")
	r.Git("clone", "-q", "--depth", "1", "--branch", "lockgate/workflow", "file://"+r.Dir, shallow)
	cfg := Config{GitDir: filepath.Join(shallow, ".git"), CommonDir: filepath.Join(shallow, ".git"), WorkTree: shallow}
	_, _, err := ReadEvents(context.Background(), cfg, []string{"refs/remotes/origin/lockgate/workflow"})
	if !errors.Is(err, errShallow) || !strings.Contains(err.Error(), "--unshallow") {
		t.Fatalf("ReadEvents of a shallow history = %v, want errShallow naming the fetch", err)
	}
}
