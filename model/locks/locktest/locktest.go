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
	"github.com/lockgate/lockgate/scope"
)

// conformanceTest is one case of the suite, run on a fresh store.
type conformanceTest struct {
	name string
	fn   func(t *testing.T, s locks.Store)
}

// Run runs the conformance suite. open returns a fresh, empty store for
// each subtest; Run closes it when the subtest ends.
func Run(t *testing.T, open func(t *testing.T) locks.Store) {
	t.Helper()
	tests := []conformanceTest{
		{"AcquireGetListRelease", testAcquireGetListRelease},
		{"HeldByOther", testHeldByOther},
		{"WrongToken", testWrongToken},
		{"Missing", testMissing},
		{"ExpiredTakeover", testExpiredTakeover},
		{"FenceGrows", testFenceGrows},
		{"UpdateExtendsKeepsFence", testUpdate},
		{"Remove", testRemove},
		{"ListSorted", testListSorted},
		{"Page", testPage},
		{"PageThroughChanges", testPageThroughChanges},
		{"Overlapping", testOverlapping},
		{"Covering", testCovering},
		{"InNamespace", testInNamespace},
		{"GetMany", testGetMany},
		{"AwkwardKeys", testAwkwardKeys},
		{"CaseDistinct", testCaseDistinct},
		{"RaceAcquire", testRaceAcquire},
		{"RaceTakeover", testRaceTakeover},
		{"WaitHandover", testWaitHandover},
	}
	// Stores that signal releases are held to that contract too.
	probe := open(t)
	if _, ok := probe.(locks.Waiter); ok {
		tests = append(tests, conformanceTest{"Waiter", testWaiter})
	}
	if err := probe.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// NewLock returns a record of key held by holder from now for ttl, with a
// fresh token. Times are in UTC and whole milliseconds, so that they
// survive any backend's encoding unchanged.
func NewLock(key, holder string, now time.Time, ttl time.Duration) locks.Lock {
	now = now.UTC().Truncate(time.Millisecond)
	return locks.Lock{
		Key:        key,
		Holder:     holder,
		HolderType: scope.WorkerAgent,
		Session:    holder + "-session",
		Action:     "lock",
		PID:        4242,
		Host:       "locktest",
		CreatedAt:  now,
		ExpiresAt:  now.Add(ttl),
		Reason:     "locktest",
		Token:      locks.NewToken(),
	}
}

// DiffLock describes how got differs from want ("" when equal). Times are
// compared as instants, so a backend may return them in any location.
func DiffLock(want, got locks.Lock) string {
	var d []string
	add := func(field string, w, g any) {
		d = append(d, fmt.Sprintf("%s: want %v, got %v", field, w, g))
	}
	str := func(field, w, g string) {
		if w != g {
			add(field, fmt.Sprintf("%q", w), fmt.Sprintf("%q", g))
		}
	}
	tm := func(field string, w, g time.Time) {
		if !w.Equal(g) {
			add(field, w.Format(time.RFC3339Nano), g.Format(time.RFC3339Nano))
		}
	}
	ptm := func(field string, w, g *time.Time) {
		switch {
		case w == nil && g == nil:
		case w == nil || g == nil:
			add(field, w, g)
		default:
			tm(field, *w, *g)
		}
	}
	str("key", want.Key, got.Key)
	str("holder", want.Holder, got.Holder)
	str("holder_type", want.HolderType, got.HolderType)
	str("session", want.Session, got.Session)
	str("action", want.Action, got.Action)
	str("host", want.Host, got.Host)
	str("reason", want.Reason, got.Reason)
	str("task_id", want.TaskID, got.TaskID)
	str("token", want.Token, got.Token)
	if want.PID != got.PID {
		add("pid", want.PID, got.PID)
	}
	if want.Fence != got.Fence {
		add("fence", want.Fence, got.Fence)
	}
	tm("created_at", want.CreatedAt, got.CreatedAt)
	tm("expires_at", want.ExpiresAt, got.ExpiresAt)
	ptm("task_acquired", want.TaskAcquired, got.TaskAcquired)
	ptm("task_expires", want.TaskExpires, got.TaskExpires)
	return strings.Join(d, "; ")
}

// now is the suite's clock: whole milliseconds, so records compare equal
// after any encoding.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

func mustAcquire(t *testing.T, s locks.Store, rec locks.Lock, at time.Time) locks.Lock {
	t.Helper()
	stored, prev, err := s.Acquire(context.Background(), rec, at)
	if err != nil {
		t.Fatalf("Acquire(%q): %v", rec.Key, err)
	}
	if prev != nil {
		t.Fatalf("Acquire(%q) of a free key returned prev %+v", rec.Key, *prev)
	}
	want := rec
	want.Fence = stored.Fence
	if d := DiffLock(want, stored); d != "" {
		t.Fatalf("Acquire(%q) stored a different record: %s", rec.Key, d)
	}
	if stored.Fence == 0 {
		t.Fatalf("Acquire(%q) assigned fence 0; fences start at 1", rec.Key)
	}
	return stored
}

func mustGet(t *testing.T, s locks.Store, want locks.Lock) {
	t.Helper()
	got, err := s.Get(context.Background(), want.Key)
	if err != nil {
		t.Fatalf("Get(%q): %v", want.Key, err)
	}
	if d := DiffLock(want, got); d != "" {
		t.Fatalf("Get(%q): %s", want.Key, d)
	}
}

func mustBeGone(t *testing.T, s locks.Store, key string) {
	t.Helper()
	if got, err := s.Get(context.Background(), key); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Get(%q) = %+v, %v; want ErrNotFound", key, got, err)
	}
}

