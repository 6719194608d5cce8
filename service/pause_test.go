package service_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
)

func TestPause(t *testing.T) {
	r := repoWith(t, nil)
	ctx := context.Background()
	alice, bob := openAs(t, r.Dir, "alice", nil), openAs(t, r.Dir, "bob", nil)
	tests := []struct {
		name    string
		as      *service.Workspace
		req     lockops.PauseRequest
		wantErr any
		// wantTTL is the pause's lifetime from the clock's reading; 0
		// checks only that it has one.
		wantTTL time.Duration
	}{
		{name: "by id", as: alice, req: lockops.PauseRequest{Feature: "FEAT-1", Reason: "contract bump", TTL: 5 * time.Hour}, wantTTL: 5 * time.Hour},
		{name: "by key", as: alice, req: lockops.PauseRequest{Feature: "feature:FEAT-2:pause"}},
		{name: "again by default never shortens", as: alice, req: lockops.PauseRequest{Feature: "FEAT-1"}, wantTTL: 5 * time.Hour},
		{name: "again for a time named", as: alice, req: lockops.PauseRequest{Feature: "FEAT-1", TTL: time.Minute}, wantTTL: time.Minute},
		{name: "held by another", as: bob, req: lockops.PauseRequest{Feature: "FEAT-1"}, wantErr: new(*locks.HeldError)},
		{name: "invalid feature", as: alice, req: lockops.PauseRequest{Feature: "FEAT 1"}, wantErr: new(*lockkey.Error)},
		{name: "not a pause key", as: alice, req: lockops.PauseRequest{Feature: "feature:FEAT-1:merge"}, wantErr: new(*service.UsageError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.as.Locks().Pause(ctx, tt.req)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			l := res[0].Lock
			if !lockkey.IsPause(l.Key) || l.Holder != tt.as.Owner().Holder {
				t.Fatalf("took %s as %s, want a pause lock of %s", l.Key, l.Holder, tt.as.Owner().Holder)
			}
			if ttl := l.ExpiresAt.Sub(epoch); tt.wantTTL != 0 && ttl != tt.wantTTL || ttl <= 0 {
				t.Fatalf("pause lasts %s, want %s", ttl, tt.wantTTL)
			}
		})
	}
}

func TestPauseStatusAndUnpause(t *testing.T) {
	r := repoWith(t, nil)
	ctx := context.Background()
	alice, bob := openAs(t, r.Dir, "alice", nil), openAs(t, r.Dir, "bob", nil)
	if _, err := alice.Locks().Pause(ctx, lockops.PauseRequest{Feature: "FEAT-1", Reason: "why"}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() (any, error)
		// want checks the result of a step that succeeds.
		want    func(any) bool
		wantErr any
	}{
		{name: "free feature", do: func() (any, error) {
			return bob.Locks().PauseStatus(ctx, lockops.PauseStatusRequest{Feature: "FEAT-9"})
		}, want: func(v any) bool {
			st := v.(lockops.PauseState)
			return !st.Paused && !st.Blocks() && st.Key == "feature:FEAT-9:pause"
		}},
		{name: "paused by another", do: func() (any, error) {
			return bob.Locks().PauseStatus(ctx, lockops.PauseStatusRequest{Feature: "FEAT-1"})
		}, want: func(v any) bool {
			st := v.(lockops.PauseState)
			return st.Blocks() && st.Lock.Holder == "alice" && st.Lock.Reason == "why"
		}},
		{name: "paused by me", do: func() (any, error) {
			return alice.Locks().PauseStatus(ctx, lockops.PauseStatusRequest{Feature: "FEAT-1"})
		}, want: func(v any) bool { st := v.(lockops.PauseState); return st.Paused && st.Mine && !st.Blocks() }},
		{name: "status of an invalid feature", do: func() (any, error) {
			return bob.Locks().PauseStatus(ctx, lockops.PauseStatusRequest{Feature: "FEAT 1"})
		}, wantErr: new(*lockkey.Error)},
		{name: "unpause of another's", do: func() (any, error) {
			return bob.Locks().Unpause(ctx, lockops.UnpauseRequest{Feature: "FEAT-1"})
		}, wantErr: new(*locks.NotOwnerError)},
		{name: "unpause of another's with force", do: func() (any, error) {
			return bob.Locks().Unpause(ctx, lockops.UnpauseRequest{Feature: "FEAT-1", Force: true})
		}, want: func(v any) bool {
			res := v.(locks.ReleaseResult)
			return len(res.Forced) == 1 && res.Forced[0].Holder == "alice"
		}},
		{name: "unpause of a free feature", do: func() (any, error) {
			return alice.Locks().Unpause(ctx, lockops.UnpauseRequest{Feature: "FEAT-1"})
		}, want: func(v any) bool {
			res := v.(locks.ReleaseResult)
			return len(res.Removed) == 0 && len(res.Missing) == 1
		}},
	}
	for _, s := range steps {
		v, err := s.do()
		wantError(t, err, s.wantErr)
		if s.wantErr == nil && !s.want(v) {
			t.Fatalf("%s: got %+v", s.name, v)
		}
	}
}

