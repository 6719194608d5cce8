package workflow

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

const (
	mainRef   = "refs/heads/lockgate/workflow"
	remoteRef = "refs/remotes/origin/lockgate/workflow"
)

func readCfg(r *gittest.Repo) Config {
	repo := repoOf(r)
	return Config{GitDir: repo.GitDir, CommonDir: repo.CommonDir, WorkTree: repo.Toplevel}
}

// read runs readEvents and fails the test on an error.
func read(t *testing.T, r *gittest.Repo, refs ...string) ([]journal.Event, []string, readStats) {
	t.Helper()
	var st readStats
	evs, found, err := readEvents(context.Background(), readCfg(r), refs, &st)
	if err != nil {
		t.Fatalf("ReadEvents(%v): %v", refs, err)
	}
	return evs, found, st
}

// coldRead is read with the cache out of the way (and put back).
func coldRead(t *testing.T, r *gittest.Repo, refs ...string) []journal.Event {
	t.Helper()
	dir := filepath.Join(r.Dir, ".git", "lockgate", "cache")
	aside := dir + ".aside"
	if err := os.Rename(dir, aside); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	evs, _, st := read(t, r, refs...)
	if st.cached != 0 {
		t.Fatalf("cold read used a cache: %+v", st)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(aside, dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return evs
}

// sameEvents fails unless got and want are equal, field by field, in
// order.
func sameEvents(t *testing.T, what string, got, want []journal.Event) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		equalIDs(t, what, idsOf(got), idsOf(want))
		for i := range got {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("%s: event %d is\n%#v\nwant\n%#v", what, i, got[i], want[i])
			}
		}
		t.Fatalf("%s: events differ", what)
	}
}

// commitTo commits evs to branch (short name) with a Writer.
func commitTo(t *testing.T, r *gittest.Repo, branch string, evs []journal.Event) {
	t.Helper()
	repo := repoOf(r)
	w, err := Open(Config{GitDir: repo.GitDir, CommonDir: repo.CommonDir, WorkTree: repo.Toplevel, Branch: branch})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Commit(context.Background(), evs); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// importFiles commits files (path → "mode content") as ref's only
// commit, with git fast-import.
func importFiles(t *testing.T, r *gittest.Repo, ref string, files map[string]string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "commit %s\ncommitter t <t@t> 1700000000 +0000\ndata 1\nx\n", ref)
	for path, mc := range files {
		mode, content, _ := strings.Cut(mc, " ")
		fmt.Fprintf(&b, "M %s inline %s\ndata %d\n%s\n", mode, path, len(content), content)
	}
	cmd := exec.Command("git", "fast-import", "--quiet", "--force")
	cmd.Dir, cmd.Env = r.Dir, r.Env
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v: %s", err, out)
	}
}

