package locks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
)

// TestManagerBranchLocks: a branch lock (branch:B:KEY) and a lock
// without a branch on a common path exclude each other, both ways under
// PerBranch; locks of two branches on one path do not.
func TestManagerBranchLocks(t *testing.T) {
	t.Parallel()
	held := func(t *testing.T, err error, by string) {
		t.Helper()
		var h *locks.HeldError
		if !errors.As(err, &h) || h.Lock.Holder != by {
			t.Fatalf("err = %v, want held by %s", err, by)
		}
	}
	t.Run("branches apart", func(t *testing.T) {
		m, _ := newManager(t)
		m.PerBranch = true
		if err := acquire(m, alice, time.Hour, "branch:main:a.psd"); err != nil {
			t.Fatal(err)
		}
		if err := acquire(m, bob, time.Hour, "branch:release:a.psd"); err != nil {
			t.Fatalf("another branch's lock of the path: %v", err)
		}
		held(t, acquire(m, bob, time.Hour, "branch:main:a.psd"), "alice")
		held(t, acquire(m, bob, time.Hour, "branch:main:*.psd"), "alice")
	})
	t.Run("every branch against one", func(t *testing.T) {
		m, _ := newManager(t)
		m.PerBranch = true
		if err := acquire(m, alice, time.Hour, "branch:main:art/a.psd"); err != nil {
			t.Fatal(err)
		}
		held(t, acquire(m, bob, time.Hour, "art/a.psd"), "alice")
		held(t, acquire(m, bob, time.Hour, "art/**"), "alice")
		if err := acquire(m, bob, time.Hour, "art/b.psd"); err != nil {
			t.Fatalf("another path: %v", err)
		}
		// The refused tries left nothing behind.
		st, err := m.Check(context.Background(), []string{"art/a.psd"}, bob)
		if err != nil || st[0].State != locks.StateHeld || st[0].Locks[0].Key != "branch:main:art/a.psd" {
			t.Fatalf("check art/a.psd = %+v, %v; want held through alice's main lock", st, err)
		}
	})
	t.Run("one against every branch", func(t *testing.T) {
		m, _ := newManager(t)
		if err := acquire(m, alice, time.Hour, "art/**"); err != nil {
			t.Fatal(err)
		}
		// Always checked from the branch lock's side, PerBranch or not.
		held(t, acquire(m, bob, time.Hour, "branch:main:art/a.psd"), "alice")
		if err := acquire(m, alice, time.Hour, "branch:main:art/a.psd"); err != nil {
			t.Fatalf("the holder's own: %v", err)
		}
	})
	t.Run("racing sides never both win", func(t *testing.T) {
		m, _ := newManager(t)
		m.PerBranch = true
		errs := make(chan error, 2)
		go func() { errs <- acquire(m, alice, time.Hour, "a.psd") }()
		go func() { errs <- acquire(m, bob, time.Hour, "branch:main:a.psd") }()
		if e1, e2 := <-errs, <-errs; e1 == nil && e2 == nil {
			t.Fatal("a lock on every branch and a branch lock of one path were both granted")
		}
	})
}