func mustList(t *testing.T, s locks.Store) []locks.Entry {
	t.Helper()
	entries, err := s.List(context.Background())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, e := range entries {
		if e.Err != nil {
			t.Fatalf("List: entry %q (%s): %v", e.Key, e.Name, e.Err)
		}
	}
	return entries
}

func keysOf(entries []locks.Entry) []string {
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	return keys
}

func testAcquireGetListRelease(t *testing.T, s locks.Store) {
	ctx := context.Background()
	rec := NewLock("src/a.go", "alice", now(), time.Hour)
	rec.TaskID = "TASK-001"
	acq, exp := rec.CreatedAt, rec.CreatedAt.Add(30*time.Minute)
	rec.TaskAcquired, rec.TaskExpires = &acq, &exp
	stored := mustAcquire(t, s, rec, now())
	mustGet(t, s, stored)
	if s.Where(rec.Key) == "" {
		t.Errorf("Where(%q) is empty", rec.Key)
	}
	entries := mustList(t, s)
	if len(entries) != 1 {
		t.Fatalf("List returned %d entries, want 1: %v", len(entries), keysOf(entries))
	}
	if d := DiffLock(stored, entries[0].Lock); d != "" {
		t.Fatalf("List: %s", d)
	}
	if err := s.Release(ctx, rec.Key, rec.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	mustBeGone(t, s, rec.Key)
	if entries := mustList(t, s); len(entries) != 0 {
		t.Fatalf("List after Release: %v", keysOf(entries))
	}
	// Free again: anyone may take it, and nothing is "taken over".
	mustAcquire(t, s, NewLock(rec.Key, "bob", now(), time.Hour), now())
}

func testHeldByOther(t *testing.T, s locks.Store) {
	ctx := context.Background()
	alice := mustAcquire(t, s, NewLock("src/a.go", "alice", now(), time.Hour), now())
	_, _, err := s.Acquire(ctx, NewLock("src/a.go", "bob", now(), time.Hour), now())
	var held *locks.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("Acquire of a held key: %v; want *HeldError", err)
	}
	if d := DiffLock(alice, held.Lock); d != "" {
		t.Fatalf("HeldError does not carry the holder's record: %s", d)
	}
	if held.Where == "" {
		t.Error("HeldError.Where is empty")
	}
	// The holder's own second acquisition is refused the same way: renewing
	// is the manager's job (Update), not Acquire's.
	again := NewLock("src/a.go", "alice", now(), time.Hour)
	if _, _, err := s.Acquire(ctx, again, now()); !errors.As(err, &held) {
		t.Fatalf("Acquire of a key held by the same holder: %v; want *HeldError", err)
	}
	mustGet(t, s, alice)
}

func testWrongToken(t *testing.T, s locks.Store) {
	ctx := context.Background()
	alice := mustAcquire(t, s, NewLock("src/a.go", "alice", now(), time.Hour), now())
	if err := s.Release(ctx, alice.Key, locks.NewToken()); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatalf("Release with a wrong token: %v; want ErrTokenMismatch", err)
	}
	if err := s.Release(ctx, alice.Key, ""); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatalf("Release with an empty token: %v; want ErrTokenMismatch", err)
	}
	mustGet(t, s, alice)
	upd := alice
	upd.Token = locks.NewToken()
	upd.ExpiresAt = upd.ExpiresAt.Add(time.Hour)
	upd.Holder = "mallory"
	if _, err := s.Update(ctx, upd); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatalf("Update with a wrong token: %v; want ErrTokenMismatch", err)
	}
	mustGet(t, s, alice)
}