func line(t *testing.T, ev journal.Event) string {
	t.Helper()
	b, err := encodeEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadEventsUnion(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	shared := events("shared", 3)
	onlyMain := events("main", 4)
	onlySide := events("side", 2)
	commitTo(t, r, "lockgate/workflow", append(append([]journal.Event{}, onlyMain...), shared...))
	// One id, two contents: the first ref's wins.
	twin := onlyMain[0]
	twin.Details = "side's version"
	late := onlyMain[1] // and one with another time
	late.Timestamp = late.Timestamp.Add(time.Hour)
	late.Details = "side's version"
	commitTo(t, r, "side", append(append([]journal.Event{twin, late}, shared...), onlySide...))
	refs := []string{mainRef, remoteRef, "refs/heads/side", "refs/heads/main"}
	evs, found, st := read(t, r, refs...)
	if want := []string{mainRef, "refs/heads/side", "refs/heads/main"}; !reflect.DeepEqual(found, want) {
		t.Fatalf("found %v, want %v (the remote ref does not exist)", found, want)
	}
	if st.full != 2 {
		t.Fatalf("stats %+v, want two full reads", st)
	}
	var want []journal.Event
	for _, group := range [][]journal.Event{onlyMain, shared, onlySide} {
		for _, ev := range group {
			ev, _ := normalize(ev)
			want = append(want, ev)
		}
	}
	equalIDs(t, "union", idsOf(evs), idsOf(want))
	for _, ev := range evs {
		if (ev.ID == twin.ID || ev.ID == late.ID) && ev.Details != "" {
			t.Fatalf("event %s: the side branch's version won over the first ref's", ev.ID)
		}
	}
	for i := 1; i < len(evs); i++ {
		if compareEvents(evs[i-1], evs[i]) >= 0 {
			t.Fatalf("events %d and %d out of order: %v, %v", i-1, i, evs[i-1].Timestamp, evs[i].Timestamp)
		}
	}
	// The same as the Writer reads, branch by branch.
	w := openWriter(t, repoOf(r))
	mine, err := w.Events(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	only, _, _ := read(t, r, mainRef)
	sameEvents(t, "one branch", only, mine)

	// Read again: both from the cache, the same answer.
	again, found2, st := read(t, r, refs...)
	if st.cached != 2 || st.full+st.incremental != 0 {
		t.Fatalf("second read stats %+v, want two cached trees", st)
	}
	if !reflect.DeepEqual(found2, found) {
		t.Fatalf("found %v then %v", found, found2)
	}
	sameEvents(t, "cached union", again, evs)
}

// Refs with the same tree (the branch just pushed): read once, and
// neither cache decoded twice.
func TestReadEventsSameTree(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	commitTo(t, r, "lockgate/workflow", events("a", 4))
	r.Git("update-ref", remoteRef, mainRef)
	evs, _, st := read(t, r, mainRef, remoteRef)
	if st.full != 1 || st.shared != 1 || len(evs) != 4 {
		t.Fatalf("first read: %d events, %+v", len(evs), st)
	}
	for _, ref := range []string{mainRef, remoteRef} {
		if c, ok := readCache(filepath.Join(r.Dir, ".git"), ref); !ok || c.tree != historyKey+r.Git("rev-parse", mainRef) {
			t.Fatalf("cache of %s: %+v, %v", ref, c, ok)
		}
	}
	before := cacheFiles(t, r, mainRef, remoteRef)
	again, _, st := read(t, r, mainRef, remoteRef)
	if st.cached != 1 || st.shared != 1 || st.full+st.incremental != 0 {
		t.Fatalf("second read: %+v", st)
	}
	sameEvents(t, "same tree", again, evs)
	// A cache that was right is not written again.
	for i, fi := range cacheFiles(t, r, mainRef, remoteRef) {
		if !os.SameFile(fi, before[i]) {
			t.Fatalf("cache file %s rewritten by a read it served", fi.Name())
		}
	}
}

func cacheFiles(t *testing.T, r *gittest.Repo, refs ...string) []os.FileInfo {
	t.Helper()
	var fis []os.FileInfo
	for _, ref := range refs {
		fi, err := os.Stat(cacheFile(filepath.Join(r.Dir, ".git"), ref))
		if err != nil {
			t.Fatal(err)
		}
		fis = append(fis, fi)
	}
	return fis
}

// The branch ahead of its remote-tracking ref, then behind it: the
// second ref's tree is read from the first's, never whole.
func TestReadEventsAheadBehind(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	commitTo(t, r, "lockgate/workflow", events("a", 5))
	r.Git("update-ref", remoteRef, mainRef)
	commitTo(t, r, "lockgate/workflow", events("b", 2))
	evs, _, st := read(t, r, mainRef, remoteRef)
	if st.full != 1 || st.subsumed != 1 || len(evs) != 7 {
		t.Fatalf("ahead: %d events, %+v", len(evs), st)
	}
	sameEvents(t, "ahead", evs, coldRead(t, r, mainRef))

	// The remote moves on: 3 more events there, the branch behind.
	was := r.Git("rev-parse", mainRef)
	commitTo(t, r, "lockgate/workflow", events("c", 3))
	r.Git("update-ref", remoteRef, mainRef)
	r.Git("update-ref", mainRef, was)
	evs, _, st = read(t, r, mainRef, remoteRef)
	if st.cached != 1 || st.incremental != 1 || st.full != 0 || len(evs) != 10 {
		t.Fatalf("behind: %d events, %+v", len(evs), st)
	}
	sameEvents(t, "behind", evs, coldRead(t, r, mainRef, remoteRef))
	// Its cache now holds its tree.
	if c, ok := readCache(filepath.Join(r.Dir, ".git"), remoteRef); !ok || c.tree != historyKey+r.Git("rev-parse", remoteRef) {
		t.Fatalf("cache of %s: %+v, %v", remoteRef, c, ok)
	}
}

func TestReadEventsNoRefs(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	evs, found, _ := read(t, r, mainRef, remoteRef)
	if len(evs) != 0 || len(found) != 0 {
		t.Fatalf("ReadEvents of missing refs = %v, %v", evs, found)
	}
	if _, err := os.Lstat(filepath.Join(r.Dir, ".git", "lockgate")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".git/lockgate made by a read of nothing: %v", err)
	}
	for _, bad := range []string{"", "-p", "a\nb"} {
		if _, _, err := ReadEvents(context.Background(), readCfg(r), []string{bad}); err == nil {
			t.Fatalf("ReadEvents(%q) succeeded", bad)
		}
	}
	if _, _, err := ReadEvents(context.Background(), Config{}, []string{mainRef}); err == nil {
		t.Fatal("ReadEvents without a repository succeeded")
	}
}

// A fresh clone: no .git/lockgate, no Writer; the events come from git,
// and a pushed tip (a commit id, not a ref) is read too, never cached.
func TestReadEventsCloneAndTip(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	src := cloneOf(t, remote)
	first := events("w", 5)
	commitTo(t, src, "lockgate/workflow", first)
	src.Git("push", "-q", "origin", "lockgate/workflow")
	c := cloneOf(t, remote)
	c.Git("fetch", "-q", "origin")
	if _, err := os.Lstat(filepath.Join(c.Dir, ".git", "lockgate")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("fresh clone has .git/lockgate: %v", err)
	}
	evs, found, _ := read(t, c, mainRef, remoteRef)
	if !reflect.DeepEqual(found, []string{remoteRef}) || len(evs) != 5 {
		t.Fatalf("clone read %d events from %v", len(evs), found)
	}

	more := events("w2", 2)
	commitTo(t, src, "lockgate/workflow", more)
	tip := src.Git("rev-parse", "lockgate/workflow")
	c.Git("fetch", "-q", src.Dir, "lockgate/workflow") // the objects, no ref
	cacheDir := filepath.Join(c.Dir, ".git", "lockgate", "cache")
	before, _ := os.ReadDir(cacheDir)
	evs, found, st := read(t, c, mainRef, remoteRef, tip)
	if !reflect.DeepEqual(found, []string{remoteRef, tip}) || len(evs) != 7 {
		t.Fatalf("read %d events from %v", len(evs), found)
	}
	if st.incremental != 1 {
		t.Fatalf("the pushed tip was not read on top of the branch: %+v", st)
	}
	after, _ := os.ReadDir(cacheDir)
	if len(after) != len(before) {
		t.Fatalf("a commit id got a cache file: %v then %v", before, after)
	}
	sameEvents(t, "tip", evs, coldRead(t, c, mainRef, remoteRef, tip))
}

func TestReadEventsRefusesNonEvents(t *testing.T) {
	t.Parallel()
	ev := event("w", 1)
	ev, _ = normalize(ev)
	good := "100644 " + line(t, ev)
	path := EventPath(ev.ID)
	l1l2 := filepath.Dir(path)
	tests := []struct {
		name  string
		files map[string]string
		want  string // in the error, beside the ref
	}{
		{"not json", map[string]string{path: "100644 hello\n"}, path},
		{"not an event", map[string]string{path: "100644 {\"id\":\"x\"}\n"}, path},
		{"empty", map[string]string{path: "100644 "}, path},
		{"too large", map[string]string{path: "100644 " + strings.Repeat(" ", journal.MaxLineBytes+2)}, path},
		{"wrong place", map[string]string{"events/00/00/" + ev.ID + ".json": good}, "events/00/00/" + ev.ID + ".json"},
		{"wrong name", map[string]string{l1l2 + "/other.json": good}, l1l2 + "/other.json"},
		{"too shallow", map[string]string{"events/aa/x.json": good}, "events/aa/x.json"},
		{"too deep", map[string]string{l1l2 + "/cc/x.json": good}, l1l2 + "/cc/x.json"},
		{"symlink", map[string]string{path: "120000 ../../x"}, path},
		{"events is a file", map[string]string{"events": good}, "events"},
		{"one bad among good", map[string]string{path: good, "events/00/01/y.json": "100644 nope"}, "events/00/01/y.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			importFiles(t, r, mainRef, tt.files)
			_, _, err := ReadEvents(context.Background(), readCfg(r), []string{mainRef})
			if err == nil || !strings.Contains(err.Error(), mainRef) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadEvents = %v, want an error naming %s and %s", err, mainRef, tt.want)
			}
			// Nor does the incremental path take it: the bad file added
			// to a good, cached branch.
			if tt.name == "events is a file" {
				return
			}
			r2 := newRepo(t)
			commitTo(t, r2, "lockgate/workflow", events("w", 2))
			read(t, r2, mainRef)
			var b strings.Builder
			fmt.Fprintf(&b, "commit %s\ncommitter t <t@t> 1700000000 +0000\ndata 1\nx\nfrom %s^0\n", mainRef, mainRef)
			for p, mc := range tt.files {
				mode, content, _ := strings.Cut(mc, " ")
				fmt.Fprintf(&b, "M %s inline %s\ndata %d\n%s\n", mode, p, len(content), content)
			}
			gitIn(t, r2.Dir, r2.Env, b.String(), "fast-import", "--quiet")
			_, _, err = ReadEvents(context.Background(), readCfg(r2), []string{mainRef})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("incremental ReadEvents = %v, want an error naming %s", err, tt.want)
			}
		})
	}
	t.Run("not a commit", func(t *testing.T) {
		t.Parallel()
		r := newRepo(t)
		blob := gitIn(t, r.Dir, r.Env, "x", "hash-object", "-w", "--stdin")
		r.Git("update-ref", remoteRef, blob)
		if _, _, err := ReadEvents(context.Background(), readCfg(r), []string{remoteRef}); err == nil || !strings.Contains(err.Error(), "not a commit") {
			t.Fatalf("ReadEvents of a ref to a blob = %v", err)
		}
	})
}

