package locktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// Views are stores on one fresh, empty backend: Folded opened for a
// repository with core.ignorecase, Exact for one without it (clones that
// share the store, or one repository before and after core.ignorecase
// changed). Legacy writes as earlier versions did without core.ignorecase:
// path and pattern records under their exact spelling. Reopen opens
// another Folded view, as the next lockgate command does, after Legacy
// wrote. A store that no earlier version wrote (the git store) has no
// Legacy: the cases of records written without the rule do not apply to it
// and are not run. LegacyASCII writes as versions that folded A-Z only
// did: path and pattern records under that identity
// (lockkey.FoldCaseASCII); the cases named LegacyASCII run on it, reading
// with Reopen.
type Views struct {
	Folded, Exact, Legacy, LegacyASCII locks.Store
	Reopen                             func(t *testing.T) locks.Store
}

// RunIgnoreCase runs the conformance cases of core.ignorecase: spellings
// git treats as one path are one key to every operation, the record keeps
// the spelling that was locked, logical keys keep their case, and records
// written without the rule stay readable and are still honoured. open
// returns fresh views for each subtest; RunIgnoreCase closes them.
func RunIgnoreCase(t *testing.T, open func(t *testing.T) Views) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, v Views)
	}{
		{"OneKey", testFoldOneKey},
		{"UpdateRemove", testFoldUpdateRemove},
		{"KindsApart", testFoldKindsApart},
		{"Overlapping", testFoldOverlapping},
		{"Covering", testFoldCovering},
		{"Race", testFoldRace},
		{"ExactReadsFolded", testFoldExactReads},
		{"Legacy", testFoldLegacy},
		{"LegacyExpired", testFoldLegacyExpired},
		{"CrossCloneExact", testCrossCloneExact},
		{"CrossCloneFolded", testCrossCloneFolded},
		{"CrossClonePatterns", testCrossClonePatterns},
		{"ExactSpellingsConflict", testExactSpellingsConflict},
		{"LegacyOtherSpelling", testLegacyOtherSpelling},
		{"LegacyCollision", testLegacyCollision},
		{"LegacyFence", testLegacyFence},
		{"LegacyASCII", testLegacyASCII},
		{"LegacyASCIIExpired", testLegacyASCIIExpired},
		{"LegacyASCIICollision", testLegacyASCIICollision},
	}
	probe := open(t)
	legacy, legacyASCII := probe.Legacy != nil, probe.LegacyASCII != nil
	for _, s := range []locks.Store{probe.Folded, probe.Exact, probe.Legacy, probe.LegacyASCII} {
		if s != nil {
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		}
	}
	for _, tc := range tests {
		switch {
		case strings.HasPrefix(tc.name, "LegacyASCII"):
			if !legacyASCII {
				continue
			}
		case !legacy && strings.Contains(tc.name, "Legacy"):
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			v := open(t)
			t.Cleanup(func() {
				for _, s := range []locks.Store{v.Folded, v.Exact, v.Legacy, v.LegacyASCII} {
					if s == nil {
						continue
					}
					if err := s.Close(); err != nil {
						t.Errorf("Close: %v", err)
					}
				}
			})
			tc.fn(t, v)
		})
	}
}

// mustHeldBy checks that acquiring rec fails because of want.
func mustHeldBy(t *testing.T, s locks.Store, rec, want locks.Lock) {
	t.Helper()
	_, _, err := s.Acquire(context.Background(), rec, now())
	var held *locks.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("Acquire(%q) while %q is held: %v; want *HeldError", rec.Key, want.Key, err)
	}
	if d := DiffLock(want, held.Lock); d != "" {
		t.Fatalf("Acquire(%q): HeldError does not carry the holder's record: %s", rec.Key, d)
	}
}

// mustGetAs checks that Get(key) returns want (spelled as it was locked).
func mustGetAs(t *testing.T, s locks.Store, key string, want locks.Lock) {
	t.Helper()
	got, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if d := DiffLock(want, got); d != "" {
		t.Fatalf("Get(%q): %s", key, d)
	}
}