func testMissing(t *testing.T, s locks.Store) {
	ctx := context.Background()
	mustBeGone(t, s, "src/nope.go")
	if err := s.Release(ctx, "src/nope.go", locks.NewToken()); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Release of a missing key: %v; want ErrNotFound", err)
	}
	if _, err := s.Update(ctx, NewLock("src/nope.go", "alice", now(), time.Hour)); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Update of a missing key: %v; want ErrNotFound", err)
	}
	if _, err := s.Remove(ctx, "src/nope.go"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Remove of a missing key: %v; want ErrNotFound", err)
	}
	// None of that may have created a record.
	mustBeGone(t, s, "src/nope.go")
	if entries := mustList(t, s); len(entries) != 0 {
		t.Fatalf("List of an empty store: %v", keysOf(entries))
	}
	if entries, err := s.Overlapping(ctx, "src/nope.go"); err != nil || len(entries) != 0 {
		t.Fatalf("Overlapping in an empty store = %v, %v; want nothing", keysOf(entries), err)
	}
}

// GetMany (the store's own, or one Get a key) gives one entry per key,
// in the order asked, a missing record as ErrNotFound with its key.
func testGetMany(t *testing.T, s locks.Store) {
	ctx := context.Background()
	t0 := now()
	mustAcquire(t, s, NewLock("task:WP-2", "alice", t0, time.Hour), t0)
	mustAcquire(t, s, NewLock("src/a.go", "bob", t0, time.Hour), t0)
	keys := []string{"src/a.go", "task:WP-1", "task:WP-2", "task:WP-1"}
	got, err := locks.GetMany(ctx, s, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(keys) {
		t.Fatalf("GetMany of %d keys: %d entries", len(keys), len(got))
	}
	for i, want := range []string{"bob", "", "alice", ""} {
		e := got[i]
		switch {
		case want == "" && (!errors.Is(e.Err, locks.ErrNotFound) || e.Key != keys[i]):
			t.Errorf("entry %d (%s): %+v, %v; want ErrNotFound with its key", i, keys[i], e.Lock, e.Err)
		case want != "" && (e.Err != nil || e.Key != keys[i] || e.Holder != want):
			t.Errorf("entry %d (%s): %s held by %s, %v; want %s's", i, keys[i], e.Key, e.Holder, e.Err, want)
		}
	}
	if got, err := locks.GetMany(ctx, s, nil); err != nil || len(got) != 0 {
		t.Errorf("GetMany of no keys = %v, %v; want nothing", got, err)
	}
}

func testExpiredTakeover(t *testing.T, s locks.Store) {
	ctx := context.Background()
	t0 := now()
	alice := mustAcquire(t, s, NewLock("task:TASK-001", "alice", t0, time.Minute), t0)
	// Not yet expired at its expiry instant: expired means expires_at < now.
	if _, _, err := s.Acquire(ctx, NewLock(alice.Key, "bob", t0, time.Hour), alice.ExpiresAt); !isHeld(err) {
		t.Fatalf("Acquire at the expiry instant: %v; want *HeldError", err)
	}
	later := t0.Add(2 * time.Minute)
	bobRec := NewLock(alice.Key, "bob", later, time.Hour)
	bob, prev, err := s.Acquire(ctx, bobRec, later)
	if err != nil {
		t.Fatalf("takeover of an expired lock: %v", err)
	}
	if prev == nil {
		t.Fatal("takeover returned no prev")
	}
	if d := DiffLock(alice, *prev); d != "" {
		t.Fatalf("takeover prev is not the expired record: %s", d)
	}
	if bob.Fence <= alice.Fence {
		t.Fatalf("takeover fence %d, want > %d", bob.Fence, alice.Fence)
	}
	want := bobRec
	want.Fence = bob.Fence
	if d := DiffLock(want, bob); d != "" {
		t.Fatalf("takeover stored: %s", d)
	}
	mustGet(t, s, bob)
	// The late release of the old holder must not remove the successor.
	if err := s.Release(ctx, alice.Key, alice.Token); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatalf("late Release by the replaced holder: %v; want ErrTokenMismatch", err)
	}
	if _, err := s.Update(ctx, alice); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatalf("late Update by the replaced holder: %v; want ErrTokenMismatch", err)
	}
	mustGet(t, s, bob)
}

