package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/scope"
)

// settle is how long the suite watches for a signal that must not come.
const settle = 50 * time.Millisecond

// closedWithin reports whether ch is closed within d.
func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// testWaiter holds a store that signals releases (locks.Waiter) to the
// contract: a release or forced removal of the key closes the channel,
// nothing else does but the end of ctx. Run adds it for such stores only.
func testWaiter(t *testing.T, s locks.Store) {
	w := s.(locks.Waiter)
	ctx := context.Background()
	listen := func(ctx context.Context, key string) <-chan struct{} {
		t.Helper()
		ch, err := w.WaitRelease(ctx, key)
		if err != nil {
			t.Fatalf("WaitRelease(%q): %v", key, err)
		}
		return ch
	}
	at := now()
	a := mustAcquire(t, s, NewLock("task:WAIT-A", "alice", at, time.Hour), at)
	b := mustAcquire(t, s, NewLock("task:WAIT-B", "bob", at, time.Hour), at)
	chA, chB := listen(ctx, a.Key), listen(ctx, b.Key)
	if closedWithin(chA, settle) {
		t.Fatal("woken before any release")
	}
	if err := s.Release(ctx, a.Key, "not-the-token"); err == nil {
		t.Fatal("Release with a wrong token succeeded")
	}
	if err := s.Release(ctx, a.Key, a.Token); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(chA, 5*time.Second) {
		t.Fatal("not woken by the release")
	}
	if closedWithin(chB, settle) {
		t.Fatal("another key's release woke its waiter")
	}
	if _, err := s.Remove(ctx, b.Key); err != nil {
		t.Fatal(err)
	}
	if !closedWithin(chB, 5*time.Second) {
		t.Fatal("not woken by a forced removal")
	}
	cctx, cancel := context.WithCancel(ctx)
	ch := listen(cctx, "task:WAIT-C")
	cancel()
	if !closedWithin(ch, 5*time.Second) {
		t.Fatal("not closed when its context ended")
	}
}

// testWaitHandover: through the Manager, a waiter takes a key once it is
// released, on every store (woken on stores that signal, polling on the
// others).
func testWaitHandover(t *testing.T, s locks.Store) {
	ctx := context.Background()
	m := &locks.Manager{Store: s, Host: "locktest", PID: 1}
	holder := locks.Owner{Holder: "holder", HolderType: scope.WorkerAgent, Session: "holder"}
	waiter := locks.Owner{Holder: "waiter", HolderType: scope.WorkerAgent, Session: "waiter"}
	const key = "src/handover.go"
	for round := range 5 {
		if _, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: holder, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: waiter, TTL: time.Hour, Wait: 5 * time.Minute})
			done <- err
		}()
		time.Sleep(settle)
		if _, err := m.Release(ctx, []string{key}, holder, false); err != nil {
			t.Fatal(err)
		}
		// How soon is a benchmark's question (BenchmarkContentionStores):
		// here the waiter must get the key, within its own --wait.
		if err := <-done; err != nil {
			t.Fatalf("round %d: the waiter did not get the released key: %v", round, err)
		}
		cur, err := s.Get(ctx, key)
		if err != nil || cur.Holder != "waiter" {
			t.Fatalf("round %d: after the hand-over: %+v, %v", round, cur, err)
		}
		if _, err := m.Release(ctx, []string{key}, waiter, false); err != nil {
			t.Fatal(err)
		}
	}
}
