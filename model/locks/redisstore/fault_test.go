package redisstore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/scope"
)

// quickly is the bound on reporting a dead or hung server: the default
// timeouts are 2s.
const quickly = 3 * time.Second

// checkUnavailable runs every operation against a server that cannot
// answer and wants each to fail with a *locks.UnavailableError of one of
// reasons, within quickly.
func checkUnavailable(t *testing.T, s *Store, rec locks.Lock, reasons ...string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	// In parallel: each operation must be bounded on its own, and a hung
	// server would otherwise cost 2s per operation in a row.
	var wg sync.WaitGroup
	defer wg.Wait()
	one := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			check(t, name, f, reasons)
		}()
	}
	one("Acquire", func() error {
		_, _, err := s.Acquire(ctx, locktest.NewLock("src/new.go", "bob", now, time.Hour), now)
		return err
	})
	one("Release", func() error { return s.Release(ctx, rec.Key, rec.Token) })
	one("Update", func() error { _, err := s.Update(ctx, rec); return err })
	one("Remove", func() error { _, err := s.Remove(ctx, rec.Key); return err })
	one("Get", func() error { _, err := s.Get(ctx, rec.Key); return err })
	one("List", func() error { _, err := s.List(ctx); return err })
	one("Overlapping", func() error { _, err := s.Overlapping(ctx, "src/**"); return err })
	one("Covering", func() error { _, err := s.Covering(ctx, []string{"src/a.go"}); return err })
	one("InNamespace", func() error { _, err := s.InNamespace(ctx, "task"); return err })
	one("History", func() error { _, err := s.History(ctx, rec.Session); return err })
	one("WaitRelease", func() error { _, err := s.WaitRelease(ctx, rec.Key); return err })
	one("Restore", func() error {
		_, err := s.Restore(ctx, rec.Session, func(context.Context, RestoreRequest) error { return nil })
		return err
	})
}

func check(t *testing.T, name string, f func() error, reasons []string) {
	start := time.Now()
	err := f()
	took := time.Since(start)
	var u *locks.UnavailableError
	if !errors.As(err, &u) {
		t.Errorf("%s: %v; want *locks.UnavailableError", name, err)
		return
	}
	kind, reason := Classify(err)
	if kind != KindUnavailable || !slices.Contains(reasons, reason) {
		t.Errorf("%s: Classify = %s/%q, want unavailable/%q (%v)", name, kind, reason, reasons, err)
	}
	if took > quickly {
		t.Errorf("%s took %s to fail, want < %s", name, took, quickly)
	}
	t.Logf("%s: %v (%s)", name, err, took.Round(time.Millisecond))
}

// waitUp polls until the store answers again (the client's pool holds back
// dials for a moment after failed ones).
func waitUp(t *testing.T, s *Store) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := s.Get(context.Background(), "anything")
		if errors.Is(err, locks.ErrNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("store still unavailable: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Redis stopped in the middle of a run: every operation fails fast as
// unavailable, a new Open says "connection refused"; after a restart the
// same Store works again.
func TestRedisStopped(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{})
	rec := mustAcquire(t, s, "task:T-1")
	srv.Stop()
	checkUnavailable(t, s, rec, ReasonRefused, ReasonLost)
	start := time.Now()
	_, err := Open(context.Background(), srv.URL(), Options{})
	if kind, reason := Classify(err); kind != KindUnavailable || reason != ReasonRefused || time.Since(start) > quickly {
		t.Fatalf("Open of a stopped server = %v (%s/%s after %s); want unavailable/connection refused, fast", err, kind, reason, time.Since(start))
	}
	srv.Restart()
	waitUp(t, s)
	// Persistence is off: the restart forgot the lock.
	if _, err := s.Get(context.Background(), rec.Key); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Get after a restart without persistence: %v; want ErrNotFound", err)
	}
	mustAcquire(t, s, rec.Key)
}

// A hung server (SIGSTOP) accepts connections but answers nothing: every
// operation fails with "timeout" within the operation timeout.
func TestRedisHung(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{})
	rec := mustAcquire(t, s, "task:T-1")
	srv.Pause()
	checkUnavailable(t, s, rec, ReasonTimeout)
	srv.Resume()
	waitUp(t, s)
	// The writes that timed out were in the server's socket buffer and may
	// have run when it resumed (Release and Remove of task:T-1 among them):
	// a timeout says "unknown", never "not done". The store works again.
	mustAcquire(t, s, "task:T-2")
}