func testFenceGrows(t *testing.T, s locks.Store) {
	ctx := context.Background()
	var last uint64
	for i := range 6 {
		rec := mustAcquire(t, s, NewLock("db:migration-slot", fmt.Sprintf("w%d", i), now(), time.Hour), now())
		if rec.Fence <= last {
			t.Fatalf("cycle %d: fence %d, want > %d", i, rec.Fence, last)
		}
		last = rec.Fence
		// Other keys in between must not disturb the order.
		other := mustAcquire(t, s, NewLock(fmt.Sprintf("src/f%d.go", i), "x", now(), time.Hour), now())
		if err := s.Release(ctx, other.Key, other.Token); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, rec.Key, rec.Token); err != nil {
			t.Fatalf("cycle %d: Release: %v", i, err)
		}
	}
	// A forced clear does not reset the fence either.
	rec := mustAcquire(t, s, NewLock("db:migration-slot", "y", now(), time.Hour), now())
	if _, err := s.Remove(ctx, rec.Key); err != nil {
		t.Fatal(err)
	}
	if again := mustAcquire(t, s, NewLock("db:migration-slot", "z", now(), time.Hour), now()); again.Fence <= rec.Fence {
		t.Fatalf("fence after Remove %d, want > %d", again.Fence, rec.Fence)
	}
}

func testUpdate(t *testing.T, s locks.Store) {
	ctx := context.Background()
	t0 := now()
	alice := mustAcquire(t, s, NewLock("activity:WI-001-A1", "alice", t0, time.Hour), t0)
	upd := alice
	upd.ExpiresAt = alice.ExpiresAt.Add(time.Hour)
	upd.Reason = "still at it"
	upd.TaskID = "TASK-007"
	ta, te := t0, t0.Add(30*time.Minute)
	upd.TaskAcquired, upd.TaskExpires = &ta, &te
	upd.Fence = 0 // the caller need not know it: the store keeps its own
	got, err := s.Update(ctx, upd)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	want := upd
	want.Fence = alice.Fence
	if d := DiffLock(want, got); d != "" {
		t.Fatalf("Update returned: %s", d)
	}
	mustGet(t, s, want)
	// After the old expiry, the lock is still live.
	at := alice.ExpiresAt.Add(time.Minute)
	if _, _, err := s.Acquire(ctx, NewLock(alice.Key, "bob", at, time.Hour), at); !isHeld(err) {
		t.Fatalf("Acquire after the old expiry of a refreshed lock: %v; want *HeldError", err)
	}
	mustGet(t, s, want)
}

func testRemove(t *testing.T, s locks.Store) {
	ctx := context.Background()
	alice := mustAcquire(t, s, NewLock("claim", "alice", now(), time.Hour), now())
	got, err := s.Remove(ctx, alice.Key)
	if err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if d := DiffLock(alice, got); d != "" {
		t.Fatalf("Remove returned: %s", d)
	}
	mustBeGone(t, s, alice.Key)
	if _, err := s.Remove(ctx, alice.Key); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("second Remove: %v; want ErrNotFound", err)
	}
	if err := s.Release(ctx, alice.Key, alice.Token); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Release after Remove: %v; want ErrNotFound", err)
	}
	mustAcquire(t, s, NewLock(alice.Key, "bob", now(), time.Hour), now())
}

func testListSorted(t *testing.T, s locks.Store) {
	keys := []string{
		"workflow", "task:TASK-001", "claim", "src/b.go", "api:GET /v1/users",
		"docs/**", "activity:WI-001-A1", "src/a.go", "db:schema:users", "feature:FEAT-123:pause",
	}
	for i, k := range keys {
		mustAcquire(t, s, NewLock(k, fmt.Sprintf("w%d", i), now(), time.Hour), now())
	}
	got := keysOf(mustList(t, s))
	want := slices.Sorted(slices.Values(keys))
	if !slices.Equal(got, want) {
		t.Fatalf("List keys\n got %q\nwant %q", got, want)
	}
}