// A cache that is damaged, of another version, another ref or garbage
// gives the answer of a cold read.
func TestReadEventsDamagedCache(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	commitTo(t, r, "lockgate/workflow", events("w", 20))
	commitTo(t, r, "side", events("s", 3))
	want := coldRead(t, r, mainRef)
	file := cacheFile(filepath.Join(r.Dir, ".git"), mainRef)
	read(t, r, mainRef, "refs/heads/side")
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	other, err := os.ReadFile(cacheFile(filepath.Join(r.Dir, ".git"), "refs/heads/side"))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte {
		b := append([]byte{}, good...)
		b[i] ^= 0x20
		return b
	}
	// Another version, with a checksum that holds: a later one, and 2,
	// before events carried a commit, whose events read as version 3
	// would have every field after Details shifted.
	version := func(v byte) []byte {
		b := append([]byte{}, good[:len(good)-4]...)
		b[len(cacheMagic)] = v
		return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
	}
	tests := map[string][]byte{
		"version 2":         version(2),
		"version 4":         version(4),
		"truncated":         good[:len(good)/2],
		"empty":             {},
		"flipped in events": flip(len(good) / 2),
		"flipped checksum":  flip(len(good) - 1),
		"garbage":           []byte(strings.Repeat("lgevents\xff", 100)),
		"other version":     version(cacheVersion + 1),
		"other ref":         other,
	}
	for name, data := range tests {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, _, st := read(t, r, mainRef)
		if st.full != 1 {
			t.Fatalf("%s: stats %+v, want a full read", name, st)
		}
		sameEvents(t, name, got, want)
		if b, _ := os.ReadFile(file); !reflect.DeepEqual(b, good) {
			t.Fatalf("%s: the cache was not rewritten", name)
		}
	}
	// A cache file that is a directory, or a symbolic link to a good
	// cache: not read.
	elsewhere := filepath.Join(t.TempDir(), "events.bin")
	if err := os.WriteFile(elsewhere, good, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(file)
	if err := os.Symlink(elsewhere, file); err != nil {
		t.Fatal(err)
	}
	got, _, st := read(t, r, mainRef)
	if st.full != 1 {
		t.Fatalf("symlinked cache: stats %+v, want a full read", st)
	}
	sameEvents(t, "symlinked cache", got, want)
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the link was not replaced by a file: %v", err)
	}
}