func testFoldOneKey(t *testing.T, v Views) {
	ctx := context.Background()
	s := v.Folded
	alice := mustAcquire(t, s, NewLock("src/README.md", "alice", now(), time.Hour), now())
	for _, k := range []string{"src/Readme.md", "SRC/readme.md", "src/README.md"} {
		mustHeldBy(t, s, NewLock(k, "bob", now(), time.Hour), alice)
		mustGetAs(t, s, k, alice)
	}
	if got := keysOf(mustList(t, s)); !slices.Equal(got, []string{"src/README.md"}) {
		t.Fatalf("List = %q, want the one record, spelled as locked", got)
	}
	if err := s.Release(ctx, "src/readme.MD", locks.NewToken()); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatalf("Release of another spelling with a wrong token: %v; want ErrTokenMismatch", err)
	}
	if err := s.Release(ctx, "src/readme.MD", alice.Token); err != nil {
		t.Fatalf("Release of another spelling: %v", err)
	}
	for _, k := range []string{"src/README.md", "src/readme.md"} {
		mustBeGone(t, s, k)
	}
	bob := mustAcquire(t, s, NewLock("src/readme.md", "bob", now(), time.Hour), now())
	if bob.Fence <= alice.Fence {
		t.Fatalf("fence of another spelling after release: %d, want > %d", bob.Fence, alice.Fence)
	}
	mustGetAs(t, s, "SRC/README.MD", bob)
}

func testFoldUpdateRemove(t *testing.T, v Views) {
	ctx := context.Background()
	s := v.Folded
	alice := mustAcquire(t, s, NewLock("Docs/**", "alice", now(), time.Hour), now())
	upd := alice
	upd.Key = "docs/**" // refreshed through another spelling
	upd.ExpiresAt = upd.ExpiresAt.Add(time.Hour)
	got, err := s.Update(ctx, upd)
	if err != nil {
		t.Fatalf("Update through another spelling: %v", err)
	}
	want := upd
	want.Fence = alice.Fence
	if d := DiffLock(want, got); d != "" {
		t.Fatalf("Update through another spelling: %s", d)
	}
	mustGetAs(t, s, "DOCS/**", want)
	removed, err := s.Remove(ctx, "DOCS/**")
	if err != nil {
		t.Fatalf("Remove through another spelling: %v", err)
	}
	if d := DiffLock(want, removed); d != "" {
		t.Fatalf("Remove returned: %s", d)
	}
	mustBeGone(t, s, "Docs/**")
	if entries := mustList(t, s); len(entries) != 0 {
		t.Fatalf("List after Remove: %q", keysOf(entries))
	}
}

// Logical keys keep their case, reserved keys are not the files that fold
// to their names, and letters that fold apart stay apart (dotless ı is
// not i).
func testFoldKindsApart(t *testing.T, v Views) {
	s := v.Folded
	pairs := [][2]string{
		{"task:ABC", "task:abc"}, {"workflow", "Workflow"}, {"claim", "CLAIM"},
		{"docs/ı.md", "docs/i.md"}, {"flag:Billing", "flag:billing"},
	}
	for _, p := range pairs {
		a := mustAcquire(t, s, NewLock(p[0], "alice", now(), time.Hour), now())
		b := mustAcquire(t, s, NewLock(p[1], "bob", now(), time.Hour), now())
		mustGet(t, s, a)
		mustGet(t, s, b)
	}
	got := keysOf(mustList(t, s))
	var want []string
	for _, p := range pairs {
		want = append(want, p[0], p[1])
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("List\n got %q\nwant %q", got, want)
	}
	// A path that lowercased reads as a key is still one path in any case.
	mustHeldBy(t, s, NewLock("WORKFLOW", "carol", now(), time.Hour), mustGetLock(t, s, "Workflow"))
}

func mustGetLock(t *testing.T, s locks.Store, key string) locks.Lock {
	t.Helper()
	l, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return l
}

