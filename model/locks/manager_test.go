package locks_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
	"github.com/lockgate/lockgate/model/locks/journal"
)

func newManager(t *testing.T) (*locks.Manager, *journal.Journal) {
	t.Helper()
	dir := t.TempDir()
	s, err := filestore.Open(filepath.Join(dir, "locks"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	j := journal.Open(filepath.Join(dir, "events.jsonl"))
	return &locks.Manager{Store: s, Events: j, Host: "h", PID: 1}, j
}

var (
	alice = locks.Owner{Holder: "alice", HolderType: "human", Session: "alice"}
	bob   = locks.Owner{Holder: "bob", HolderType: "agent", Session: "bob"}
)

func acquire(m *locks.Manager, who locks.Owner, ttl time.Duration, keys ...string) error {
	_, err := m.Acquire(context.Background(), locks.Request{Keys: keys, Owner: who, TTL: ttl})
	return err
}

func TestManager(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, m *locks.Manager)
	}{
		{"all or nothing rolls back what it took", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, bob, time.Hour, "c.py"); err != nil {
				t.Fatal(err)
			}
			err := acquire(m, alice, time.Hour, "a.py", "b.py", "c.py")
			var held *locks.HeldError
			if !errors.As(err, &held) || held.Lock.Holder != "bob" {
				t.Fatalf("err = %v, want held by bob", err)
			}
			for _, k := range []string{"a.py", "b.py"} {
				if _, err := m.Store.Get(ctx, k); !errors.Is(err, locks.ErrNotFound) {
					t.Errorf("%s left behind after a failed multi-key acquire: %v", k, err)
				}
			}
		}},
		{"a pattern is refused over a held path and the reverse", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, bob, time.Hour, "src/api/users.py"); err != nil {
				t.Fatal(err)
			}
			if err := acquire(m, alice, time.Hour, "src/**"); err == nil {
				t.Fatal("src/** granted over bob's src/api/users.py")
			}
			if err := acquire(m, bob, time.Hour, "docs/**"); err != nil {
				t.Fatal(err)
			}
			if err := acquire(m, alice, time.Hour, "docs/x.md"); err == nil {
				t.Fatal("docs/x.md granted under bob's docs/**")
			}
			if _, err := m.Store.Get(ctx, "src/**"); !errors.Is(err, locks.ErrNotFound) {
				t.Fatalf("refused pattern left a record: %v", err)
			}
		}},
		{"own overlapping locks do not conflict", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, alice, time.Hour, "src/a.py", "src/**"); err != nil {
				t.Fatal(err)
			}
		}},
		{"acquiring a held key of one's own renews it", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, alice, time.Minute, "a.py"); err != nil {
				t.Fatal(err)
			}
			first, _ := m.Store.Get(ctx, "a.py")
			res, err := m.Acquire(ctx, locks.Request{Keys: []string{"a.py"}, Owner: alice, TTL: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if !res[0].Renewed || res[0].Lock.Token != first.Token || !res[0].Lock.ExpiresAt.After(first.ExpiresAt) {
				t.Fatalf("renewal = %+v, first = %+v", res[0], first)
			}
		}},
		{"a late release never removes a successor's lock", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, bob, time.Millisecond, "a.py"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Millisecond)
			res, err := m.Acquire(ctx, locks.Request{Keys: []string{"a.py"}, Owner: alice, TTL: time.Hour})
			if err != nil || res[0].TookOver == nil {
				t.Fatalf("takeover: %v %+v", err, res)
			}
			_, err = m.Release(ctx, []string{"a.py"}, bob, false)
			var notOwner *locks.NotOwnerError
			if !errors.As(err, &notOwner) {
				t.Fatalf("bob's late release: %v, want NotOwnerError", err)
			}
			if err := m.Store.Release(ctx, "a.py", "stale-token"); !errors.Is(err, locks.ErrTokenMismatch) {
				t.Fatalf("release by a stale token: %v", err)
			}
			cur, err := m.Store.Get(ctx, "a.py")
			if err != nil || cur.Holder != "alice" {
				t.Fatalf("alice's lock gone: %v %+v", err, cur)
			}
		}},
		{"forced release returns the removed record", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, bob, time.Hour, "a.py"); err != nil {
				t.Fatal(err)
			}
			res, err := m.Release(ctx, []string{"a.py", "nothing.py"}, alice, true)
			if err != nil || len(res.Forced) != 1 || res.Forced[0].Holder != "bob" || len(res.Missing) != 1 {
				t.Fatalf("forced release: %v %+v", err, res)
			}
		}},
		{"wait gets the lock soon after its release", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, bob, time.Hour, "a.py"); err != nil {
				t.Fatal(err)
			}
			// The release is joined before the case ends: the wait may be
			// granted while the release still writes its event.
			released := make(chan error, 1)
			go func() {
				time.Sleep(50 * time.Millisecond)
				_, err := m.Release(ctx, []string{"a.py"}, bob, false)
				released <- err
			}()
			if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"a.py"}, Owner: alice, TTL: time.Hour, Wait: 10 * time.Second}); err != nil {
				t.Fatal(err)
			}
			if err := <-released; err != nil {
				t.Fatalf("release: %v", err)
			}
		}},
		{"wait runs out with a TimeoutError", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, bob, time.Hour, "a.py"); err != nil {
				t.Fatal(err)
			}
			_, err := m.Acquire(ctx, locks.Request{Keys: []string{"a.py"}, Owner: alice, TTL: time.Hour, Wait: 30 * time.Millisecond})
			var to *locks.TimeoutError
			if !errors.As(err, &to) || to.Held.Lock.Holder != "bob" {
				t.Fatalf("err = %v, want TimeoutError naming bob", err)
			}
		}},
		{"check reports free, mine and held", func(t *testing.T, m *locks.Manager) {
			if err := acquire(m, bob, time.Hour, "lib/**"); err != nil {
				t.Fatal(err)
			}
			if err := acquire(m, alice, time.Hour, "a.py"); err != nil {
				t.Fatal(err)
			}
			sts, err := m.Check(ctx, []string{"a.py", "lib/x.go", "free.txt"}, alice)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]locks.KeyState{"a.py": "mine", "lib/x.go": "held", "free.txt": "free"}
			for _, s := range sts {
				if want[s.Key] != s.State {
					t.Errorf("%s: state %s, want %s", s.Key, s.State, want[s.Key])
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, _ := newManager(t)
			tt.run(t, m)
		})
	}
}

