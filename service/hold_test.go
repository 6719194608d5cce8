package service

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/service/lockops"
)

func TestHoldLocks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		req   lockops.HoldRequest
		setup func(f *lockFixture, me, other *Workspace)
		// during runs while the command would: the clock moved, the
		// store changed by others.
		during func(f *lockFixture, me, other *Workspace)
		check  func(t *testing.T, f *lockFixture, h *lockops.Hold, refreshErr error)
	}{
		{name: "refreshed for its ttl", req: lockops.HoldRequest{Keys: []string{"src/a.go"}, TTL: 9 * time.Minute},
			during: func(f *lockFixture, _, _ *Workspace) { f.clock.Add(3 * time.Minute) },
			check: func(t *testing.T, f *lockFixture, h *lockops.Hold, err error) {
				if err != nil || h.Interval() != 3*time.Minute {
					t.Fatalf("interval %s, %v", h.Interval(), err)
				}
				l, gerr := f.as("me").Store.Get(ctx, "src/a.go")
				if gerr != nil || !l.ExpiresAt.Equal(f.clock.Now().Add(9*time.Minute)) {
					t.Fatalf("%+v, %v: want the lock renewed for 9m from now", l, gerr)
				}
			}},
		{name: "default ttl by worker type", req: lockops.HoldRequest{Keys: []string{"src/a.go"}},
			check: func(t *testing.T, _ *lockFixture, h *lockops.Hold, err error) {
				if err != nil || h.Interval() != 10*time.Minute {
					t.Fatalf("interval %s, %v: want a third of the agent's 30m", h.Interval(), err)
				}
			}},
		{name: "lapsed and taken over", req: lockops.HoldRequest{Keys: []string{"src/a.go"}, TTL: time.Minute},
			during: func(f *lockFixture, _, other *Workspace) {
				f.clock.Add(2 * time.Minute)
				f.take(other, "src/a.go")
			},
			check: func(t *testing.T, _ *lockFixture, _ *lockops.Hold, err error) { wantErr[*locks.HeldError](t, err) }}, // exit 4, naming the holder
		{name: "cleared", req: lockops.HoldRequest{Keys: []string{"src/a.go"}},
			during: func(_ *lockFixture, _, other *Workspace) {
				if _, err := other.Locks().Clear(ctx, lockops.ClearRequest{Target: "src/a.go", Force: true}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, _ *lockFixture, _ *lockops.Hold, err error) { wantErr[*locks.LostError](t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLockFixture(t)
			me, other := f.as("me"), f.as("other")
			h, err := me.Locks().Hold(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.during != nil {
				tt.during(f, me, other)
			}
			tt.check(t, f, h, h.Refresh(ctx))
		})
	}
}

// A hold gives back what it took, and only that: a lock held before it
// outlives it.
func TestHoldReleasesWhatItTook(t *testing.T) {
	f := newLockFixture(t)
	me := f.as("me")
	f.take(me, "env:staging")
	ctx, cancel := context.WithCancel(context.Background())
	h, err := me.Locks().Hold(ctx, lockops.HoldRequest{Keys: []string{"env:staging", "src/a.go"}, Reason: "build"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Keys(); len(got) != 2 || h.Dir != me.Cwd {
		t.Fatalf("keys %q dir %q", got, h.Dir)
	}
	cancel() // the command was interrupted: the release happens all the same
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := me.Locks().List(context.Background(), lockops.ListRequest{})
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Key != "env:staging" {
		t.Fatalf("left %+v, %v: want the lock held before the hold", res.Rows, err)
	}
}

func TestHoldLocksRefused(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me, other := f.as("me"), f.as("other")
	f.take(other, "src/a.go")
	_, err := me.Locks().Hold(ctx, lockops.HoldRequest{Keys: []string{"src/a.go"}})
	wantErr[*locks.HeldError](t, err)
	_, err = me.Locks().Hold(ctx, lockops.HoldRequest{Keys: []string{"api:get /v1/users"}})
	wantErr[*lockkey.Error](t, err)
}

// A renewal the store cannot confirm is tried again, sooner each time up
// to a bound, while the locks' expiry is ahead: the hold goes on, and the
// store back, the locks are renewed.
func TestHoldOutlivesAnUnavailableStore(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me := f.as("me")
	h, err := me.Locks().Hold(ctx, lockops.HoldRequest{Keys: []string{"src/a.go"}, TTL: 9 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	store := &locktest.DownFor{Store: me.Mgr.Store, N: 3}
	me.Mgr.Store = store
	f.clock.Add(3 * time.Second)
	for i, want := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second} {
		if err := h.Refresh(ctx); err != nil {
			t.Fatalf("refresh %d with the store down: %v; want it tried again", i+1, err)
		}
		if h.Unconfirmed() == nil || h.Next() != want {
			t.Fatalf("refresh %d: unconfirmed %v, next %s; want the error and %s", i+1, h.Unconfirmed(), h.Next(), want)
		}
		f.clock.Add(h.Next())
	}
	if err := h.Refresh(ctx); err != nil || h.Unconfirmed() != nil || h.Next() != 3*time.Second {
		t.Fatalf("refresh with the store back: %v, unconfirmed %v, next %s", err, h.Unconfirmed(), h.Next())
	}
	l, err := store.Store.Get(ctx, "src/a.go")
	if err != nil || !l.ExpiresAt.Equal(f.clock.Now().Add(9*time.Second)) || !h.Expires().Equal(l.ExpiresAt) {
		t.Fatalf("%+v, %v: want the lock renewed for 9s from now", l, err)
	}
}

// A store that stays unavailable ends the hold before the locks expire,
// and says so; a lock found lost meanwhile ends it at once.
func TestHoldEndsBeforeTheLocksExpire(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me, other := f.as("me"), f.as("other")
	h, err := me.Locks().Hold(ctx, lockops.HoldRequest{Keys: []string{"src/a.go"}, TTL: 9 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	expires := h.Expires()
	me.Mgr.Store = &locktest.DownFor{Store: me.Mgr.Store, N: 1000}
	f.clock.Add(3 * time.Second)
	for h.Refresh(ctx) == nil {
		if h.Next() <= 0 && !f.clock.Now().Before(expires) {
			t.Fatal("the hold went on past its locks' expiry")
		}
		f.clock.Add(max(h.Next(), time.Millisecond))
	}
	err = h.Refresh(ctx)
	var expiring *locks.ExpiringError
	if !errors.As(err, &expiring) || !expiring.Expires.Equal(expires) || !errors.As(err, new(*locks.UnavailableError)) {
		t.Fatalf("refresh = %v; want an *ExpiringError at %s wrapping the store's", err, expires)
	}
	if now := f.clock.Now(); !now.Before(expires) || now.Before(expires.Add(-time.Second)) {
		t.Fatalf("gave up at %s; want within a second before the expiry %s", now, expires)
	}

	h, err = other.Locks().Hold(ctx, lockops.HoldRequest{Keys: []string{"src/b.go"}, TTL: 9 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	other.Mgr.Store = &locktest.DownFor{Store: other.Mgr.Store, N: 1}
	if err := h.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := f.as("third").Locks().Clear(ctx, lockops.ClearRequest{Target: "src/b.go", Force: true}); err != nil {
		t.Fatal(err)
	}
	wantErr[*locks.LostError](t, h.Refresh(ctx))
}