func testFoldOverlapping(t *testing.T, v Views) {
	ctx := context.Background()
	s := v.Folded
	held := []string{"SRC/**", "Docs/Readme.md", "task:ABC", "Lib/*.GO", "api:GET /v1/Users", "Foo:bar"}
	for i, k := range held {
		mustAcquire(t, s, NewLock(k, fmt.Sprintf("w%d", i), now(), time.Hour), now())
	}
	queries := []string{
		"src/a.go", "Src/Sub/B.go", "docs/README.md", "DOCS/**", "task:abc", "task:ABC",
		"lib/x.go", "LIB/X.go", "api:GET /v1/users", "foo:bar", "FOO:BAR", "[f]oo:*", "**",
	}
	for _, q := range queries {
		entries, err := s.Overlapping(ctx, q)
		if err != nil {
			t.Fatalf("Overlapping(%q): %v", q, err)
		}
		var want []string
		for _, k := range held {
			if lockkey.OverlapFoldCase(k, q) {
				want = append(want, k)
			}
		}
		slices.Sort(want)
		if got := slices.Sorted(slices.Values(keysOf(entries))); !slices.Equal(got, want) {
			t.Errorf("Overlapping(%q)\n got %q\nwant %q (by lockkey.OverlapFoldCase)", q, got, want)
		}
	}
	// Spelled out: a pattern in capitals covers the lower-case path.
	entries, _ := s.Overlapping(ctx, "src/a.go")
	if got := keysOf(entries); !slices.Equal(got, []string{"SRC/**"}) {
		t.Errorf("Overlapping(src/a.go) = %q, want [SRC/**]", got)
	}
}

func testFoldCovering(t *testing.T, v Views) {
	ctx := context.Background()
	s := v.Folded
	held := []string{"SRC/**", "Lib/A.GO", "docs/Readme.md", "Workflow", "workflow", "Tools/[A-C]*.sh", "task:ABC"}
	for i, k := range held {
		mustAcquire(t, s, NewLock(k, fmt.Sprintf("w%d", i), now(), time.Hour), now())
	}
	cases := []struct {
		paths []string
		want  []string
	}{
		{[]string{"src/a.go"}, []string{"SRC/**"}},
		{[]string{"lib/a.go"}, []string{"Lib/A.GO"}},
		{[]string{"LIB/A.GO", "DOCS/README.MD"}, []string{"Lib/A.GO", "docs/Readme.md"}},
		{[]string{"workflow"}, []string{"Workflow"}},
		{[]string{"tools/b.sh", "tools/d.sh"}, []string{"Tools/[A-C]*.sh"}},
		{[]string{"lib/b.go", "task:abc", "docs/Ä.md"}, nil},
	}
	many := []string{"DOCS/readme.md"}
	for i := range 1000 {
		many = append(many, fmt.Sprintf("gen/File%04d.txt", i))
	}
	cases = append(cases, struct {
		paths []string
		want  []string
	}{many, []string{"docs/Readme.md"}})
	for _, c := range cases {
		entries, err := s.Covering(ctx, c.paths)
		if err != nil {
			t.Fatalf("Covering(%d paths from %q): %v", len(c.paths), c.paths[0], err)
		}
		for _, e := range entries {
			if e.Err != nil {
				t.Fatalf("Covering(%d paths from %q): entry %q: %v", len(c.paths), c.paths[0], e.Key, e.Err)
			}
		}
		if got := keysOf(entries); !slices.Equal(got, c.want) {
			t.Errorf("Covering(%d paths from %q) = %q, want %q", len(c.paths), c.paths[0], got, c.want)
		}
	}
}

// Racers acquiring different spellings of one path: exactly one wins.
func testFoldRace(t *testing.T, v Views) {
	spellings := []string{"src/Race.go", "src/race.go", "SRC/RACE.GO", "Src/rAce.go"}
	for round := range 3 {
		out := make([]raceOutcome, 16)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := fmt.Sprintf("%s.%d", spellings[i%len(spellings)], round)
				rec := NewLock(key, fmt.Sprintf("racer-%d", i), now(), time.Hour)
				<-start
				out[i].stored, out[i].prev, out[i].err = v.Folded.Acquire(context.Background(), rec, now())
			}()
		}
		close(start)
		wg.Wait()
		w := checkOneWinner(t, out)
		if n := len(mustList(t, v.Folded)); n != round+1 {
			t.Fatalf("round %d: %d records, want %d", round, n, round+1)
		}
		mustGetAs(t, v.Folded, lockkey.FoldCase(w.stored.Key), w.stored)
	}
}