func TestReadEventsIncremental(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	commitTo(t, r, "lockgate/workflow", events("a", 10))
	if _, _, st := read(t, r, mainRef); st.full != 1 {
		t.Fatalf("first read %+v, want full", st)
	}
	commitTo(t, r, "lockgate/workflow", events("b", 4))
	commitTo(t, r, "lockgate/workflow", events("c", 1))
	got, _, st := read(t, r, mainRef)
	if st.incremental != 1 || st.full != 0 {
		t.Fatalf("read after adding events: %+v, want incremental", st)
	}
	if len(got) != 15 {
		t.Fatalf("read %d events, want 15", len(got))
	}
	sameEvents(t, "incremental", got, coldRead(t, r, mainRef))
	before := cacheFiles(t, r, mainRef)
	if _, _, st := read(t, r, mainRef); st.cached != 1 {
		t.Fatalf("read after the incremental one: %+v, want cached", st)
	}
	if !os.SameFile(before[0], cacheFiles(t, r, mainRef)[0]) {
		t.Fatal("the cache was rewritten by a read it served")
	}
}

// A commit that deletes or changes an event file of an earlier commit:
// the branch's events are those of its whole history, so a deleted
// event stays on it, read from the commits since the cache as any other
// commit is, and a changed one is still one event of that id.
func TestReadEventsRewrittenBranch(t *testing.T) {
	t.Parallel()
	for _, change := range []string{"D", "M"} {
		t.Run(change, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			evs := events("a", 6)
			commitTo(t, r, "lockgate/workflow", evs)
			read(t, r, mainRef)
			gone, _ := normalize(evs[2])
			var b strings.Builder
			fmt.Fprintf(&b, "commit %s\ncommitter t <t@t> 1700000000 +0000\ndata 1\nx\nfrom %s^0\n", mainRef, mainRef)
			if change == "D" {
				fmt.Fprintf(&b, "D %s\n", EventPath(gone.ID))
			} else {
				gone.Details = "changed"
				l := line(t, gone)
				fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", EventPath(gone.ID), len(l), l)
			}
			added, _ := normalize(event("b", 9))
			l := line(t, added)
			fmt.Fprintf(&b, "M 100644 inline %s\ndata %d\n%s\n", EventPath(added.ID), len(l), l)
			gitIn(t, r.Dir, r.Env, b.String(), "fast-import", "--quiet")
			got, _, st := read(t, r, mainRef)
			if st.full != 0 || st.incremental != 1 {
				t.Fatalf("stats %+v, want the new commit read on the cache", st)
			}
			cold := coldRead(t, r, mainRef)
			if len(got) != 7 || len(cold) != 7 {
				t.Fatalf("%d events (cold: %d), want the 6 and the new one", len(got), len(cold))
			}
			for i := range got {
				if got[i].ID != cold[i].ID {
					t.Fatalf("event %d: %s, cold read %s", i, got[i].ID, cold[i].ID)
				}
			}
			byID := map[string]journal.Event{}
			for _, ev := range got {
				byID[ev.ID] = ev
			}
			if _, ok := byID[gone.ID]; !ok {
				t.Fatalf("event %s gone after %s", gone.ID, change)
			}
			if _, ok := byID[added.ID]; !ok {
				t.Fatal("the new event not read")
			}
		})
	}
}