// walk pages through s, limit records a page, calling between(i) after
// page i, and returns the keys in the order the pages gave them.
func walk(t *testing.T, s locks.Store, limit int, between func(i int)) []string {
	t.Helper()
	var got []string
	after := ""
	for i := 0; ; i++ {
		page, next, err := s.Page(context.Background(), after, limit)
		if err != nil {
			t.Fatalf("Page(%q, %d): %v", after, limit, err)
		}
		if len(page) > limit {
			t.Fatalf("Page(%q, %d) returned %d records", after, limit, len(page))
		}
		for _, e := range page {
			if e.Err != nil {
				t.Fatalf("Page: entry %q (%s): %v", e.Key, e.Name, e.Err)
			}
			got = append(got, e.Key)
		}
		if next == "" {
			return got
		}
		if next <= after {
			t.Fatalf("Page(%q, %d): next %q does not move on", after, limit, next)
		}
		if i > 1000 {
			t.Fatalf("Page never ended: %q", got)
		}
		after = next
		if between != nil {
			between(i)
		}
	}
}

// testPage: pages of any size give every record once, and a page past
// the last gives none.
func testPage(t *testing.T, s locks.Store) {
	if page, next, err := s.Page(context.Background(), "", 10); err != nil || len(page) != 0 || next != "" {
		t.Fatalf("Page of an empty store = %v, %q, %v", keysOf(page), next, err)
	}
	keys := []string{
		"workflow", "task:TASK-001", "claim", "src/b.go", "api:GET /v1/users", "Docs/Guide.md",
		"docs/**", "activity:WI-001-A1", "src/a.go", "db:schema:users", "feature:FEAT-123:pause", "art/" + strings.Repeat("x", 300) + ".psd",
	}
	for i, k := range keys {
		mustAcquire(t, s, NewLock(k, fmt.Sprintf("w%d", i), now(), time.Hour), now())
	}
	want := slices.Sorted(slices.Values(keys))
	for _, limit := range []int{1, 3, len(keys) - 1, len(keys), 100} {
		got := walk(t, s, limit, nil)
		if !slices.Equal(slices.Sorted(slices.Values(got)), want) {
			t.Fatalf("pages of %d gave\n %q\nwant each of\n %q once", limit, got, want)
		}
	}
	page, next, err := s.Page(context.Background(), "", len(keys))
	if err != nil || len(page) != len(keys) || next != "" {
		t.Fatalf("Page of all %d: %d records, next %q, %v", len(keys), len(page), next, err)
	}
	for _, e := range page {
		if e.Fence == 0 || e.Holder == "" {
			t.Fatalf("Page gave a record without its fields: %+v", e.Lock)
		}
	}
	if page, next, err := s.Page(context.Background(), "\U0010FFFF", 10); err != nil || len(page) != 0 || next != "" {
		t.Fatalf("Page past every record = %v, %q, %v", keysOf(page), next, err)
	}
}

// testPageThroughChanges: records added and removed between pages do not
// make a walk skip or repeat a record that was there throughout.
func testPageThroughChanges(t *testing.T, s locks.Store) {
	ctx := context.Background()
	var stay []string
	held := map[string]locks.Lock{}
	for i := range 12 {
		k := fmt.Sprintf("src/s%02d.go", i)
		stay = append(stay, k)
		mustAcquire(t, s, NewLock(k, "alice", now(), time.Hour), now())
	}
	var churn []string
	for i := range 12 {
		k := fmt.Sprintf("src/s%02d-gone.go", i)
		churn = append(churn, k)
		held[k] = mustAcquire(t, s, NewLock(k, "bob", now(), time.Hour), now())
	}
	got := walk(t, s, 3, func(i int) {
		// One record gone and two new, one before and one after every
		// record in the store, between each two pages.
		gone := churn[(i*5)%len(churn)]
		if l, ok := held[gone]; ok {
			if err := s.Release(ctx, gone, l.Token); err != nil {
				t.Fatalf("Release(%q): %v", gone, err)
			}
			delete(held, gone)
		}
		for _, k := range []string{fmt.Sprintf("src/a%02d.go", i), fmt.Sprintf("src/z%02d.go", i)} {
			mustAcquire(t, s, NewLock(k, "carol", now(), time.Hour), now())
		}
	})
	seen := map[string]int{}
	for _, k := range got {
		seen[k]++
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("%s came %d times", k, n)
		}
	}
	for _, k := range stay {
		if seen[k] != 1 {
			t.Errorf("%s, there throughout, came %d times: %q", k, seen[k], got)
		}
	}
	for k := range held {
		if seen[k] != 1 {
			t.Errorf("%s, there throughout, came %d times", k, seen[k])
		}
	}
}

