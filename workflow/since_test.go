package workflow

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// lockEvent is a lock_acquire of key at t that expires after ttl.
func lockEvent(worker, key string, t time.Time, ttl time.Duration) journal.Event {
	exp := t.Add(ttl)
	return journal.Event{ID: journal.NewID(), Timestamp: t, Worker: worker, WorkerType: "agent",
		Action: journal.ActionAcquire, Key: key, Fence: 1, ExpiresAt: &exp, Store: "file"}
}

// history is n hour-long locks taken ten seconds apart, starting ten
// days before now.
func history(now time.Time, n int) []journal.Event {
	evs := make([]journal.Event, n)
	for i := range evs {
		evs[i] = lockEvent("old", fmt.Sprintf("src/old/%d.go", i), now.Add(-240*time.Hour+time.Duration(i)*10*time.Second), time.Hour)
	}
	return evs
}

func readSince(t *testing.T, cfg Config, since time.Time) LogRead {
	t.Helper()
	lr, err := ReadEventsSince(context.Background(), cfg, []string{mainRef, remoteRef}, since)
	if err != nil {
		t.Fatal(err)
	}
	return lr
}

// A read from some time on decodes a bounded number of events, however
// long the history before it: the same events of the last hour, within
// one block of the cache, at 10 and at 1,000 (and 4,000) older events.
func TestReadEventsSinceBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	since := now.Add(-time.Hour)
	reads := map[int]int{}
	for _, n := range []int{10, 1000, 4000} {
		r := newRepo(t)
		cfg := readCfg(r)
		commitTo(t, r, "lockgate/workflow", history(now, n))
		var recent []journal.Event
		for i := range 5 {
			recent = append(recent, lockEvent("me", fmt.Sprintf("src/new/%d.go", i), now.Add(-time.Duration(30-i)*time.Minute), time.Hour))
		}
		commitTo(t, r, "lockgate/workflow", recent[:2])
		if lr := readSince(t, cfg, since); !lr.Complete || lr.Read != n+2 {
			t.Fatalf("%d: first read (no cache): complete %v, read %d", n, lr.Complete, lr.Read)
		}
		// Events added since the cache was written: read incrementally.
		commitTo(t, r, "lockgate/workflow", recent[2:])
		lr := readSince(t, cfg, since)
		checkSince(t, fmt.Sprint(n, " incremental"), lr, coldRead(t, r, mainRef, remoteRef), since)
		inc := lr.Read
		// The cache holds the tree: only its last blocks are decoded.
		lr = readSince(t, cfg, since)
		checkSince(t, fmt.Sprint(n, " cached"), lr, coldRead(t, r, mainRef, remoteRef), since)
		if n > blockEvents && (lr.Complete || inc > 2*blockEvents) {
			t.Fatalf("%d: read %d events then %d (complete %v), want fewer than %d", n, inc, lr.Read, lr.Complete, 2*blockEvents)
		}
		reads[n] = lr.Read
	}
	if reads[1000] > reads[10]+blockEvents || reads[4000] > reads[10]+blockEvents {
		t.Fatalf("events decoded: %v: more history read more", reads)
	}
}

// checkSince fails unless lr holds every event of all at or after since
// and at least one before it, each as all has it, sorted.
func checkSince(t *testing.T, what string, lr LogRead, all []journal.Event, since time.Time) {
	t.Helper()
	if len(lr.Events) == 0 {
		t.Fatalf("%s: no events", what)
	}
	first := lr.Events[0]
	at := len(all)
	for i, ev := range all {
		if ev.ID == first.ID {
			at = i
			break
		}
	}
	if at == len(all) || !all[at].Timestamp.Before(since) && at > 0 {
		t.Fatalf("%s: the read begins at %s (event %d of %d), not before %s", what, first.Timestamp, at, len(all), since)
	}
	sameEvents(t, what, lr.Events, all[at:])
}