func TestReadEventsCancelled(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	commitTo(t, r, "lockgate/workflow", events("a", 3))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := ReadEvents(ctx, readCfg(r), []string{mainRef}); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadEvents with a cancelled context = %v", err)
	}
}

// fullEvent has every field of journal.Event set, whatever they are.
func fullEvent(t testing.TB, seed int) journal.Event {
	t.Helper()
	var ev journal.Event
	v := reflect.ValueOf(&ev).Elem()
	ts := time.Date(2026, 2, 3, 4, 5, 6, seed, time.FixedZone("", 3600*(seed%5)))
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString(fmt.Sprintf("%s-%d-é\x00", v.Type().Field(i).Name, seed))
		case time.Time:
			f.Set(reflect.ValueOf(ts))
		case *time.Time:
			e := ts.Add(time.Minute).UTC()
			f.Set(reflect.ValueOf(&e))
		case uint64:
			f.SetUint(1<<63 + uint64(seed))
		default:
			t.Fatalf("journal.Event.%s: a %s, which the cache test does not know", v.Type().Field(i).Name, f.Type())
		}
	}
	return ev
}

// The cache codec knows every field of journal.Event: a field added to
// Event must be added to it (until then, the cache is not used).
func TestCacheCodec(t *testing.T) {
	t.Parallel()
	if got := eventFields(false); got != codecFields {
		t.Fatalf("journal.Event is now\n%s\nthe cache codec knows\n%s", got, codecFields)
	}
	evs := []journal.Event{fullEvent(t, 1), fullEvent(t, 2), {ID: "min", Timestamp: time.Unix(0, 0).UTC(), Action: "a"}}
	data, err := encodeCache(mainRef, "0123abcd", evs)
	if err != nil {
		t.Fatal(err)
	}
	ref, tree, got, err := decodeCache(data)
	if err != nil || ref != mainRef || tree != "0123abcd" {
		t.Fatalf("decodeCache = %q, %q, %v", ref, tree, err)
	}
	// Compared as journal lines: the offsets of the times, not their
	// *time.Location, which is time.Local when the offset is local's.
	for i := range evs {
		if g, w := line(t, got[i]), line(t, evs[i]); g != w {
			t.Fatalf("event %d decoded as\n%s\nwant\n%s", i, g, w)
		}
	}
	// A time whose nanoseconds are out of range, which UnmarshalBinary
	// would take, is refused.
	bad := badNanos(t)
	if _, _, _, err := decodeCache(bad); err == nil {
		t.Fatal("decodeCache took a time of -1 ns")
	}
	// Every prefix fails cleanly.
	for n := range len(data) {
		if _, _, _, err := decodeCache(data[:n]); err == nil {
			t.Fatalf("decodeCache of %d of %d bytes succeeded", n, len(data))
		}
	}
}