func testOverlapping(t *testing.T, s locks.Store) {
	ctx := context.Background()
	held := []string{
		"src/api/**", "src/api/users.py", "src/web/**", "docs/readme.md",
		"api:GET /v1/users", "src/api/routes.py",
	}
	for i, k := range held {
		mustAcquire(t, s, NewLock(k, fmt.Sprintf("w%d", i), now(), time.Hour), now())
	}
	queries := []string{
		"src/api/users.py", "src/api/other.py", "src/**", "docs/readme.md",
		"api:GET /v1/users", "lib/x.go", "src/web/app.js",
	}
	for _, q := range queries {
		entries, err := s.Overlapping(ctx, q)
		if err != nil {
			t.Fatalf("Overlapping(%q): %v", q, err)
		}
		for _, e := range entries {
			if e.Err != nil {
				t.Fatalf("Overlapping(%q): entry %q: %v", q, e.Key, e.Err)
			}
		}
		got := slices.Sorted(slices.Values(keysOf(entries)))
		var want []string
		for _, k := range held {
			if k == q || lockkey.Overlap(k, q) {
				want = append(want, k)
			}
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("Overlapping(%q)\n got %q\nwant %q (by lockkey.Overlap)", q, got, want)
		}
	}
	// Spelled out, for when lockkey says what the spec says.
	if lockkey.Overlap("src/api/**", "src/api/users.py") {
		entries, _ := s.Overlapping(ctx, "src/api/users.py")
		got := keysOf(entries)
		if !slices.Contains(got, "src/api/**") || slices.Contains(got, "docs/readme.md") || slices.Contains(got, "src/web/**") {
			t.Errorf("Overlapping(src/api/users.py) = %q; want src/api/** and the path itself only", got)
		}
	} else {
		t.Log("lockkey.Overlap does not see src/api/** cover src/api/users.py; pattern case checked only against lockkey")
	}
}

func testCovering(t *testing.T, s locks.Store) {
	ctx := context.Background()
	held := []string{
		"src/api/**", "src/api/users.py", "docs/readme.md", "lib/*.go",
		"api:GET /v1/users", "feature:F-1:pause", "workflow",
	}
	for i, k := range held {
		mustAcquire(t, s, NewLock(k, fmt.Sprintf("w%d", i), now(), time.Hour), now())
	}
	cases := []struct {
		paths []string
		want  []string
	}{
		{[]string{"src/api/users.py"}, []string{"src/api/**", "src/api/users.py"}},
		{[]string{"src/api/other.py", "lib/a.go"}, []string{"lib/*.go", "src/api/**"}},
		{[]string{"docs/readme.md", "docs/other.md", "README"}, []string{"docs/readme.md"}},
		{[]string{"lib/sub/a.go", "nothing"}, nil},
		// Files named like keys are not those keys.
		{[]string{"workflow", "api:GET /v1/users", "feature:F-1:pause"}, nil},
		{nil, nil},
	}
	// Enough paths to make a backend switch strategy (listing vs probing).
	many := []string{"docs/readme.md"}
	for i := range 1000 {
		many = append(many, fmt.Sprintf("gen/file%04d.txt", i))
	}
	cases = append(cases, struct {
		paths []string
		want  []string
	}{many, []string{"docs/readme.md"}})
	for _, c := range cases {
		entries, err := s.Covering(ctx, c.paths)
		if err != nil {
			t.Fatalf("Covering(%d paths): %v", len(c.paths), err)
		}
		got := keysOf(entries)
		if !slices.Equal(got, c.want) {
			t.Errorf("Covering(%.60q) = %q, want %q", c.paths, got, c.want)
		}
	}
}

func testInNamespace(t *testing.T, s locks.Store) {
	ctx := context.Background()
	for i, k := range []string{"feature:F-1:pause", "feature:F-2:pause", "api:GET /x", "src/feature:x", "feature:F-3:plan"} {
		mustAcquire(t, s, NewLock(k, fmt.Sprintf("w%d", i), now(), time.Hour), now())
	}
	entries, err := s.InNamespace(ctx, "feature")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"feature:F-1:pause", "feature:F-2:pause", "feature:F-3:plan"}
	if got := keysOf(entries); !slices.Equal(got, want) {
		t.Errorf("InNamespace(feature) = %q, want %q", got, want)
	}
	entries, err = s.InNamespace(ctx, "db")
	if err != nil || len(entries) != 0 {
		t.Errorf("InNamespace(db) = %v, %v; want nothing", entries, err)
	}
}