func TestShorterTimeout(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{OpTimeout: 100 * time.Millisecond})
	srv.Pause()
	defer srv.Resume()
	start := time.Now()
	_, err := s.Get(context.Background(), "x")
	if _, reason := Classify(err); reason != ReasonTimeout || time.Since(start) > time.Second {
		t.Fatalf("Get with a 100ms timeout on a hung server: %v after %s", err, time.Since(start))
	}
	// The caller's own deadline is the caller's error, not the store's.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = s.Get(ctx, "x")
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(*locks.UnavailableError)) {
		t.Fatalf("Get past the caller's deadline: %v; want context.DeadlineExceeded", err)
	}
}

func TestAuthFailure(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{Password: "s3cret"})
	ctx := context.Background()
	if _, err := Open(ctx, srv.URL(), Options{}); err != nil {
		t.Fatalf("Open with the password: %v", err)
	}
	for _, u := range []string{
		"redis://127.0.0.1:" + strconv.Itoa(srv.Port()) + "/0",
		"redis://:wrong@127.0.0.1:" + strconv.Itoa(srv.Port()) + "/0",
	} {
		_, err := Open(ctx, u, Options{})
		if kind, reason := Classify(err); kind != KindUnavailable || reason != ReasonAuth {
			t.Errorf("Open(%s) = %v (%s/%s); want unavailable/authentication failed", u, err, kind, reason)
		}
		if err != nil && strings.Contains(err.Error(), "wrong") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

func TestClosedStore(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s, err := Open(context.Background(), srv.URL(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), "x"); !errors.As(err, new(*locks.UnavailableError)) {
		t.Fatalf("Get after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// Restore after a restart, with Redis persisting its data (appendonly yes,
// appendfsync always): the session's locks come back; invalid and lost
// entries are skipped with a reason each and dropped from the history.
func TestRestoreAfterRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{Persistent: true})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{HistoryTTL: time.Hour})
	c := raw(t, srv.URL())
	m := &locks.Manager{Store: s, Host: "h1", PID: 1}
	alice := locks.Owner{Holder: "alice", HolderType: scope.WorkerAgent, Session: "sess-a"}
	bob := locks.Owner{Holder: "bob", HolderType: scope.WorkerAgent, Session: "sess-b"}
	acquire := func(o locks.Owner, key string, ttl time.Duration) locks.Lock {
		t.Helper()
		res, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: o, TTL: ttl, Reason: "work", TaskID: "TASK-1"})
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Lock
	}
	live := acquire(alice, "task:TASK-1", time.Hour)
	short := acquire(alice, "src/short.go", 300*time.Millisecond)
	lost := acquire(alice, "src/lost.go", 100*time.Millisecond)
	acquire(alice, "src/released.go", time.Hour)
	if _, err := m.Release(ctx, []string{"src/released.go"}, alice, false); err != nil {
		t.Fatal(err)
	}
	// A key the repository's rules refuse, acquired behind the Manager's back.
	now := time.Now()
	odd := locktest.NewLock("nonsense:thing", "alice", now, 300*time.Millisecond)
	odd.Session = alice.Session
	if _, _, err := s.Acquire(ctx, odd, now); err != nil {
		t.Fatal(err)
	}
	// And a history entry that is not a record at all.
	c.HSet(ctx, s.histKey(alice.Session), "src/garbage.go", "not a record")

	time.Sleep(150 * time.Millisecond)
	acquire(bob, "src/lost.go", time.Hour) // takes over alice's expired lock
	srv.Stop()
	checkUnavailable(t, s, live, ReasonRefused, ReasonLost)
	time.Sleep(200 * time.Millisecond) // src/short.go expires while Redis is down
	srv.Restart()
	waitUp(t, s)

	hist, err := s.History(ctx, alice.Session)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range hist {
		keys = append(keys, e.Key)
	}
	if want := []string{"nonsense:thing", "src/garbage.go", "src/lost.go", "src/short.go", "task:TASK-1"}; !slices.Equal(keys, want) {
		t.Fatalf("history after the restart = %q, want %q", keys, want)
	}
	canon := func(k string) (string, error) { return lockkey.Canonical(k, nil) }
	res, err := s.Restore(ctx, alice.Session, AcquireWith(m, alice, canon))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"src/short.go", "task:TASK-1"}; !slices.Equal(res.Restored, want) {
		t.Fatalf("restored %q, want %q (skipped %+v)", res.Restored, want, res.Skipped)
	}
	var skipped []string
	for _, sk := range res.Skipped {
		skipped = append(skipped, sk.Key)
		t.Logf("skipped %s: %s", sk.Key, sk.Reason)
	}
	if want := []string{"nonsense:thing", "src/garbage.go", "src/lost.go"}; !slices.Equal(skipped, want) {
		t.Fatalf("skipped %q, want %q", skipped, want)
	}
	if r := res.Skipped[2].Reason; !strings.Contains(r, "held by bob") {
		t.Errorf("reason for the lost lock: %q", r)
	}
	// The live lock was renewed: same token and fence. The expired one was
	// acquired anew for its original TTL, with a higher fence.
	got, err := s.Get(ctx, live.Key)
	if err != nil || got.Token != live.Token || got.Fence != live.Fence || got.Holder != "alice" {
		t.Fatalf("restored live lock = %+v, %v", got, err)
	}
	got, err = s.Get(ctx, short.Key)
	if err != nil || got.Holder != "alice" || got.Fence <= short.Fence || got.Reason != "work" || got.TaskID != "TASK-1" {
		t.Fatalf("restored expired lock = %+v, %v", got, err)
	}
	if ttl := got.ExpiresAt.Sub(got.CreatedAt); ttl != 300*time.Millisecond {
		t.Errorf("restored expired lock for %s, want its original 300ms", ttl)
	}
	if got, err := s.Get(ctx, lost.Key); err != nil || got.Holder != "bob" {
		t.Fatalf("bob's lock after alice's restore = %+v, %v", got, err)
	}
	// Invalid and lost entries are gone from the history; a second restore
	// warns about nothing.
	res, err = s.Restore(ctx, alice.Session, AcquireWith(m, alice, canon))
	if err != nil || len(res.Skipped) != 0 || len(res.Restored) != 2 {
		t.Fatalf("second restore = %+v, %v", res, err)
	}
}