// badNanos is a cache file, checksums and all, of one event whose
// timestamp has -1 for nanoseconds.
func badNanos(t testing.TB) []byte {
	t.Helper()
	at := time.Unix(1, 2).UTC()
	data, err := encodeCache(mainRef, "tree", []journal.Event{{ID: "x", Timestamp: at, Action: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := at.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// The block's head holds its first time, the event's: version, 8
	// bytes of seconds, then the nanoseconds.
	heads, crc := cacheHeads(t, data)
	i := bytes.Index(heads, tb)
	if i < 0 {
		t.Fatal("the block's first time is not in the heads")
	}
	binary.BigEndian.PutUint32(heads[i+9:], 0xffffffff)
	binary.BigEndian.PutUint32(crc, crc32.Checksum(heads, castagnoli()))
	return data
}

// cacheHeads returns the heads of a cache file and its 4 checksum bytes,
// as slices of data.
func cacheHeads(t testing.TB, data []byte) (heads, crc []byte) {
	t.Helper()
	start := len(cacheMagic) + 1 // the version takes a byte
	n, k := binary.Uvarint(data[start:])
	start += k
	if k <= 0 || uint64(len(data)-start) < n+4 {
		t.Fatalf("not a cache file: %q", data)
	}
	end := start + int(n)
	return data[start:end], data[end : end+4]
}

// resign makes the checksums of data hold, as far as its heads can be
// read: each block's over the bytes where its head puts it, then the
// heads'. The fuzzer then reaches the decoder behind them.
func resign(data []byte) []byte {
	if len(data) < len(cacheMagic)+1 || string(data[:len(cacheMagic)]) != cacheMagic {
		return data
	}
	start := len(cacheMagic) + 1
	n, k := binary.Uvarint(data[start:])
	if k <= 0 || n > uint64(len(data)) || uint64(len(data)-start-k) < n+4 {
		return data
	}
	start += k
	end := start + int(n)
	heads := data[start:end]
	d := decoder{s: string(heads)}
	d.string()
	d.string()
	d.string()
	d.uvarint()
	nb := d.uvarint()
	off := end + 4
	for i := uint64(0); i < nb && d.err == nil; i++ {
		d.uvarint()
		d.time()
		if d.byte1() == 0 {
			d.time()
		}
		d.byte1()
		d.string()
		d.uvarint()
		packed := d.uvarint()
		at := len(heads) - len(d.s)
		d.fixed32()
		if d.err != nil || packed > uint64(len(data)-off) {
			break
		}
		binary.BigEndian.PutUint32(heads[at:], crc32.Checksum(data[off:off+int(packed)], castagnoli()))
		off += int(packed)
	}
	binary.BigEndian.PutUint32(data[end:], crc32.Checksum(heads, castagnoli()))
	return data
}

// FuzzDecodeCache: a cache file is read from disk, where anything may
// be: decoding never panics, and what decodes encodes back the same.
func FuzzDecodeCache(f *testing.F) {
	evs := []journal.Event{fullEvent(f, 1), {ID: "x", Timestamp: time.Unix(1, 2).UTC(), Action: "a"}}
	good, err := encodeCache(mainRef, "tree", evs)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-5])
	// Two blocks, with filters of many names.
	if two, err := encodeCache(mainRef, "tree", matchHistory(time.Unix(1<<31, 0).UTC(), 2)); err == nil {
		f.Add(two)
	} else {
		f.Fatal(err)
	}
	f.Add([]byte(cacheMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _, _ = decodeCache(data)
		// With checksums that hold, so that the decoder itself is
		// exercised, not only the checksums.
		data = resign(bytes.Clone(data))
		// A read of part of the file: the blocks chosen by their heads
		// alone, whatever they say.
		if c, err := parseCache(data); err == nil {
			for _, at := range []time.Time{{}, time.Unix(1, 2), time.Unix(1<<40, 0)} {
				from := c.start(at, true)
				_, _, _ = c.decode(from, max(from, c.end(at)), Match{})
				_, _, _ = c.decode(from, max(from, c.end(at)), Match{Key: "k", Worker: "w"})
			}
		}
		ref, tree, evs, err := decodeCache(data)
		if err != nil {
			return
		}
		again, err := encodeCache(ref, tree, evs)
		if err != nil {
			t.Fatalf("decoded events do not encode: %v", err)
		}
		ref2, tree2, evs2, err := decodeCache(again)
		if err != nil || ref2 != ref || tree2 != tree || len(evs2) != len(evs) {
			t.Fatalf("round trip: %q %q %d %v", ref2, tree2, len(evs2), err)
		}
		for i := range evs {
			if !reflect.DeepEqual(evs[i], evs2[i]) {
				t.Fatalf("event %d: %#v then %#v", i, evs[i], evs2[i])
			}
		}
	})
}

func TestUnion2(t *testing.T) {
	t.Parallel()
	at := func(id string, sec int, details string) journal.Event {
		return journal.Event{ID: id, Timestamp: time.Unix(int64(sec), 0).UTC(), Action: "a", Details: details}
	}
	ids := func(evs []journal.Event) string {
		var b strings.Builder
		for _, ev := range evs {
			fmt.Fprintf(&b, "%s%s ", ev.ID, ev.Details)
		}
		return b.String()
	}
	tests := []struct {
		name string
		a, b []journal.Event
		want string
	}{
		{"b within a", []journal.Event{at("x", 1, ""), at("y", 2, ""), at("z", 3, "")}, []journal.Event{at("y", 2, "")}, "x y z "},
		{"a within b", []journal.Event{at("y", 2, "")}, []journal.Event{at("x", 1, ""), at("y", 2, "b"), at("z", 3, "")}, "x y z "},
		{"disjoint", []journal.Event{at("x", 1, ""), at("z", 3, "")}, []journal.Event{at("y", 2, "")}, "x y z "},
		{"b's version earlier", []journal.Event{at("x", 5, "a"), at("y", 6, "")}, []journal.Event{at("x", 1, "b"), at("w", 2, "")}, "w xa y "},
		{"b's version later", []journal.Event{at("x", 1, "a")}, []journal.Event{at("w", 2, ""), at("x", 9, "b")}, "xa w "},
		{"empty", nil, []journal.Event{at("x", 1, "")}, "x "},
	}
	for _, tt := range tests {
		if got := ids(union2(tt.a, tt.b)); got != tt.want {
			t.Errorf("%s: union2 = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A bare repository (a server's, in pre-receive) and a linked worktree
// read as a clone does; the cache is the common directory's.
func TestReadEventsBareAndWorktree(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	src := cloneOf(t, remote)
	commitTo(t, src, "lockgate/workflow", events("w", 4))
	src.Git("push", "-q", "origin", "lockgate/workflow")
	want := coldRead(t, src, mainRef)

	var st readStats
	got, found, err := readEvents(context.Background(), Config{GitDir: remote}, []string{mainRef}, &st)
	if err != nil || len(found) != 1 {
		t.Fatalf("bare: %v, %v", found, err)
	}
	sameEvents(t, "bare", got, want)
	if _, err := os.Stat(cacheFile(remote, mainRef)); err != nil {
		t.Fatalf("bare: no cache: %v", err)
	}

	wt := filepath.Join(t.TempDir(), "wt")
	src.Git("worktree", "add", "-q", "--detach", wt)
	gitDir := strings.TrimSpace(gitIn(t, wt, src.Env, "", "rev-parse", "--absolute-git-dir"))
	common := filepath.Join(src.Dir, ".git")
	got, _, err = readEvents(context.Background(), Config{GitDir: gitDir, CommonDir: common, WorkTree: wt}, []string{mainRef}, &st)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, "worktree", got, want)
	if _, err := os.Stat(cacheFile(common, mainRef)); err != nil {
		t.Fatalf("worktree: no cache in the common directory: %v", err)
	}
}

// TestReadEventsSaysWhatGitSaid: an event git cannot read (its loose
// object is corrupt) fails the read with git's own message. The message is
// read once git has ended: until then exec's goroutine may still be
// copying it (a race the race detector reports).
func TestReadEventsSaysWhatGitSaid(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ev := event("corrupt", 0)
	commitTo(t, r, "lockgate/workflow", []journal.Event{ev})
	blob := strings.TrimSpace(r.Git("rev-parse", mainRef+":"+EventPath(ev.ID)))
	// Packed, then the blob's compressed data overwritten: git finds the
	// object in the pack's index and dies reading it.
	r.Git("repack", "-adq")
	idx, err := filepath.Glob(filepath.Join(r.Dir, ".git", "objects", "pack", "*.idx"))
	if err != nil || len(idx) != 1 {
		t.Fatalf("one pack index: %v %v", idx, err)
	}
	idxData, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	var off int64 = -1
	for _, line := range strings.Split(gitIn(t, r.Dir, r.Env, string(idxData), "show-index"), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[1] == blob {
			off, _ = strconv.ParseInt(f[0], 10, 64)
		}
	}
	if off < 0 {
		t.Fatalf("%s is not in the pack", blob)
	}
	pack := strings.TrimSuffix(idx[0], ".idx") + ".pack"
	if err := os.Chmod(pack, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(pack, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The header is a few bytes; the zlib stream follows.
	if _, err := f.WriteAt([]byte("\xff\xff\xff\xff\xff\xff\xff\xff"), off+4); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		_, _, err := ReadEvents(context.Background(), readCfg(r), []string{mainRef})
		if err == nil {
			t.Fatal("a corrupt event object was read without an error")
		}
		if !strings.Contains(err.Error(), "git cat-file: ") || !strings.Contains(err.Error(), blob) {
			t.Fatalf("the error does not give git's message naming %s: %v", blob, err)
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// TestCacheReadsTheBlocksItDecodes: a read of the last block of a cache
// reads the heads and that block, not the file (version 6; version 5
// read and checked it whole). A block damaged on disk fails the read that
// decodes it, and only that one.
func TestCacheReadsTheBlocksItDecodes(t *testing.T) {
	t.Parallel()
	data, err := encodeCache(mainRef, "tree", matchHistory(time.Unix(1<<31, 0).UTC(), 40))
	if err != nil {
		t.Fatal(err)
	}
	src := &countingReader{r: bytes.NewReader(data)}
	c, err := parseCacheAt(src, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	last := len(c.blocks) - 1
	evs, n, err := c.decode(last, last+1, Match{})
	if err != nil || n != 1 || len(evs) != c.blocks[last].n {
		t.Fatalf("the last block: %d events, %d blocks, %v", len(evs), n, err)
	}
	heads, _ := cacheHeads(t, data)
	if limit := int64(64<<10 + len(heads) + 4 + c.blocks[last].packed); src.n > limit || src.n >= int64(len(data))/2 {
		t.Fatalf("read %d of the file's %d bytes for one block (heads %d, block %d)", src.n, len(data), len(heads), c.blocks[last].packed)
	}

	// A damaged first block: the last still reads, the first does not.
	bad := bytes.Clone(data)
	bad[c.blocks[0].off+int64(c.blocks[0].packed)/2] ^= 0xff
	c, err = parseCacheAt(bytes.NewReader(bad), int64(len(bad)))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.decode(last, last+1, Match{}); err != nil {
		t.Fatalf("the last block, the first damaged: %v", err)
	}
	if _, _, err := c.decode(0, 1, Match{}); !errors.Is(err, errCache) {
		t.Fatalf("the damaged block: %v, want errCache", err)
	}
	if _, _, _, err := decodeCache(bad); !errors.Is(err, errCache) {
		t.Fatalf("decodeCache of a damaged file: %v", err)
	}
}