// AwkwardKeys are keys that break naive key-to-name mappings: separators,
// dots, spaces, unicode, case variants, escape characters, names of a
// backend's own files, and a key long enough to need hashing.
func AwkwardKeys() []string {
	long := "src/" + strings.Repeat("deeply/nested/", 20) + "file.go"
	return []string{
		"api:GET /v1/users", "api:POST /v1/users", "docs/日本.md", "..x", "x..", ".x", "x.",
		".hidden/file", "a b/c d.txt", "trailing.lock", "%41", "%2F", "A", "b", "~", "~x",
		"-dash", "_under", "patterns", "patterns/x", ".tmp", ".guard/00", "lock",
		"task:ABC", "task:abc", "Src/A.go", "src/b.go", "x:y:z", "db:schema:users",
		"emoji/🔒.txt", "back\\slash", "tab\tkey", "new\nline", "quote\"key", "semi;colon",
		"src/**", "src/*.go", "src/[ab].go", "src/{a,b}.go", "flag:billing/*",
		long, long + "2", "src/" + strings.Repeat("Ü", 120) + "/**",
	}
}

func testAwkwardKeys(t *testing.T, s locks.Store) {
	ctx := context.Background()
	keys := AwkwardKeys()
	recs := map[string]locks.Lock{}
	for i, k := range keys {
		recs[k] = mustAcquire(t, s, NewLock(k, fmt.Sprintf("holder-%d", i), now(), time.Hour), now())
	}
	for _, k := range keys {
		mustGet(t, s, recs[k])
		if w := s.Where(k); w == "" {
			t.Errorf("Where(%q) is empty", k)
		}
	}
	entries := mustList(t, s)
	got := keysOf(entries)
	want := slices.Sorted(slices.Values(keys))
	if !slices.Equal(got, want) {
		t.Fatalf("List keys\n got %q\nwant %q", got, want)
	}
	for _, e := range entries {
		if d := DiffLock(recs[e.Key], e.Lock); d != "" {
			t.Errorf("List entry %q: %s", e.Key, d)
		}
	}
	for _, k := range keys {
		entries, err := s.Overlapping(ctx, k)
		if err != nil {
			t.Fatalf("Overlapping(%q): %v", k, err)
		}
		if !slices.Contains(keysOf(entries), k) {
			t.Errorf("Overlapping(%q) = %q misses the key's own record", k, keysOf(entries))
		}
	}
	for i, k := range keys {
		if i%2 == 0 {
			if err := s.Release(ctx, k, recs[k].Token); err != nil {
				t.Fatalf("Release(%q): %v", k, err)
			}
		}
	}
	for i, k := range keys {
		if i%2 == 0 {
			mustBeGone(t, s, k)
		} else {
			mustGet(t, s, recs[k])
		}
	}
}

// Logical keys are case distinct, and so are paths that fold apart (the
// Turkish dotless i is not i); paths and patterns that differ only in case
// or in Unicode normal form are one key in every store, whatever
// core.ignorecase says: a store may be shared by clones whose file systems
// fold them.
func testCaseDistinct(t *testing.T, s locks.Store) {
	ctx := context.Background()
	pairs := [][2]string{{"task:ABC", "task:abc"}, {"docs/ı.md", "docs/i.md"}, {"task:É", "task:e\u0301"}}
	for _, p := range pairs {
		upper := mustAcquire(t, s, NewLock(p[0], "upper", now(), time.Hour), now())
		lower := mustAcquire(t, s, NewLock(p[1], "lower", now(), time.Hour), now())
		mustGet(t, s, upper)
		mustGet(t, s, lower)
		if err := s.Release(ctx, p[0], upper.Token); err != nil {
			t.Fatalf("Release(%q): %v", p[0], err)
		}
		mustBeGone(t, s, p[0])
		mustGet(t, s, lower)
	}
	for _, p := range [][2]string{
		{"Src/A.go", "src/a.go"}, {"README.md", "readme.md"}, {"Docs/**", "docs/**"},
		{"docs/Ä.md", "docs/ä.md"}, {"Été.txt", "e\u0301te\u0301.txt"}, {"\u212Aelvin2.txt", "kelvin2.txt"},
		{"Straße/**", "STRASSE/**"},
	} {
		upper := mustAcquire(t, s, NewLock(p[0], "upper", now(), time.Hour), now())
		_, _, err := s.Acquire(ctx, NewLock(p[1], "lower", now(), time.Hour), now())
		var held *locks.HeldError
		if !errors.As(err, &held) || held.Lock.Key != p[0] || held.Lock.Holder != "upper" {
			t.Fatalf("Acquire(%q) while %q is held: %v; want *HeldError naming %q", p[1], p[0], err, p[0])
		}
		if err := s.Release(ctx, p[1], upper.Token); err != nil {
			t.Fatalf("Release(%q) of %q: %v", p[1], p[0], err)
		}
		mustBeGone(t, s, p[0])
	}
}