// A lock taken long before since and still held then is read, with the
// events between: the blocks that hold it reach past since.
func TestReadEventsSinceLongLock(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	since := now.Add(-time.Hour)
	long := lockEvent("holder", "src/held.go", now.Add(-200*time.Hour), 300*time.Hour)
	// An earlier version's lock event names no expiry: it may hold its
	// key for ever.
	forever := journal.Event{ID: journal.NewID(), Timestamp: now.Add(-200 * time.Hour), Worker: "ancient", Action: journal.ActionAcquire, Key: "src/ancient.go"}
	for _, tc := range []struct {
		name string
		ev   journal.Event
	}{{"long ttl", long}, {"no expiry", forever}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRepo(t)
			cfg := readCfg(r)
			// History after it too: blocks that do not reach since.
			later := history(now.Add(100*time.Hour), 3*blockEvents)
			commitTo(t, r, "lockgate/workflow", append(append(history(now, 3*blockEvents), tc.ev), later...))
			commitTo(t, r, "lockgate/workflow", []journal.Event{lockEvent("me", "src/new.go", now.Add(-time.Minute), time.Hour)})
			all := coldRead(t, r, mainRef, remoteRef)
			for i := range 2 { // cold, then from the cache
				lr := readSince(t, cfg, since)
				checkSince(t, tc.name, lr, all, since)
				if !hasID(lr.Events, tc.ev.ID) || i == 1 && lr.Complete {
					t.Fatalf("%s: the lock of %s is not read (or all was: complete %v)", tc.name, tc.ev.Timestamp, lr.Complete)
				}
			}
		})
	}
}

func hasID(evs []journal.Event, id string) bool {
	for _, ev := range evs {
		if ev.ID == id {
			return true
		}
	}
	return false
}

// ReadEventsBetween reads exactly the events of [from, until), decoding
// only the blocks of the cache that hold them; a long lock before from
// is not among them.
func TestReadEventsBetween(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := newRepo(t)
	cfg := readCfg(r)
	long := lockEvent("holder", "src/held.go", now.Add(-239*time.Hour), 300*time.Hour)
	commitTo(t, r, "lockgate/workflow", append(history(now, 8*blockEvents), long))
	all := coldRead(t, r, mainRef, remoteRef)
	read(t, r, mainRef, remoteRef) // writes the cache
	for _, tc := range []struct{ from, until time.Time }{
		{all[3*blockEvents+5].Timestamp, all[4*blockEvents+7].Timestamp},
		{all[7*blockEvents].Timestamp, time.Time{}},
		{time.Time{}, all[blockEvents].Timestamp},
		{all[100].Timestamp, all[50].Timestamp},
	} {
		lr, err := ReadEventsBetween(context.Background(), cfg, []string{mainRef, remoteRef}, tc.from, tc.until)
		if err != nil {
			t.Fatal(err)
		}
		var want []journal.Event
		for _, ev := range all {
			if !ev.Timestamp.Before(tc.from) && (tc.until.IsZero() || ev.Timestamp.Before(tc.until)) {
				want = append(want, ev)
			}
		}
		if len(want) == 0 {
			want = []journal.Event{}
		}
		if lr.Events == nil {
			lr.Events = []journal.Event{}
		}
		sameEvents(t, fmt.Sprint(tc.from, "..", tc.until), lr.Events, want)
		if lr.Read > len(want)+2*blockEvents {
			t.Fatalf("%v..%v: %d events decoded for %d", tc.from, tc.until, lr.Read, len(want))
		}
	}
}

// idAt is an id as journal.NewID makes one at t: the time in unix
// nanoseconds, then 16 hex digits.
func idAt(t time.Time, n int) string { return fmt.Sprintf("%016x%016x", t.UnixNano(), n) }