func TestManagerJournal(t *testing.T) {
	t.Parallel()
	m, j := newManager(t)
	ctx := context.Background()
	if err := acquire(m, alice, time.Hour, "activity:WI-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Refresh(ctx, []string{"activity:WI-1"}, alice, time.Hour, 0, true); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Release(ctx, []string{"activity:WI-1"}, alice, false); err != nil {
		t.Fatal(err)
	}
	evs, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, ev := range evs {
		actions = append(actions, ev.Action)
		if ev.ActivityID != "WI-1" || ev.Worker != "alice" || ev.WorkerType != "human" {
			t.Errorf("event %+v: want activity WI-1 by alice (human)", ev)
		}
	}
	want := []string{journal.ActionAcquire, journal.ActionRefresh, journal.ActionRelease}
	if len(actions) != len(want) {
		t.Fatalf("actions %v, want %v", actions, want)
	}
	for i := range want {
		if actions[i] != want[i] {
			t.Fatalf("actions %v, want %v", actions, want)
		}
	}
}

// A renewal never shortens a lock unless the caller asks for its TTL
// exactly; it always lengthens one.
func TestRenewNeverShortens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	m, _ := newManager(t)
	m.Now = func() time.Time { return now }
	expiry := func(req locks.Request) time.Time {
		t.Helper()
		req.Keys, req.Owner = []string{"a.py"}, alice
		res, err := m.Acquire(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Lock.ExpiresAt
	}
	refreshed := func(ttl time.Duration, exact bool) time.Time {
		t.Helper()
		ls, err := m.Refresh(ctx, []string{"a.py"}, alice, ttl, 0, exact)
		if err != nil {
			t.Fatal(err)
		}
		return ls[0].ExpiresAt
	}
	for _, c := range []struct {
		name string
		got  func() time.Time
		want time.Duration
	}{
		{"take for 8h", func() time.Time { return expiry(locks.Request{TTL: 8 * time.Hour}) }, 8 * time.Hour},
		{"renew for 1h keeps 8h", func() time.Time { return expiry(locks.Request{TTL: time.Hour}) }, 8 * time.Hour},
		{"refresh for 1h keeps 8h", func() time.Time { return refreshed(time.Hour, false) }, 8 * time.Hour},
		{"renew for 9h lengthens", func() time.Time { return expiry(locks.Request{TTL: 9 * time.Hour}) }, 9 * time.Hour},
		{"exact renew for 1h shortens", func() time.Time { return expiry(locks.Request{TTL: time.Hour, ExactTTL: true}) }, time.Hour},
		{"exact refresh for 30m shortens", func() time.Time { return refreshed(30*time.Minute, true) }, 30 * time.Minute},
	} {
		if got := c.got(); !got.Equal(now.Add(c.want)) {
			t.Errorf("%s: expires %s, want %s", c.name, got, now.Add(c.want))
		}
	}
}

