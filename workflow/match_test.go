package workflow

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// matchHistory is blocks blocks of lock events: the keys of block b are
// its own (src/b<b>/...), worker "w<b%4>" takes them, and worker "rare"
// takes one key in block 2 only.
func matchHistory(now time.Time, blocks int) []journal.Event {
	var evs []journal.Event
	at := now.Add(-240 * time.Hour)
	for b := range blocks {
		for i := range blockEvents {
			worker := fmt.Sprintf("w%d", b%4)
			if b == 2 && i == 7 {
				worker = "rare"
			}
			evs = append(evs, lockEvent(worker, fmt.Sprintf("src/b%d/%d.go", b, i%50), at, time.Hour))
			at = at.Add(10 * time.Second)
		}
	}
	return evs
}

// matchRead is ReadEventsMatching of the branch, and the number of
// blocks of the cache the same read decodes.
func matchRead(t *testing.T, cfg Config, from, until time.Time, m Match) (LogRead, int) {
	t.Helper()
	lr, err := ReadEventsMatching(context.Background(), cfg, []string{mainRef}, from, until, m)
	if err != nil {
		t.Fatal(err)
	}
	var st readStats
	if _, err := readLog(context.Background(), cfg, []string{mainRef}, span{from: from, until: until, match: m}, &st); err != nil {
		t.Fatal(err)
	}
	return lr, st.blocks
}

// keptOf is the events of all that m keeps at or after from and before
// until: what a full read filtered answers (nil for none).
func keptOf(all []journal.Event, from, until time.Time, m Match) []journal.Event {
	var out []journal.Event
	for i := range all {
		if !all[i].Timestamp.Before(from) && (until.IsZero() || all[i].Timestamp.Before(until)) && m.keeps(&all[i]) {
			out = append(out, all[i])
		}
	}
	return out
}

// A read of one key's or one worker's events decodes only the blocks
// whose filter may hold them, and answers exactly what a full read,
// filtered, does: from the cache, and from a cache the branch gained
// events since.
func TestReadEventsMatching(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := newRepo(t)
	cfg := readCfg(r)
	const blocks = 12
	commitTo(t, r, "lockgate/workflow", matchHistory(now, blocks))
	all := coldRead(t, r, mainRef)
	read(t, r, mainRef) // writes the cache
	tests := []struct {
		name      string
		m         Match
		from      time.Time
		maxBlocks int // at most, false positives included
		minEvents int
	}{
		{"one key", Match{Key: "src/b5/3.go"}, time.Time{}, 2, 5},
		{"no such key", Match{Key: "src/none.go"}, time.Time{}, 1, 0},
		{"rare worker", Match{Worker: "rare"}, time.Time{}, 2, 1},
		{"worker of a quarter", Match{Worker: "w1"}, time.Time{}, blocks/4 + 1, blocks / 4 * (blockEvents - 1)},
		{"key and worker", Match{Key: "src/b9/1.go", Worker: "w1"}, time.Time{}, 2, 5},
		{"key of another worker", Match{Key: "src/b9/1.go", Worker: "w2"}, time.Time{}, 2, 0},
		{"key, from a time", Match{Key: "src/b1/0.go"}, all[6*blockEvents].Timestamp, 1, 0},
	}
	// extra: blocks that hold the events of a test added since.
	check := func(when string, extra int) {
		t.Helper()
		for _, tc := range tests {
			lr, decoded := matchRead(t, cfg, tc.from, time.Time{}, tc.m)
			want := keptOf(all, tc.from, time.Time{}, tc.m)
			sameEvents(t, when+": "+tc.name, keptOf(lr.Events, time.Time{}, time.Time{}, Match{}), want)
			if len(want) < tc.minEvents {
				t.Fatalf("%s: %s: %d events, the test wants at least %d", when, tc.name, len(want), tc.minEvents)
			}
			if decoded > tc.maxBlocks+extra {
				t.Fatalf("%s: %s: %d blocks decoded, want at most %d", when, tc.name, decoded, tc.maxBlocks+extra)
			}
			if lr.Complete {
				t.Fatalf("%s: %s: a read that skipped blocks says it is complete", when, tc.name)
			}
		}
	}
	check("cached", 0)

	// Events added since: the new ones are read from their blobs, the
	// cached blocks before them skipped as above (the last block is
	// decoded: it is rewritten with them), and the cache of the new tree
	// written whole.
	for i, m := range []Match{{Key: "src/b5/3.go"}, {Worker: "rare"}} {
		commitTo(t, r, "lockgate/workflow", []journal.Event{lockEvent("rare", "src/b5/3.go", now.Add(time.Duration(i-5)*time.Minute), time.Hour)})
		all = coldRead(t, r, mainRef)
		var st readStats
		lr, err := readLog(context.Background(), cfg, []string{mainRef}, span{match: m}, &st)
		if err != nil {
			t.Fatal(err)
		}
		if st.incremental != 1 || st.blocks > 3 {
			t.Fatalf("%+v: after new events: stats %+v, want an incremental read of at most 3 blocks", m, st)
		}
		got := keptOf(lr.Events, time.Time{}, time.Time{}, m)
		sameEvents(t, fmt.Sprintf("%+v after new events", m), got, keptOf(all, time.Time{}, time.Time{}, m))
		if lr.Complete {
			t.Fatalf("%+v: after new events: a read that skipped blocks says it is complete", m)
		}
		// The incremental read rewrote the cache: the next read uses it.
		if got, _, st := read(t, r, mainRef); st.cached != 1 {
			t.Fatalf("after new events: stats %+v, want the cache", st)
		} else {
			sameEvents(t, "after new events, all", got, all)
		}
	}
	check("after new events", 1)

	// A read with no match decodes every block.
	data, err := os.ReadFile(cacheFile(filepath.Join(r.Dir, ".git"), mainRef))
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCache(data)
	if err != nil {
		t.Fatal(err)
	}
	if lr, decoded := matchRead(t, cfg, time.Time{}, time.Time{}, Match{}); decoded != len(c.blocks) || !lr.Complete {
		t.Fatalf("no match: %d blocks decoded (complete %v), want %d", decoded, lr.Complete, len(c.blocks))
	}
}

