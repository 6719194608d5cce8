package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locks.Store {
		s, err := Open(filepath.Join(t.TempDir(), "lockgate", "locks"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// Two stores on one directory stand for two processes: each has its own
// guard descriptors, so only flock keeps them apart.
func TestConformanceTwoHandles(t *testing.T) {
	dir := t.TempDir()
	a := openStore(t, dir)
	b := openStore(t, dir)
	ctx := context.Background()
	now := time.Now()
	rec := locktest.NewLock("src/a.go", "alice", now, time.Hour)
	if _, _, err := a.Acquire(ctx, rec, now); err != nil {
		t.Fatal(err)
	}
	var held *locks.HeldError
	if _, _, err := b.Acquire(ctx, locktest.NewLock("src/a.go", "bob", now, time.Hour), now); !errors.As(err, &held) {
		t.Fatalf("second handle: %v; want *HeldError", err)
	}
	if err := b.Release(ctx, rec.Key, rec.Token); err != nil {
		t.Fatalf("release through the other handle: %v", err)
	}
}

func TestLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	now := time.Now()
	for _, d := range []string{"patterns", "keys", ".tmp", ".guard"} {
		if fi, err := os.Stat(filepath.Join(dir, d)); err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v", d, err)
		}
	}
	keys := map[string]string{
		"src/a.go":   filepath.Join(dir, "src%2Fa.go.lock"),
		"task:ABC":   filepath.Join(dir, "keys", "task%3A%41%42%43.lock"),
		"workflow":   filepath.Join(dir, "keys", "workflow.lock"),
		"../../etc":  filepath.Join(dir, "%2E.%2F..%2Fetc.lock"),
		"src/api/**": filepath.Join(dir, "patterns", "src%2Fapi%2F%2A%2A.lock"),
	}
	for key, want := range keys {
		if got := s.Where(key); got != want {
			t.Errorf("Where(%q) = %q, want %q", key, got, want)
		}
		if _, _, err := s.Acquire(ctx, locktest.NewLock(key, "alice", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(want); err != nil {
			t.Errorf("record of %q: %v", key, err)
		}
	}
	// Nothing escaped the store directory.
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "etc.lock")); err == nil {
		t.Fatal("a key escaped the store directory")
	}
	tmp, _ := os.ReadDir(filepath.Join(dir, ".tmp"))
	if len(tmp) != 0 {
		t.Errorf("temp files left behind: %v", tmp)
	}
}

func TestCorrupt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now()
	good := locktest.NewLock("src/good.go", "alice", now, time.Hour)
	other := locktest.NewLock("src/other.go", "alice", now, time.Hour)
	otherJSON := `{"key":"src/other.go","holder":"x","expires_at":"2099-01-01T00:00:00Z","token":"t"}`
	tests := []struct {
		name, content string
	}{
		{"empty", ""},
		{"blank", " \n"},
		{"garbage", "\x00\x01 not json"},
		{"truncated", `{"key":"src/x.go","holder":"alice","expires_at":"2099-01-01T00:00:00Z","tok`},
		{"trailing garbage", `{"key":"src/x.go","expires_at":"2099-01-01T00:00:00Z"} {}`},
		{"no expiry", `{"key":"src/x.go","holder":"alice","token":"t"}`},
		{"wrong key", otherJSON},
		{"array", `[1,2,3]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := openStore(t, dir)
			if _, _, err := s.Acquire(ctx, good, now); err != nil {
				t.Fatal(err)
			}
			key := "src/x.go"
			path := s.Where(key)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			var corrupt *locks.CorruptError
			if _, err := s.Get(ctx, key); !errors.As(err, &corrupt) || corrupt.Path != path || corrupt.Key != key {
				t.Fatalf("Get: %v; want *CorruptError for %s", err, path)
			}
			entries, err := s.List(ctx)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if len(entries) != 2 || entries[0].Err != nil || entries[1].Key != key || !errors.As(entries[1].Err, &corrupt) {
				t.Fatalf("List = %+v; want the good record and a corrupt %s", entries, key)
			}
			ov, err := s.Overlapping(ctx, key)
			if err != nil || len(ov) != 1 || !errors.As(ov[0].Err, &corrupt) {
				t.Fatalf("Overlapping = %+v, %v; want the corrupt record", ov, err)
			}
			// Never free: not for a taker, not even after any expiry.
			later := now.Add(1000 * time.Hour)
			if _, _, err := s.Acquire(ctx, locktest.NewLock(key, "bob", later, time.Hour), later); !errors.As(err, &corrupt) {
				t.Fatalf("Acquire over a corrupt record: %v; want *CorruptError", err)
			}
			if err := s.Release(ctx, key, "t"); !errors.As(err, &corrupt) {
				t.Fatalf("Release of a corrupt record: %v; want *CorruptError", err)
			}
			if _, err := s.Update(ctx, locktest.NewLock(key, "bob", now, time.Hour)); !errors.As(err, &corrupt) {
				t.Fatalf("Update of a corrupt record: %v; want *CorruptError", err)
			}
			if data, _ := os.ReadFile(path); string(data) != tc.content {
				t.Fatal("a refused operation changed the corrupt file")
			}
			// Only a forced clear removes it, and says what it was.
			got, err := s.Remove(ctx, key)
			if !errors.As(err, &corrupt) || got.Key != key {
				t.Fatalf("Remove = %+v, %v; want the key and *CorruptError", got, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("Remove left the file: %v", err)
			}
			if _, _, err := s.Acquire(ctx, locktest.NewLock(key, "bob", now, time.Hour), now); err != nil {
				t.Fatalf("Acquire after Remove: %v", err)
			}
		})
	}
	t.Run("stray files", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		s := openStore(t, dir)
		if _, _, err := s.Acquire(ctx, other, now); err != nil {
			t.Fatal(err)
		}
		misplaced := `{"key":"src/**","expires_at":"2099-01-01T00:00:00Z","token":"t"}`
		strays := map[string]string{
			"not%2Ecanonical.lock":                  otherJSON,               // name that record.Stem never makes
			"src%2F%2A%2A.lock":                     misplaced,               // pattern outside patterns/
			"~" + strings.Repeat("0", 64) + ".lock": otherJSON,               // hash of another key
			"notes.txt":                             "ignored: not a record", // not a record name
		}
		if !lockkey.IsPattern("src/**") {
			delete(strays, "src%2F%2A%2A.lock")
		}
		for name, content := range strays {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		entries, err := s.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var bad int
		for _, e := range entries {
			var corrupt *locks.CorruptError
			switch {
			case e.Err == nil && e.Key == other.Key && e.Name == s.Where(other.Key):
			case errors.As(e.Err, &corrupt) && corrupt.Path == e.Name:
				bad++
			default:
				t.Errorf("unexpected entry %+v", e)
			}
		}
		if bad != len(strays)-1 {
			t.Fatalf("%d corrupt entries, want %d: %+v", bad, len(strays)-1, entries)
		}
	})
}

func TestStaleTemps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openStore(t, dir)
	old := filepath.Join(dir, ".tmp", "1-1.tmp")
	fresh := filepath.Join(dir, ".tmp", "1-2.tmp")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	openStore(t, dir)
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file removed: %v", err)
	}
}

// Overlapping(path) reads the path's own record and the overlapping
// patterns' records, never the other records.
func TestOverlappingReadsLittle(t *testing.T) {
	t.Parallel()
	s := openStore(t, t.TempDir())
	s.noSync = true
	ctx := context.Background()
	now := time.Now()
	for i := range 200 {
		key := "src/f" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + ".go"
		if _, _, err := s.Acquire(ctx, locktest.NewLock(key, "w", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	patterns := []string{"src/**", "docs/**", "lib/*.go", "src/*.py"}
	for _, p := range patterns {
		if _, _, err := s.Acquire(ctx, locktest.NewLock(p, "w", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	query := "src/fa.go"
	var overlapping int64 = 1 // its own record
	for _, p := range patterns {
		if lockkey.Overlap(p, query) {
			overlapping++
		}
	}
	before := s.reads.Load()
	entries, err := s.Overlapping(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.reads.Load() - before; n != overlapping {
		t.Fatalf("Overlapping(%q) read %d records, want %d", query, n, overlapping)
	}
	if int64(len(entries)) != overlapping {
		t.Fatalf("Overlapping(%q) = %d entries, want %d", query, len(entries), overlapping)
	}
}

func TestFenceSurvivesReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	now := time.Now()
	var last uint64
	for range 3 {
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		rec, _, err := s.Acquire(ctx, locktest.NewLock("workflow", "w", now, time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Fence <= last {
			t.Fatalf("fence %d after reopen, want > %d", rec.Fence, last)
		}
		last = rec.Fence
		if err := s.Release(ctx, rec.Key, rec.Token); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// A lost stripe counter (guard files deleted) still never goes below
	// the fence of a record that is there.
	s := openStore(t, dir)
	rec, _, err := s.Acquire(ctx, locktest.NewLock("workflow", "w", now, time.Minute), now)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".guard")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".guard"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := now.Add(time.Hour)
	next, prev, err := s.Acquire(ctx, locktest.NewLock("workflow", "w2", later, time.Hour), later)
	if err != nil || prev == nil {
		t.Fatalf("takeover after losing the guards: %v, prev %v", err, prev)
	}
	if next.Fence <= rec.Fence {
		t.Fatalf("fence %d after losing the guards, want > %d", next.Fence, rec.Fence)
	}
}

func TestClosed(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	var unavailable *locks.UnavailableError
	if _, err := s.Get(context.Background(), "k"); !errors.As(err, &unavailable) {
		t.Fatalf("Get after Close: %v; want *UnavailableError", err)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	s := openStore(t, t.TempDir())
	ctx := context.Background()
	now := time.Now()
	if _, _, err := s.Acquire(ctx, locks.Lock{ExpiresAt: now.Add(time.Hour)}, now); err == nil {
		t.Error("Acquire without a key succeeded")
	}
	if _, _, err := s.Acquire(ctx, locks.Lock{Key: "k"}, now); err == nil {
		t.Error("Acquire without an expiry succeeded")
	}
	if _, _, err := s.Acquire(ctx, locks.Lock{Key: "bad\xffkey", ExpiresAt: now.Add(time.Hour)}, now); err == nil {
		t.Error("Acquire of a key that is not UTF-8 succeeded")
	}
	rec, _, err := s.Acquire(ctx, locks.Lock{Key: "k", ExpiresAt: now.Add(time.Hour)}, now)
	if err != nil || rec.Token == "" {
		t.Fatalf("Acquire without a token = %+v, %v; want a token made up", rec, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := s.Acquire(cctx, locktest.NewLock("k2", "w", now, time.Hour), now); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled context: %v", err)
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	// A file where the temp directory should be: every write fails, even
	// for root, whom permissions would not stop.
	tmp := filepath.Join(dir, ".tmp")
	if err := os.Remove(tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var unavailable *locks.UnavailableError
	_, _, err := s.Acquire(context.Background(), locktest.NewLock("k", "w", now, time.Hour), now)
	if !errors.As(err, &unavailable) || unavailable.Store != dir {
		t.Fatalf("Acquire with a broken store: %v; want *UnavailableError naming %s", err, dir)
	}
	if _, err := s.Get(context.Background(), "k"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Get after the failed Acquire: %v; want ErrNotFound", err)
	}
}

// After a crash the page cache's fence counter may be lost; a new boot
// must then start above the durable ceiling.
func TestFenceAfterCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	ctx := context.Background()
	now := time.Now()
	key := "db:migration-slot"
	var fences []uint64
	for range 3 {
		rec, _, err := s.Acquire(ctx, locktest.NewLock(key, "w", now, time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		fences = append(fences, rec.Fence)
		if err := s.Release(ctx, key, rec.Token); err != nil {
			t.Fatal(err)
		}
	}
	if _, known := bootID(); known && (fences[1] != fences[0]+1 || fences[2] != fences[1]+1) {
		t.Fatalf("fences %v within one boot, want consecutive", fences)
	}
	guard := filepath.Join(dir, ".guard", fmt.Sprintf("%02x", stripeOf(key)))
	data, err := os.ReadFile(guard)
	if err != nil || len(data) != fenceFileSize {
		t.Fatalf("guard file: %d bytes, %v", len(data), err)
	}
	ceiling := binary.BigEndian.Uint64(data[8:16])
	if ceiling < fences[2] {
		t.Fatalf("durable ceiling %d below fence %d", ceiling, fences[2])
	}
	// The crash: the unsynced counter went back to 1, and the machine
	// rebooted (another boot id).
	binary.BigEndian.PutUint64(data[0:8], 1)
	copy(data[16:32], "another boot....")
	if err := os.WriteFile(guard, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, _, err := s.Acquire(ctx, locktest.NewLock(key, "w", now, time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Fence <= ceiling {
		t.Fatalf("fence %d after a crash, want above the ceiling %d", rec.Fence, ceiling)
	}
}

func TestConformanceIgnoreCase(t *testing.T) {
	locktest.RunIgnoreCase(t, func(t *testing.T) locktest.Views {
		dir := filepath.Join(t.TempDir(), "lockgate", "locks")
		folded, err := OpenWith(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		exact, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		legacy, err := OpenWith(dir, Options{legacyExact: true})
		if err != nil {
			t.Fatal(err)
		}
		legacyASCII, err := OpenWith(dir, Options{legacyASCII: true})
		if err != nil {
			t.Fatal(err)
		}
		// The store as an earlier version left it: not marked folded.
		for _, m := range []string{foldedMarker, unicodeMarker} {
			if err := os.Remove(filepath.Join(dir, m)); err != nil {
				t.Fatal(err)
			}
		}
		reopen := func(t *testing.T) locks.Store {
			s, err := OpenWith(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		return locktest.Views{Folded: folded, Exact: exact, Legacy: legacy, LegacyASCII: legacyASCII, Reopen: reopen}
	})
}

// Records an earlier version kept under their spelling are moved once; the
// store is marked folded only when none is left, so later opens (every
// hook run) skip the scan.
func TestMigrateMarks(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "locks")
	marker := filepath.Join(dir, unicodeMarker)
	legacy, err := OpenWith(dir, Options{legacyExact: true})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	up := locktest.NewLock("SRC/A.GO", "alice", time.Now(), time.Hour)
	low := locktest.NewLock("src/a.go", "bob", time.Now(), time.Hour)
	other := locktest.NewLock("Docs/**", "carol", time.Now(), time.Hour)
	for _, l := range []*locks.Lock{&up, &low, &other} {
		if *l, _, err = legacy.Acquire(ctx, *l, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	reopen := func() *Store {
		t.Helper()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := reopen()
	if _, err := os.Stat(legacy.fileOf("Docs/**", "Docs/**")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Docs/** still under its spelling: %v", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("store marked folded while SRC/A.GO could not move: %v", err)
	}
	if err := s.Release(ctx, "src/a.go", low.Token); err != nil {
		t.Fatal(err)
	}
	s = reopen()
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("store not marked once every record moved: %v", err)
	}
	got, err := s.Get(ctx, "src/a.go")
	if err != nil || got.Token != up.Token {
		t.Fatalf("Get(src/a.go) = %+v, %v; want the record of SRC/A.GO", got, err)
	}
	if _, err := os.Stat(s.Where("src/a.go")); err != nil {
		t.Fatalf("SRC/A.GO not moved to its folded name: %v", err)
	}
}

// A stripe's counter at the top of uint64 refuses the next fence rather
// than wrap to 0.
func TestFenceLimit(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "locks"))
	locktest.RunFenceLimit(t, s, math.MaxUint64, func(t *testing.T, key string, fence uint64) {
		g, err := s.lock(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		defer g.unlock()
		var buf [fenceFileSize]byte
		binary.BigEndian.PutUint64(buf[0:8], fence)
		binary.BigEndian.PutUint64(buf[8:16], fence)
		boot, _ := bootID()
		copy(buf[16:32], boot[:])
		if _, err := g.st.f.WriteAt(buf[:], 0); err != nil {
			t.Fatal(err)
		}
	})
}
