package hooks

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
)

// TestStagedRecord: commit-msg uses pre-commit's record only for the same
// index, unchanged, the same committer and locks still live.
func TestStagedRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	index := filepath.Join(dir, "index")
	if err := os.WriteFile(index, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	me := locks.Owner{Holder: "alice", HolderType: "human", Session: "s"}
	runner := func(who locks.Owner, at time.Time) *Runner {
		return &Runner{GitDir: dir, IndexFile: index, Trailers: true, Checker: &Checker{Me: who, Now: at}}
	}
	held := []heldLock{{Key: "a.txt", Fence: 3, ExpiresAt: now.Add(time.Hour)}}
	runner(me, now).recordStaged(&Report{OK: true, locksRead: true, held: held})

	if got, ok := runner(me, now).recordedHeld(); !ok || !slices.EqualFunc(got, held, func(a, b heldLock) bool { return a.Key == b.Key && a.Fence == b.Fence }) {
		t.Fatalf("recordedHeld = %v, %v; want %v", got, ok, held)
	}
	if _, ok := runner(locks.Owner{Holder: "bob", Session: "s"}, now).recordedHeld(); ok {
		t.Error("another committer used the record")
	}
	if _, ok := runner(me, now.Add(2*time.Hour)).recordedHeld(); ok {
		t.Error("a record with an expired lock was used")
	}
	if _, ok := runner(me, now.Add(recordMaxAge+time.Second)).recordedHeld(); ok {
		t.Error("a record older than recordMaxAge was used (a lock may have been released while the message was edited)")
	}
	if _, ok := runner(me, now.Add(-time.Second)).recordedHeld(); ok {
		t.Error("a record written in the future was used")
	}
	other := runner(me, now)
	other.IndexFile = filepath.Join(dir, "index.lock")
	if err := os.WriteFile(other.IndexFile, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := other.recordedHeld(); ok {
		t.Error("the record of another index file was used")
	}
	if err := os.WriteFile(index, []byte("two!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := runner(me, now).recordedHeld(); ok {
		t.Error("the record of a changed index was used")
	}
	// A check that did not read the locks leaves no record behind.
	runner(me, now).recordStaged(&Report{OK: true})
	if _, err := os.Stat(stagedRecordFile(dir)); !os.IsNotExist(err) {
		t.Errorf("record kept after a check without locks: %v", err)
	}
}

// BenchmarkTrailersFromRecord is what the trailers add to commit-msg when
// pre-commit left its record: read the record, build the trailers, rewrite
// the message file.
func BenchmarkTrailersFromRecord(b *testing.B) {
	dir := b.TempDir()
	index := filepath.Join(dir, "index")
	if err := os.WriteFile(index, make([]byte, 1<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	me := locks.Owner{Holder: "alice", HolderType: "human", Session: "s"}
	h := &Runner{GitDir: dir, IndexFile: index, Trailers: true, Checker: &Checker{Me: me, Now: now}}
	held := []heldLock{{Key: "a.txt", Fence: 3, ExpiresAt: now.Add(time.Hour)}, {Key: "src/api/**", Fence: 42, ExpiresAt: now.Add(time.Hour)}}
	h.recordStaged(&Report{OK: true, locksRead: true, held: held})
	msg := filepath.Join(dir, "COMMIT_EDITMSG")
	orig := []byte("Change the API\n\nLonger text.\n\nSigned-off-by: B <b@example.com>\n# Please enter the commit message\n#\n")
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if err := os.WriteFile(msg, orig, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		got, ok := h.recordedHeld()
		if !ok {
			b.Fatal("record not used")
		}
		data, err := readCommitMsg(msg)
		if err != nil {
			b.Fatal(err)
		}
		lines, err := Trailers(me, got)
		if err != nil {
			b.Fatal(err)
		}
		if err := replaceFile(msg, []byte(WithTrailers(string(data), lines, "#"))); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRecordTornOrForeign(t *testing.T) {
	t.Parallel()
	rec := stagedRecord{Index: "/r/.git/index", Size: 10, ModNano: 20, Holder: "a", Session: "s", Written: time.Unix(0, 25),
		Locks: []heldLock{{Key: "k 1", Fence: 2, ExpiresAt: time.Unix(0, 30)}, {Key: "src/**", Fence: 4, ExpiresAt: time.Unix(0, 50)}}}
	data := rec.marshal()
	got, ok := unmarshalRecord(data)
	if !ok || got.Index != rec.Index || !got.Written.Equal(rec.Written) || len(got.Locks) != 2 || got.Locks[1] != rec.Locks[1] {
		t.Fatalf("round trip: %+v, %v", got, ok)
	}
	for n := range len(data) {
		if _, ok := unmarshalRecord(data[:n]); ok {
			t.Errorf("a record torn at byte %d of %d was read", n, len(data))
		}
	}
	for _, bad := range []string{"", "{}", "lockgate-staged-locks-1\x00i\x001\x002\x00a\x00s\x003\x00-1\x00end"} {
		if _, ok := unmarshalRecord([]byte(bad)); ok {
			t.Errorf("unmarshalRecord(%q) read", bad)
		}
	}
}

// FuzzUnmarshalRecord: any bytes in the record file are read or refused,
// never a panic; what is read writes back the same.
func FuzzUnmarshalRecord(f *testing.F) {
	f.Add(stagedRecord{Index: "/i", Size: 1, ModNano: 2, Holder: "a", Session: "s",
		Locks: []heldLock{{Key: "k", Fence: 3, ExpiresAt: time.Unix(0, 4)}}}.marshal())
	f.Add([]byte("lockgate-staged-locks-1\x00i\x001\x002\x00a\x00s\x003\x000\x00end"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, ok := unmarshalRecord(data)
		if !ok {
			return
		}
		if again, ok := unmarshalRecord(rec.marshal()); !ok || len(again.Locks) != len(rec.Locks) {
			t.Fatalf("%q: read, but its re-marshalling is not", data)
		}
	})
}

// BenchmarkRecordStaged is what the record adds to pre-commit.
func BenchmarkRecordStaged(b *testing.B) {
	dir := b.TempDir()
	index := filepath.Join(dir, "index")
	if err := os.WriteFile(index, make([]byte, 1<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	h := &Runner{GitDir: dir, IndexFile: index, Trailers: true, Checker: &Checker{Me: locks.Owner{Holder: "a", Session: "s"}, Now: now}}
	r := &Report{OK: true, locksRead: true, held: []heldLock{{Key: "a.txt", Fence: 3, ExpiresAt: now}, {Key: "src/api/**", Fence: 42, ExpiresAt: now}}}
	for range b.N {
		h.recordStaged(r)
	}
}