// A failed all-or-nothing acquisition leaves a lock it renewed as it was.
func TestFailedAcquireRestoresRenewed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, _ := newManager(t)
	if err := acquire(m, alice, 8*time.Hour, "a.py"); err != nil {
		t.Fatal(err)
	}
	before, err := m.Store.Get(ctx, "a.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := acquire(m, bob, time.Hour, "b.py"); err != nil {
		t.Fatal(err)
	}
	_, err = m.Acquire(ctx, locks.Request{Keys: []string{"a.py", "b.py"}, Owner: alice, TTL: time.Minute, ExactTTL: true, Reason: "new"})
	if err == nil {
		t.Fatal("acquired b.py held by bob")
	}
	after, err := m.Store.Get(ctx, "a.py")
	if err != nil {
		t.Fatal(err)
	}
	if !after.ExpiresAt.Equal(before.ExpiresAt) || after.Reason != before.Reason {
		t.Errorf("a.py after a failed acquisition: expires %s reason %q, want %s %q", after.ExpiresAt, after.Reason, before.ExpiresAt, before.Reason)
	}
}

// KeepHeld renews a lock the owner holds without replacing its reason or
// task; a fresh lock gets the request's.
func TestKeepHeldKeepsReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, _ := newManager(t)
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"a.py"}, Owner: alice, TTL: time.Hour, Reason: "mine", TaskID: "T-0"}); err != nil {
		t.Fatal(err)
	}
	res, err := m.Acquire(ctx, locks.Request{Keys: []string{"a.py", "b.py"}, Owner: alice, TTL: time.Hour, Reason: "claim", TaskID: "WP-1", KeepHeld: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := res[0].Lock; !res[0].Renewed || l.Reason != "mine" || l.TaskID != "T-0" {
		t.Errorf("renewed a.py: renewed %v reason %q task %q, want mine T-0", res[0].Renewed, l.Reason, l.TaskID)
	}
	if l := res[1].Lock; l.Reason != "claim" || l.TaskID != "WP-1" {
		t.Errorf("fresh b.py: reason %q task %q, want claim WP-1", l.Reason, l.TaskID)
	}
}

// Every lock event names the grant it is about: the fence, and for a take,
// renewal, refresh or takeover the expiry from then on, so that a clone can
// rebuild from the log when each grant was live.
func TestEventsNameTheGrant(t *testing.T) {
	t.Parallel()
	m, j := newManager(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	m.Now = func() time.Time { return now }
	step := func(d time.Duration) { now = now.Add(d) }
	if err := acquire(m, alice, time.Minute, "a.go"); err != nil {
		t.Fatal(err)
	}
	step(10 * time.Second)
	if err := acquire(m, alice, time.Hour, "a.go"); err != nil { // a renewal
		t.Fatal(err)
	}
	step(time.Second)
	if _, err := m.Refresh(ctx, []string{"a.go"}, alice, 2*time.Hour, 0, true); err != nil {
		t.Fatal(err)
	}
	step(3 * time.Hour) // expired: bob takes it over
	if err := acquire(m, bob, time.Minute, "a.go"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Release(ctx, []string{"a.go"}, bob, false); err != nil {
		t.Fatal(err)
	}
	if err := acquire(m, bob, time.Minute, "b.go"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Clear(ctx, "b.go", alice); err != nil {
		t.Fatal(err)
	}
	evs, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	type want struct {
		action string
		fence  uint64
		exp    time.Time // zero: none
	}
	f1 := evs[0].Fence
	wants := []want{
		{journal.ActionAcquire, f1, start.Add(time.Minute)},
		{journal.ActionRefresh, f1, start.Add(10*time.Second + time.Hour)},
		{journal.ActionRefresh, f1, start.Add(11*time.Second + 2*time.Hour)},
		{journal.ActionTakeover, 0, start.Add(11*time.Second + 3*time.Hour + time.Minute)},
		{journal.ActionRelease, 0, time.Time{}},
		{journal.ActionAcquire, 0, start.Add(11*time.Second + 3*time.Hour + time.Minute)},
		{journal.ActionClear, 0, time.Time{}},
	}
	if len(evs) != len(wants) {
		t.Fatalf("%d events, want %d: %+v", len(evs), len(wants), evs)
	}
	if f1 == 0 {
		t.Fatalf("the first take has no fence: %+v", evs[0])
	}
	if evs[3].Fence <= f1 || evs[4].Fence != evs[3].Fence || evs[6].Fence != evs[5].Fence || evs[5].Fence == 0 {
		t.Errorf("fences %d %d %d %d %d: a takeover gets a higher fence; a release or clear names the one removed",
			f1, evs[3].Fence, evs[4].Fence, evs[5].Fence, evs[6].Fence)
	}
	for i, w := range wants {
		ev := evs[i]
		if ev.Action != w.action || (w.fence != 0 && ev.Fence != w.fence) {
			t.Errorf("event %d: %s fence %d, want %s fence %d", i, ev.Action, ev.Fence, w.action, w.fence)
		}
		switch {
		case w.exp.IsZero() && ev.ExpiresAt != nil:
			t.Errorf("event %d (%s): expires_at %v, want none", i, ev.Action, ev.ExpiresAt)
		case !w.exp.IsZero() && (ev.ExpiresAt == nil || !ev.ExpiresAt.Equal(w.exp)):
			t.Errorf("event %d (%s): expires_at %v, want %v", i, ev.Action, ev.ExpiresAt, w.exp)
		}
	}
}

// An acquisition that waited is logged at the grant, not when it began
// waiting: its event comes after the release that let it in, and carries
// the time the record was created. Every event of a change carries the
// time of the change, read when the store made it.
func TestWaitedAcquisitionLoggedAtGrant(t *testing.T) {
	t.Parallel()
	m, j := newManager(t)
	st := newSignalStore(t)
	m.Store = st
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	m.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	step := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	if err := acquire(m, alice, time.Hour, "z.py"); err != nil {
		t.Fatal(err)
	}
	step(time.Second)
	got := make(chan []locks.Result, 1)
	errc := make(chan error, 1)
	go func() {
		res, err := m.Acquire(ctx, locks.Request{Keys: []string{"z.py"}, Owner: bob, TTL: time.Hour, Action: "lock", Wait: time.Minute,
			Events: []journal.Event{{Worker: bob.Holder, Action: journal.ActionClaimedActivity, Key: "activity:WI-9"}}})
		got <- res
		errc <- err
	}()
	// bob waits: let him try at least once before alice lets go.
	for st.attempts.Load() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	step(6 * time.Second)
	if _, err := m.Release(ctx, []string{"z.py"}, alice, false); err != nil {
		t.Fatal(err)
	}
	step(time.Second) // bob's grant comes after the release, on the clock too
	res := <-got
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	evs, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var rel, acq, extra *journal.Event
	for i := range evs {
		ev := &evs[i]
		switch {
		case ev.Action == journal.ActionRelease:
			rel = ev
		case ev.Action == journal.ActionAcquire && ev.Worker == "bob":
			acq = ev
		case ev.Action == journal.ActionClaimedActivity:
			extra = ev
		}
	}
	if rel == nil || acq == nil || extra == nil {
		t.Fatalf("events %+v: want alice's release, bob's acquisition and his claim", evs)
	}
	if acq.Timestamp.Before(rel.Timestamp) {
		t.Errorf("bob's acquisition logged at %s, before the release at %s that let him in", acq.Timestamp, rel.Timestamp)
	}
	if !acq.Timestamp.Equal(res[0].Lock.CreatedAt) {
		t.Errorf("bob's acquisition logged at %s, his lock created at %s", acq.Timestamp, res[0].Lock.CreatedAt)
	}
	if !extra.Timestamp.Equal(acq.Timestamp) {
		t.Errorf("the claim recorded with the acquisition at %s, the grant at %s", extra.Timestamp, acq.Timestamp)
	}
}

// vanishing is a store on which key's lock is removed by another just
// before its holder releases it: a claim of another that took it over
// after it expired, then gave it back when the rest of its claim failed.
type vanishing struct {
	locks.Store
	key string
}

func (v vanishing) Release(ctx context.Context, key, token string) error {
	if key == v.key {
		if _, err := v.Store.Remove(ctx, key); err != nil {
			return err
		}
	}
	return v.Store.Release(ctx, key, token)
}

// A conclusion whose record was rewritten is made even when a lock it
// gives back went away meanwhile: that lock is missing, the others are
// released, and the events name what was done.
func TestConcludeLockGoneMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	if err := acquire(m, alice, time.Hour, "task:A", "a.go", "b.go"); err != nil {
		t.Fatal(err)
	}
	gone := &locks.Manager{Store: vanishing{m.Store, "a.go"}, Events: j, Host: m.Host, PID: m.PID}
	rec, res, err := gone.Conclude(ctx, locks.Conclusion{Key: "task:A", Owner: alice, Release: []string{"a.go", "b.go"},
		Events: []journal.Event{{Worker: "alice", Action: journal.ActionDone, Key: "task:A"}},
		Apply:  func(l *locks.Lock) { l.Action, l.ExpiresAt = "done", locks.Never }})
	if err != nil {
		t.Fatalf("conclude: %v", err)
	}
	if rec.Action != "done" || len(res.Removed) != 1 || res.Removed[0].Key != "b.go" || len(res.Missing) != 1 || res.Missing[0] != "a.go" {
		t.Fatalf("conclude = %+v, %+v: want done, b.go released, a.go missing", rec, res)
	}
	if _, err := m.Store.Get(ctx, "b.go"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("b.go: %v, want released", err)
	}
	got := actions(t, j)
	want := []string{"lock_acquire a.go", "lock_acquire b.go", "lock_acquire task:A", "completed_package task:A", "lock_release b.go"}
	if !slices.Equal(got, want) {
		t.Fatalf("journal %v, want %v", got, want)
	}
}

// A release of several locks, one of which another released just before
// (on merge, when its holder's work landed): the others are released,
// that one is missing, and the log names what was done. The same for
// the release on merge racing its holder's own release.
func TestReleaseLockGoneMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	if err := acquire(m, alice, time.Hour, "a.go", "b.go"); err != nil {
		t.Fatal(err)
	}
	gone := &locks.Manager{Store: vanishing{m.Store, "a.go"}, Events: j, Host: m.Host, PID: m.PID}
	res, err := gone.Release(ctx, []string{"a.go", "b.go"}, alice, false)
	if err != nil {
		t.Fatalf("release: %v", err)
	}
	if len(res.Removed) != 1 || res.Removed[0].Key != "b.go" || len(res.Missing) != 1 || res.Missing[0] != "a.go" {
		t.Fatalf("release = %+v: want b.go released, a.go missing", res)
	}
	if _, err := m.Store.Get(ctx, "b.go"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("b.go: %v, want released", err)
	}
	want := []string{"lock_acquire a.go", "lock_acquire b.go", "lock_release b.go"}
	if got := actions(t, j); !slices.Equal(got, want) {
		t.Fatalf("journal %v, want %v", got, want)
	}

	if err := acquire(m, alice, time.Hour, "c.go", "d.go"); err != nil {
		t.Fatal(err)
	}
	var landed []locks.Landed
	for _, k := range []string{"c.go", "d.go"} {
		l, err := m.Store.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		landed = append(landed, locks.Landed{Key: k, Fence: l.Fence, Commit: "c0ffee", Details: "released on merge"})
	}
	gone = &locks.Manager{Store: vanishing{m.Store, "c.go"}, Events: j, Host: m.Host, PID: m.PID}
	res, err = gone.ReleaseLanded(ctx, landed, bob)
	if err != nil {
		t.Fatalf("release on merge: %v", err)
	}
	if len(res.Removed) != 1 || res.Removed[0].Key != "d.go" || len(res.Missing) != 1 || res.Missing[0] != "c.go" {
		t.Fatalf("release on merge = %+v: want d.go released, c.go missing", res)
	}
}

// A conclusion whose claimer let one of its locks lapse, and another took
// it over, is still made: that lock is another's now, left alone and
// reported missing, the rest given back.
func TestConcludeLockTakenByAnother(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	m.Now = func() time.Time { return now }
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:A"}, Owner: alice, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if err := acquire(m, alice, time.Minute, "a.go", "b.go"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute) // a.go and b.go lapsed; bob takes a.go over
	if err := acquire(m, bob, time.Hour, "a.go"); err != nil {
		t.Fatal(err)
	}
	_, res, err := m.Conclude(ctx, locks.Conclusion{Key: "task:A", Owner: alice, Release: []string{"a.go", "b.go"},
		Events: []journal.Event{{Worker: "alice", Action: journal.ActionDone, Key: "task:A"}},
		Apply:  func(l *locks.Lock) { l.Action, l.ExpiresAt = "done", locks.Never }})
	if err != nil {
		t.Fatalf("conclude: %v", err)
	}
	if len(res.Removed) != 1 || res.Removed[0].Key != "b.go" || len(res.Missing) != 1 || res.Missing[0] != "a.go" {
		t.Fatalf("conclude = %+v: want b.go released, a.go (bob's) left alone", res)
	}
	if l, err := m.Store.Get(ctx, "a.go"); err != nil || l.Holder != "bob" {
		t.Fatalf("a.go: %+v %v, want bob's", l, err)
	}
	_ = j
}

// A failed all-or-nothing acquisition on a store without transactions that
// took over an expired lock on the way logs it: the expired record is gone
// from the store and its key's fence has moved on, so the log says who
// removed it (a takeover) and that the key was given back (a release).
func TestFailedAcquireLogsUndoneTakeover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m, j := newManager(t)
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	m.Now = func() time.Time { return now }
	carol := locks.Owner{Holder: "carol", HolderType: "agent", Session: "carol"}
	if err := acquire(m, carol, time.Minute, "a.py"); err != nil {
		t.Fatal(err)
	}
	if err := acquire(m, bob, time.Hour, "b.py"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute) // carol's lock has expired, bob's has not
	if err := acquire(m, alice, time.Hour, "a.py", "b.py"); err == nil {
		t.Fatal("acquired b.py held by bob")
	}
	if l, err := m.Store.Get(ctx, "a.py"); err == nil {
		t.Fatalf("a.py after the failed acquisition: %+v, want no record", l)
	}
	evs, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		if ev.Key == "a.py" {
			got = append(got, ev.Action+" "+ev.Worker)
		}
	}
	want := []string{"lock_acquire carol", "lock_takeover alice", "lock_release alice"}
	if !slices.Equal(got, want) {
		t.Errorf("events of a.py: %q, want %q", got, want)
	}
}