// A clone with no events cache reads every event that bears on the
// locks held at since, whatever its file name says: an id's time is
// when its event was planned, not when its grant began (a lock acquire
// --wait is granted long after) nor until when it holds (a take of a long
// TTL, an earlier version's take with no expiry, a lock renewed for
// days). Foreign ids, hashed names and ids of implausible times are read
// too. The read is the same from the cache.
func TestReadEventsSinceNamesDoNotDate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	since := now.Add(-time.Hour)
	var evs []journal.Event
	for i, ev := range history(now, 600) {
		ev.ID = idAt(ev.Timestamp, i)
		evs = append(evs, ev)
	}
	dated := func(worker, action, key string, planned, at time.Time, ttl time.Duration, n int) journal.Event {
		ev := lockEvent(worker, key, at, ttl)
		ev.ID, ev.Action = idAt(planned, n), action
		if ttl == 0 {
			ev.ExpiresAt = nil
		}
		return ev
	}
	silent := dated("human", journal.ActionAcquire, "src/silent.go", now.Add(-4*time.Hour), now.Add(-4*time.Hour), 8*time.Hour, 1)
	waited := dated("patient", journal.ActionAcquire, "src/waited.go", now.Add(-3*time.Hour), now.Add(-30*time.Minute), time.Hour, 2)
	forever := dated("ancient", journal.ActionAcquire, "src/ancient.go", now.Add(-216*time.Hour), now.Add(-216*time.Hour), 0, 3)
	evs = append(evs, silent, waited, forever)
	// A lock taken five days back and renewed every half hour since.
	for i, at := 0, now.Add(-120*time.Hour); at.Before(now); i, at = i+1, at.Add(30*time.Minute) {
		action := journal.ActionRefresh
		if i == 0 {
			action = journal.ActionAcquire
		}
		evs = append(evs, dated("keeper", action, "src/kept.go", at, at, time.Hour, 100+i))
	}
	foreign := []journal.Event{
		{ID: "ci-run-7", Timestamp: now.Add(-20 * time.Minute), Worker: "ci", Action: journal.ActionAcquire, Key: "src/ci.go"},
		{ID: "a name with spaces", Timestamp: now.Add(-15 * time.Minute), Worker: "ci", Action: journal.ActionRelease, Key: "src/ci.go"},
		{ID: idAt(time.Unix(0, 0), 9), Timestamp: now.Add(-10 * time.Minute), Worker: "odd", Action: journal.ActionClaim},
		{ID: "ffffffffffffffff0000000000000009", Timestamp: now.Add(-5 * time.Minute), Worker: "odd", Action: journal.ActionDone},
	}
	evs = append(evs, foreign...)
	r := newRepo(t)
	cfg := readCfg(r)
	commitTo(t, r, "lockgate/workflow", evs)
	all := coldRead(t, r, mainRef, remoteRef)
	var bearing []journal.Event
	for i := range all {
		if at, ok := reach(&all[i]); !ok || !at.Before(since) || !all[i].Timestamp.Before(since) {
			bearing = append(bearing, all[i])
		}
	}
	for _, want := range append([]journal.Event{silent, waited, forever}, foreign...) {
		if !hasID(bearing, want.ID) {
			t.Fatalf("event %s does not bear on since: the test is wrong", want.ID)
		}
	}
	for _, from := range []string{"no cache", "cache"} {
		lr := readSince(t, cfg, since)
		got := map[string]journal.Event{}
		for _, ev := range lr.Events {
			got[ev.ID] = ev
		}
		var missed []string
		for _, want := range bearing {
			if ev, ok := got[want.ID]; !ok || !reflect.DeepEqual(ev, want) {
				missed = append(missed, fmt.Sprintf("%s (%s %s at %s)", want.ID, want.Action, want.Key, want.Timestamp))
			}
		}
		if len(missed) > 0 {
			t.Fatalf("%s: events that bear on %s not read as they are:\n%s", from, since, strings.Join(missed, "\n"))
		}
		checkSince(t, from, lr, all, since)
	}
}