// A block's filter that lacks a name its events carry is a damaged
// cache: read past, and the branch read whole.
func TestReadEventsFilterLacksName(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := newRepo(t)
	commitTo(t, r, "lockgate/workflow", matchHistory(now, 2))
	want := coldRead(t, r, mainRef)
	read(t, r, mainRef)
	file := cacheFile(filepath.Join(r.Dir, ".git"), mainRef)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := parseCache(data)
	if err != nil {
		t.Fatal(err)
	}
	// Filters of the same length, every bit clear: each head is well
	// formed, the checksum holds.
	for i := range c.blocks {
		c.blocks[i].filter.bits = strings.Repeat("\x00", len(c.blocks[i].filter.bits))
	}
	bad, err := encodeSpliced(c.ref, c.tree, c.blocks, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, st := read(t, r, mainRef)
	if st.full != 1 {
		t.Fatalf("stats %+v, want a full read", st)
	}
	sameEvents(t, "cleared filters", got, want)
	if b, _ := os.ReadFile(file); string(b) != string(data) {
		t.Fatal("the cache was not rewritten")
	}
}

// The cache of lock events takes a fraction of what the events take as
// journal lines.
func TestCacheCompact(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	evs := matchHistory(now, 8)
	lines := 0
	for _, ev := range evs {
		lines += len(line(t, ev)) + 1
	}
	data, err := encodeCache(mainRef, "tree", evs)
	if err != nil {
		t.Fatal(err)
	}
	// Each block compressed, a quarter at most (uncompressed, they took
	// nearly half: the ids are 32 hex digits, keys and workers repeat).
	if len(data)*4 > lines {
		t.Fatalf("the cache of %d events takes %d bytes, their lines %d: more than a quarter", len(evs), len(data), lines)
	}
}

func TestBloom(t *testing.T) {
	t.Parallel()
	var evs []journal.Event
	for i := range 300 {
		evs = append(evs, journal.Event{Key: fmt.Sprintf("key/%d", i), Worker: fmt.Sprintf("worker-%d", i%20)})
	}
	f := newBloom(evs)
	for i := range evs {
		if !f.has(keyName, evs[i].Key) || !f.has(workerName, evs[i].Worker) {
			t.Fatalf("the filter lacks the names of event %d", i)
		}
	}
	// About 1% false positives: well under 5% of 1,000 names it lacks,
	// a worker's name asked as a key among them.
	fp := 0
	for i := range 1000 {
		if f.has(keyName, fmt.Sprintf("other/%d", i)) {
			fp++
		}
	}
	if f.has(keyName, "worker-1") {
		fp++
	}
	if fp > 50 {
		t.Fatalf("%d false positives in 1001", fp)
	}
}