func isHeld(err error) bool {
	var held *locks.HeldError
	return errors.As(err, &held)
}

// raceOutcome is one racer's result.
type raceOutcome struct {
	stored locks.Lock
	prev   *locks.Lock
	err    error
}

// race runs n goroutines that call Acquire together and returns what each got.
func race(s locks.Store, n int, key string, at time.Time) []raceOutcome {
	out := make([]raceOutcome, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		go func() {
			defer wg.Done()
			rec := NewLock(key, fmt.Sprintf("racer-%d", i), at, time.Hour)
			<-start
			out[i].stored, out[i].prev, out[i].err = s.Acquire(context.Background(), rec, at)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// checkOneWinner checks that exactly one racer won and every other one was
// told the winner holds the key.
func checkOneWinner(t *testing.T, out []raceOutcome) raceOutcome {
	t.Helper()
	var winners []raceOutcome
	for _, o := range out {
		if o.err == nil {
			winners = append(winners, o)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d of %d racers won, want exactly 1", len(winners), len(out))
	}
	w := winners[0]
	for _, o := range out {
		if o.err == nil {
			continue
		}
		var held *locks.HeldError
		if !errors.As(o.err, &held) {
			t.Fatalf("losing racer: %v; want *HeldError", o.err)
		}
		if held.Lock.Token != w.stored.Token {
			t.Fatalf("losing racer saw holder %q, but %q won", held.Lock.Holder, w.stored.Holder)
		}
	}
	return w
}

func testRaceAcquire(t *testing.T, s locks.Store) {
	for round := range 5 {
		key := fmt.Sprintf("src/race-%d.go", round)
		w := checkOneWinner(t, race(s, 32, key, now()))
		if w.prev != nil {
			t.Fatalf("winner on a free key reported prev %+v", *w.prev)
		}
		mustGet(t, s, w.stored)
	}
}

func testRaceTakeover(t *testing.T, s locks.Store) {
	for round := range 5 {
		key := fmt.Sprintf("task:RACE-%d", round)
		t0 := now()
		old := mustAcquire(t, s, NewLock(key, "old", t0, time.Minute), t0)
		w := checkOneWinner(t, race(s, 32, key, t0.Add(2*time.Minute)))
		if w.prev == nil || w.prev.Token != old.Token {
			t.Fatalf("takeover winner's prev = %+v, want the expired record", w.prev)
		}
		if w.stored.Fence <= old.Fence {
			t.Fatalf("takeover fence %d, want > %d", w.stored.Fence, old.Fence)
		}
		mustGet(t, s, w.stored)
	}
}

// RunFenceLimit checks that s refuses to hand out a fence past top, the
// highest fence its format keeps, rather than wrap to 0 or 1, which an
// earlier holder used. raise sets the fence counter of key so that the
// next fence handed out for it is above fence. Run it on a fresh store.
func RunFenceLimit(t *testing.T, s locks.Store, top uint64, raise func(t *testing.T, key string, fence uint64)) {
	t.Helper()
	ctx := context.Background()
	const key = "src/fence-limit.go"
	raise(t, key, top-2)
	var last uint64
	for i, want := range []uint64{top - 1, top} {
		rec := mustAcquire(t, s, NewLock(key, fmt.Sprintf("w%d", i), now(), time.Hour), now())
		if rec.Fence != want {
			t.Fatalf("acquisition %d: fence %d, want %d", i, rec.Fence, want)
		}
		if err := s.Release(ctx, rec.Key, rec.Token); err != nil {
			t.Fatalf("acquisition %d: Release: %v", i, err)
		}
		last = rec.Fence
	}
	rec, _, err := s.Acquire(ctx, NewLock(key, "late", now(), time.Hour), now())
	if !errors.Is(err, locks.ErrFenceExhausted) {
		t.Fatalf("acquisition past fence %d: fence %d, error %v; want ErrFenceExhausted", last, rec.Fence, err)
	}
	if got, err := s.Get(ctx, key); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("after the refusal: Get = %+v, %v; want ErrNotFound", got, err)
	}
	// The refusal moved nothing: a second try is refused too.
	_, _, err = s.Acquire(ctx, NewLock(key, "later", now(), time.Hour), now())
	if !errors.Is(err, locks.ErrFenceExhausted) {
		t.Fatalf("second acquisition past fence %d: %v; want ErrFenceExhausted", last, err)
	}
}
