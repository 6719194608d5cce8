package service

import (
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

func TestHoldLocks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		req   HoldRequest
		setup func(f *lockFixture, me, other *Workspace)
		// during runs while the command would: the clock moved, the
		// store changed by others.
		during func(f *lockFixture, me, other *Workspace)
		check  func(t *testing.T, f *lockFixture, h *Hold, refreshErr error)
	}{
		{name: "refreshed for its ttl", req: HoldRequest{Keys: []string{"src/a.go"}, TTL: 9 * time.Minute},
			during: func(f *lockFixture, _, _ *Workspace) { f.clock.add(3 * time.Minute) },
			check: func(t *testing.T, f *lockFixture, h *Hold, err error) {
				if err != nil || h.Interval() != 3*time.Minute {
					t.Fatalf("interval %s, %v", h.Interval(), err)
				}
				l, gerr := h.e.store.Get(ctx, "src/a.go")
				if gerr != nil || !l.ExpiresAt.Equal(f.clock.now().Add(9*time.Minute)) {
					t.Fatalf("%+v, %v: want the lock renewed for 9m from now", l, gerr)
				}
			}},
		{name: "default ttl by worker type", req: HoldRequest{Keys: []string{"src/a.go"}},
			check: func(t *testing.T, _ *lockFixture, h *Hold, err error) {
				if err != nil || h.Interval() != 10*time.Minute {
					t.Fatalf("interval %s, %v: want a third of the agent's 30m", h.Interval(), err)
				}
			}},
		{name: "lapsed and taken over", req: HoldRequest{Keys: []string{"src/a.go"}, TTL: time.Minute},
			during: func(f *lockFixture, _, other *Workspace) {
				f.clock.add(2 * time.Minute)
				f.take(other, "src/a.go")
			},
			check: func(t *testing.T, _ *lockFixture, _ *Hold, err error) { wantErr[*locks.NotOwnerError](t, err) }},
		{name: "cleared", req: HoldRequest{Keys: []string{"src/a.go"}},
			during: func(_ *lockFixture, _, other *Workspace) {
				if _, err := other.ClearLocks(ctx, ClearRequest{Target: "src/a.go", Force: true}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, _ *lockFixture, _ *Hold, err error) { wantErr[*locks.LostError](t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLockFixture(t)
			me, other := f.as("me"), f.as("other")
			h, err := me.HoldLocks(ctx, tt.req)
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
	h, err := me.HoldLocks(ctx, HoldRequest{Keys: []string{"env:staging", "src/a.go"}, Reason: "build"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Keys(); len(got) != 2 || h.Dir != me.cwd {
		t.Fatalf("keys %q dir %q", got, h.Dir)
	}
	cancel() // the command was interrupted: the release happens all the same
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := me.ListLocks(context.Background(), ListRequest{})
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Key != "env:staging" {
		t.Fatalf("left %+v, %v: want the lock held before the hold", res.Rows, err)
	}
}

func TestHoldLocksRefused(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me, other := f.as("me"), f.as("other")
	f.take(other, "src/a.go")
	_, err := me.HoldLocks(ctx, HoldRequest{Keys: []string{"src/a.go"}})
	wantErr[*locks.HeldError](t, err)
	_, err = me.HoldLocks(ctx, HoldRequest{Keys: []string{"api:get /v1/users"}})
	wantErr[*lockkey.Error](t, err)
}