func TestWaitPause(t *testing.T) {
	r := repoWith(t, nil)
	ctx := context.Background()
	alice := openAs(t, r.Dir, "alice", nil)
	bob := openAs(t, r.Dir, "bob", tickingClock(time.Second))
	if _, err := alice.Locks().Pause(ctx, lockops.PauseRequest{Feature: "FEAT-1"}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name         string
		ctx          context.Context
		as           *service.Workspace
		req          lockops.PauseWaitRequest
		wantTimedOut bool
		wantWaiting  int
		wantErr      error
	}{
		{name: "not paused", ctx: ctx, as: bob, req: lockops.PauseWaitRequest{Feature: "FEAT-2", Timeout: time.Minute}},
		{name: "paused by me", ctx: ctx, as: alice, req: lockops.PauseWaitRequest{Feature: "FEAT-1", Timeout: time.Minute}},
		// bob's clock ticks a second a reading: the timeout passes after a
		// few polls, whatever the real time.
		{name: "timed out", ctx: ctx, as: bob, req: lockops.PauseWaitRequest{Feature: "FEAT-1", Timeout: 3 * time.Second}, wantTimedOut: true, wantWaiting: 1},
		{name: "cancelled", ctx: cancelled, as: bob, req: lockops.PauseWaitRequest{Feature: "FEAT-1"}, wantErr: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waiting := 0
			tt.req.Waiting = func(st lockops.PauseState) {
				if !st.Blocks() {
					t.Errorf("told to wait for %+v", st)
				}
				waiting++
			}
			w, err := tt.as.Locks().WaitPause(tt.ctx, tt.req)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if w.TimedOut != tt.wantTimedOut || tt.wantErr == nil && w.State.Blocks() != tt.wantTimedOut {
				t.Fatalf("timed out %v with %+v, want %v", w.TimedOut, w.State, tt.wantTimedOut)
			}
			if tt.wantErr == nil && waiting != tt.wantWaiting {
				t.Fatalf("told %d times that the wait began, want %d", waiting, tt.wantWaiting)
			}
		})
	}
	// Lifted while waiting: the wait ends with the pause gone.
	// The unpause is joined before the test ends: the wait may end as soon
	// as the lock is gone, while the unpause still writes its event to the
	// repository the test's cleanup removes.
	unpaused := make(chan error, 1)
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, err := alice.Locks().Unpause(ctx, lockops.UnpauseRequest{Feature: "FEAT-1"})
		unpaused <- err
	}()
	w, err := bob.Locks().WaitPause(ctx, lockops.PauseWaitRequest{Feature: "FEAT-1"})
	if uerr := <-unpaused; uerr != nil {
		t.Fatalf("unpause: %v", uerr)
	}
	if err != nil || w.TimedOut || w.State.Paused {
		t.Fatalf("wait ended with %+v, %v; want the pause lifted", w, err)
	}
}