// Without persistence a restart loses locks and history alike: Restore
// finds nothing (documented: restore needs appendonly yes).
func TestRestoreWithoutPersistence(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	mustAcquire(t, s, "task:T-1")
	srv.Restart()
	waitUp(t, s)
	res, err := s.Restore(ctx, "w-session", func(context.Context, RestoreRequest) error {
		t.Fatal("nothing to restore")
		return nil
	})
	if err != nil || len(res.Restored)+len(res.Skipped) != 0 {
		t.Fatalf("Restore = %+v, %v", res, err)
	}
}

// TestOneTimeout: a Store with OneTimeout waits for a hung server once;
// every later operation fails at once, as a timeout, saying why.
func TestOneTimeout(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{OneTimeout: true, OpTimeout: 300 * time.Millisecond})
	rec := mustAcquire(t, s, "task:T-1")
	srv.Pause()
	defer srv.Resume()
	ctx := context.Background()
	_, err := s.Get(ctx, rec.Key)
	if _, reason := Classify(err); reason != ReasonTimeout || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("Get on a hung server: %v; want a timeout, no answer within 300ms", err)
	}
	now := time.Now()
	for name, f := range map[string]func() error{
		"Acquire": func() error {
			_, _, err := s.Acquire(ctx, locktest.NewLock("src/new.go", "bob", now, time.Hour), now)
			return err
		},
		"Release":     func() error { return s.Release(ctx, rec.Key, rec.Token) },
		"List":        func() error { _, err := s.List(ctx); return err },
		"Overlapping": func() error { _, err := s.Overlapping(ctx, "src/**"); return err },
		"WaitRelease": func() error { _, err := s.WaitRelease(ctx, rec.Key); return err },
	} {
		err := f()
		if _, reason := Classify(err); reason != ReasonTimeout || !strings.Contains(err.Error(), "not asked again") {
			t.Errorf("%s after the timeout: %v; want a timeout, not asked again", name, err)
		}
	}
}