// A store without core.ignorecase reads what one with it wrote.
func testFoldExactReads(t *testing.T, v Views) {
	folded := mustAcquire(t, v.Folded, NewLock("src/README.md", "alice", now(), time.Hour), now())
	mustAcquire(t, v.Folded, NewLock("SRC/**", "alice", now(), time.Hour), now())
	got := keysOf(mustList(t, v.Exact))
	if want := []string{"SRC/**", "src/README.md"}; !slices.Equal(got, want) {
		t.Fatalf("List without core.ignorecase = %q, want %q", got, want)
	}
	mustGet(t, v.Exact, folded)
}

// Records written before keys were folded (by a store without
// core.ignorecase) stay readable, and a lookup under the spelling they
// were locked with finds them.
func testFoldLegacy(t *testing.T, v Views) {
	ctx := context.Background()
	old := mustAcquire(t, v.Legacy, NewLock("SRC/A.GO", "old", now(), time.Hour), now())
	oldPat := mustAcquire(t, v.Legacy, NewLock("Docs/**", "old", now(), time.Hour), now())
	s := v.Reopen(t)
	if got := keysOf(mustList(t, s)); !slices.Equal(got, []string{"Docs/**", "SRC/A.GO"}) {
		t.Fatalf("List = %q, want the records written without core.ignorecase", got)
	}
	mustGet(t, s, old)
	mustHeldBy(t, s, NewLock("SRC/A.GO", "new", now(), time.Hour), old)
	// A pattern finds them at least when it starts like their spelling.
	for q, want := range map[string]string{"SRC/A.GO": old.Key, "SRC/**": old.Key, "S*/**": old.Key, "docs/x.md": oldPat.Key, "DOCS/*/**": oldPat.Key} {
		entries, err := s.Overlapping(ctx, q)
		if err != nil || !slices.Contains(keysOf(entries), want) {
			t.Fatalf("Overlapping(%q) = %q, %v; want %s among them", q, keysOf(entries), err, want)
		}
	}
	entries, err := s.Covering(ctx, []string{"SRC/A.GO", "docs/x.md"})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(entries); !slices.Equal(got, []string{"Docs/**", "SRC/A.GO"}) {
		t.Fatalf("Covering = %q, want both records written without core.ignorecase", got)
	}
	upd := old
	upd.ExpiresAt = upd.ExpiresAt.Add(time.Hour)
	if _, err := s.Update(ctx, upd); err != nil {
		t.Fatalf("Update: %v", err)
	}
	upd.Fence = old.Fence
	mustGet(t, s, upd)
	if err := s.Release(ctx, "SRC/A.GO", old.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	mustBeGone(t, s, "SRC/A.GO")
	if _, err := s.Remove(ctx, "Docs/**"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if entries := mustList(t, s); len(entries) != 0 {
		t.Fatalf("List after Release and Remove: %q", keysOf(entries))
	}
	mustAcquire(t, s, NewLock("src/a.go", "new", now(), time.Hour), now())
}

// An expired record written without core.ignorecase is taken over like any
// other: it is the takeover's prev, and it does not linger.
func testFoldLegacyExpired(t *testing.T, v Views) {
	t0 := now()
	old := mustAcquire(t, v.Legacy, NewLock("README.md", "old", t0, time.Minute), t0)
	later := t0.Add(2 * time.Minute)
	rec := NewLock("README.md", "new", later, time.Hour)
	s := v.Reopen(t)
	got, prev, err := s.Acquire(context.Background(), rec, later)
	if err != nil {
		t.Fatalf("takeover of an expired record written without core.ignorecase: %v", err)
	}
	if prev == nil || prev.Token != old.Token {
		t.Fatalf("takeover prev = %+v, want the expired record", prev)
	}
	if got.Fence <= old.Fence {
		t.Fatalf("takeover fence %d, want > %d", got.Fence, old.Fence)
	}
	entries := mustList(t, s)
	if len(entries) != 1 || entries[0].Token != got.Token {
		t.Fatalf("List after takeover = %q, want the new record only", keysOf(entries))
	}
	mustGetAs(t, s, "readme.md", got)
}

// mustCover checks that Covering(paths) in s returns want.
func mustCover(t *testing.T, s locks.Store, paths []string, want ...string) {
	t.Helper()
	entries, err := s.Covering(context.Background(), paths)
	if err != nil {
		t.Fatalf("Covering(%q): %v", paths, err)
	}
	if got := keysOf(entries); !slices.Equal(got, want) {
		t.Fatalf("Covering(%q) = %q, want %q", paths, got, want)
	}
}

// mustOverlap checks that Overlapping(key) in s returns want.
func mustOverlap(t *testing.T, s locks.Store, key string, want ...string) {
	t.Helper()
	entries, err := s.Overlapping(context.Background(), key)
	if err != nil {
		t.Fatalf("Overlapping(%q): %v", key, err)
	}
	if got := keysOf(entries); !slices.Equal(got, want) {
		t.Fatalf("Overlapping(%q) = %q, want %q", key, got, want)
	}
}

// A lock taken in a clone without core.ignorecase binds one with it: a
// commit there of another spelling is covered, an acquisition refused.
func testCrossCloneExact(t *testing.T, v Views) {
	held := mustAcquire(t, v.Exact, NewLock("SRC/A.GO", "linux", now(), time.Hour), now())
	mustHeldBy(t, v.Folded, NewLock("src/a.go", "mac", now(), time.Hour), held)
	mustCover(t, v.Folded, []string{"src/a.go"}, "SRC/A.GO")
	mustOverlap(t, v.Folded, "src/a.go", "SRC/A.GO")
	mustGetAs(t, v.Folded, "src/a.go", held)
}

// A lock taken in a clone with core.ignorecase binds one without it, on
// the spelling that was locked as on any other.
func testCrossCloneFolded(t *testing.T, v Views) {
	held := mustAcquire(t, v.Folded, NewLock("SRC/A.GO", "mac", now(), time.Hour), now())
	for _, k := range []string{"SRC/A.GO", "src/a.go"} {
		mustHeldBy(t, v.Exact, NewLock(k, "linux", now(), time.Hour), held)
		mustCover(t, v.Exact, []string{k}, "SRC/A.GO")
		mustGetAs(t, v.Exact, k, held)
	}
	if err := v.Exact.Release(context.Background(), "SRC/A.GO", held.Token); err != nil {
		t.Fatalf("Release without core.ignorecase of what was locked with it: %v", err)
	}
	mustBeGone(t, v.Folded, "SRC/A.GO")
}

// Pattern locks bind every clone whatever the case of pattern and path.
func testCrossClonePatterns(t *testing.T, v Views) {
	exact := mustAcquire(t, v.Exact, NewLock("SRC/**", "linux", now(), time.Hour), now())
	folded := mustAcquire(t, v.Folded, NewLock("Docs/*.MD", "mac", now(), time.Hour), now())
	for _, s := range []locks.Store{v.Folded, v.Exact} {
		mustCover(t, s, []string{"src/a.go"}, "SRC/**")
		mustCover(t, s, []string{"docs/a.md", "SRC/b.go"}, "Docs/*.MD", "SRC/**")
		mustOverlap(t, s, "src/**", "SRC/**")
		mustOverlap(t, s, "DOCS/x.md", "Docs/*.MD")
		mustHeldBy(t, s, NewLock("src/**", "other", now(), time.Hour), exact)
		mustHeldBy(t, s, NewLock("docs/*.md", "other", now(), time.Hour), folded)
	}
}

// Without core.ignorecase two spellings that fold equal are still one key:
// the store may be shared with clones whose file system folds them.
func testExactSpellingsConflict(t *testing.T, v Views) {
	held := mustAcquire(t, v.Exact, NewLock("src/A.go", "alice", now(), time.Hour), now())
	mustHeldBy(t, v.Exact, NewLock("src/a.go", "bob", now(), time.Hour), held)
	mustCover(t, v.Exact, []string{"src/a.go"}, "src/A.go")
	if got := keysOf(mustList(t, v.Exact)); !slices.Equal(got, []string{"src/A.go"}) {
		t.Fatalf("List = %q, want the one record", got)
	}
}

// A record an earlier version wrote under its spelling is found through
// any other spelling once the store was opened again.
func testLegacyOtherSpelling(t *testing.T, v Views) {
	old := mustAcquire(t, v.Legacy, NewLock("SRC/A.GO", "old", now(), time.Hour), now())
	oldPat := mustAcquire(t, v.Legacy, NewLock("Lib/**", "old", now(), time.Hour), now())
	s := v.Reopen(t)
	mustHeldBy(t, s, NewLock("src/a.go", "new", now(), time.Hour), old)
	mustHeldBy(t, s, NewLock("lib/**", "new", now(), time.Hour), oldPat)
	mustCover(t, s, []string{"src/a.go", "lib/x.go"}, "Lib/**", "SRC/A.GO")
	mustGetAs(t, s, "Src/A.go", old)
	if err := s.Release(context.Background(), "src/a.go", old.Token); err != nil {
		t.Fatalf("Release through another spelling: %v", err)
	}
	mustBeGone(t, s, "SRC/A.GO")
}

// Two records an earlier version wrote under spellings that fold equal
// both stay: listed, each holding its own spelling, none dropped.
func testLegacyCollision(t *testing.T, v Views) {
	up := mustAcquire(t, v.Legacy, NewLock("SRC/A.GO", "alice", now(), time.Hour), now())
	low := mustAcquire(t, v.Legacy, NewLock("src/a.go", "bob", now(), time.Hour), now())
	s := v.Reopen(t)
	if got := keysOf(mustList(t, s)); !slices.Equal(got, []string{"SRC/A.GO", "src/a.go"}) {
		t.Fatalf("List = %q, want both records", got)
	}
	for _, k := range []string{"SRC/A.GO", "src/a.go", "Src/A.go"} {
		_, _, err := s.Acquire(context.Background(), NewLock(k, "carol", now(), time.Hour), now())
		var held *locks.HeldError
		if !errors.As(err, &held) || DiffLock(up, held.Lock) != "" && DiffLock(low, held.Lock) != "" {
			t.Fatalf("Acquire(%q) while both are held: %v; want *HeldError with one of them", k, err)
		}
	}
	mustCover(t, s, []string{"src/a.go"}, "SRC/A.GO", "src/a.go")
	// Once one is released, the next command finds the other through any
	// spelling.
	if err := s.Release(context.Background(), "src/a.go", low.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	s2 := v.Reopen(t)
	mustHeldBy(t, s2, NewLock("Src/a.go", "carol", now(), time.Hour), up)
	mustCover(t, s2, []string{"src/a.go"}, "SRC/A.GO")
}

// A key's fences keep growing across the move: a lock an earlier version
// granted and released under a spelling is not outnumbered by the next.
func testLegacyFence(t *testing.T, v Views) {
	var last uint64
	for range 5 {
		l := mustAcquire(t, v.Legacy, NewLock("SRC/Fence.GO", "old", now(), time.Hour), now())
		if err := v.Legacy.Release(context.Background(), l.Key, l.Token); err != nil {
			t.Fatal(err)
		}
		last = l.Fence
	}
	got := mustAcquire(t, v.Reopen(t), NewLock("src/fence.go", "new", now(), time.Hour), now())
	if got.Fence <= last {
		t.Fatalf("fence after the move %d, want > %d (granted before it)", got.Fence, last)
	}
}

// longAccented is a path whose escaped name is too long to keep: its
// record's name is hashed, from the identity.
var longAccented = "docs/" + strings.Repeat("É", 40) + ".md"

// Records written by versions that folded A-Z only, under that identity,
// are found through every spelling of their key once the store is opened
// again: listed, held, covering, refreshed and released as before.
func testLegacyASCII(t *testing.T, v Views) {
	ctx := context.Background()
	bob := mustAcquire(t, v.LegacyASCII, NewLock("Été.txt", "bob", now(), time.Hour), now())
	pat := mustAcquire(t, v.LegacyASCII, NewLock("Ça/**", "bob", now(), time.Hour), now())
	long := mustAcquire(t, v.LegacyASCII, NewLock(longAccented, "bob", now(), time.Hour), now())
	s := v.Reopen(t)
	if got, want := keysOf(mustList(t, s)), []string{"docs/" + strings.Repeat("É", 40) + ".md", "Ça/**", "Été.txt"}; !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	for _, k := range []string{"été.txt", "e\u0301te\u0301.txt", "ÉTÉ.TXT", "E\u0301te\u0301.txt"} {
		mustHeldBy(t, s, NewLock(k, "mal", now(), time.Hour), bob)
		mustGetAs(t, s, k, bob)
	}
	mustHeldBy(t, s, NewLock("ça/**", "mal", now(), time.Hour), pat)
	mustHeldBy(t, s, NewLock(strings.ToLower(longAccented), "mal", now(), time.Hour), long)
	mustCover(t, s, []string{"e\u0301te\u0301.txt"}, "Été.txt")
	mustCover(t, s, []string{"c\u0327a/x.go"}, "Ça/**")
	mustCover(t, s, []string{strings.ToLower(longAccented)}, long.Key)
	mustOverlap(t, s, "ÉTÉ.txt", "Été.txt")
	mustOverlap(t, s, "ÇA/X", "Ça/**")
	upd := bob
	upd.ExpiresAt = upd.ExpiresAt.Add(time.Hour)
	if _, err := s.Update(ctx, upd); err != nil {
		t.Fatalf("Update: %v", err)
	}
	mustGetAs(t, s, "été.txt", upd)
	if err := s.Release(ctx, "e\u0301te\u0301.txt", bob.Token); err != nil {
		t.Fatalf("Release through another spelling: %v", err)
	}
	mustBeGone(t, s, "Été.txt")
	if err := s.Release(ctx, strings.ToLower(longAccented), long.Token); err != nil {
		t.Fatalf("Release of a hashed record through another spelling: %v", err)
	}
	if _, err := s.Remove(ctx, "ÇA/**"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if entries := mustList(t, s); len(entries) != 0 {
		t.Fatalf("List after Release and Remove: %q", keysOf(entries))
	}
	mustAcquire(t, s, NewLock("été.txt", "mal", now(), time.Hour), now())
}

// An expired record written under the A-Z-folded identity is taken over
// through another spelling like any other: it is the takeover's prev, and
// it does not linger.
func testLegacyASCIIExpired(t *testing.T, v Views) {
	t0 := now()
	old := mustAcquire(t, v.LegacyASCII, NewLock("\u212Aelvin/Été.md", "old", t0, time.Minute), t0)
	later := t0.Add(2 * time.Minute)
	s := v.Reopen(t)
	got, prev, err := s.Acquire(context.Background(), NewLock("kelvin/e\u0301te\u0301.md", "new", later, time.Hour), later)
	if err != nil {
		t.Fatalf("takeover of an expired record: %v", err)
	}
	if prev == nil || prev.Token != old.Token {
		t.Fatalf("takeover prev = %+v, want the expired record", prev)
	}
	if got.Fence <= old.Fence {
		t.Fatalf("takeover fence %d, want > %d", got.Fence, old.Fence)
	}
	entries := mustList(t, s)
	if len(entries) != 1 || entries[0].Token != got.Token {
		t.Fatalf("List after takeover = %q, want the new record only", keysOf(entries))
	}
	mustGetAs(t, s, "KELVIN/ÉTÉ.md", got)
}

// Two spellings versions that folded A-Z only kept apart both stay held
// until one is released; then the other holds every spelling.
func testLegacyASCIICollision(t *testing.T, v Views) {
	bob := mustAcquire(t, v.LegacyASCII, NewLock("Été.txt", "bob", now(), time.Hour), now())
	mal := mustAcquire(t, v.LegacyASCII, NewLock("été.txt", "mal", now(), time.Hour), now())
	s := v.Reopen(t)
	if got := keysOf(mustList(t, s)); !slices.Equal(got, []string{"Été.txt", "été.txt"}) {
		t.Fatalf("List = %q, want both records", got)
	}
	_, _, err := s.Acquire(context.Background(), NewLock("ÉTÉ.txt", "carol", now(), time.Hour), now())
	var held *locks.HeldError
	if !errors.As(err, &held) || DiffLock(bob, held.Lock) != "" && DiffLock(mal, held.Lock) != "" {
		t.Fatalf("Acquire while both are held: %v; want *HeldError with one of them", err)
	}
	mustCover(t, s, []string{"été.txt"}, "Été.txt", "été.txt")
	if err := s.Release(context.Background(), "Été.txt", bob.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := s.Release(context.Background(), "été.txt", mal.Token); err != nil {
		t.Fatalf("Release of the other: %v", err)
	}
	if entries := mustList(t, v.Reopen(t)); len(entries) != 0 {
		t.Fatalf("List after both were released: %q", keysOf(entries))
	}
}
