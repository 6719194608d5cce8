package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/queue"
)

func TestBoardSnapshot(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// setup changes the repository and the store before the frame;
		// alice is the board's own workspace.
		setup   func(t *testing.T, dir string, alice, bob *Workspace)
		wantErr func(error) bool
		check   func(t *testing.T, v BoardView)
	}{
		{name: "locks and the day's events, no work packages file",
			setup: func(t *testing.T, dir string, alice, _ *Workspace) {
				if err := os.Remove(filepath.Join(dir, "work-packages.yaml")); err != nil {
					t.Fatal(err)
				}
				if _, err := alice.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"api:GET /v1/users"}}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, v BoardView) {
				if len(v.Locks) != 1 || v.Locks[0].Key != "api:GET /v1/users" || v.Locks[0].Lock.Holder != "alice" {
					t.Fatalf("locks %+v, want alice's api:GET /v1/users", v.Locks)
				}
				if n := len(v.Events); n == 0 || v.Events[n-1].Action != journal.ActionAcquire || v.Events[n-1].Worker != "alice" {
					t.Fatalf("events %+v, want alice's acquire last", v.Events)
				}
				if v.QueueFile != "" || v.Queue != nil || v.QueueProblem != "" {
					t.Fatalf("queue %q %v %q, want none without a work packages file", v.QueueFile, v.Queue, v.QueueProblem)
				}
				if v.Store == "" || v.StaleAfter <= 0 {
					t.Fatalf("store %q, stale after %s: want both", v.Store, v.StaleAfter)
				}
			}},
		{name: "the queue from the same listing",
			setup: func(t *testing.T, _ string, alice, _ *Workspace) { claimed(t, alice, "WP-1") },
			check: func(t *testing.T, v BoardView) {
				if v.QueueFile != "work-packages.yaml" || v.Queue == nil {
					t.Fatalf("queue file %q (%q), want work-packages.yaml", v.QueueFile, v.QueueProblem)
				}
				want := map[string]queue.PackageState{"WP-1": queue.PackageClaimed, "WP-2": queue.PackageReady, "WP-3": queue.PackageReady, "WP-4": queue.PackageReady}
				for id, state := range want {
					if s, ok := statusOf(v.Queue, id); !ok || s.State != state {
						t.Fatalf("%s: %+v, want %s", id, s, state)
					}
				}
				if s, _ := statusOf(v.Queue, "WP-3"); !slices.Equal(s.WaitsFor, []string{"WP-1"}) {
					t.Fatalf("WP-3 waits for %v, want WP-1", s.WaitsFor)
				}
				// Everyone's view: the caller's own lock is in WP-4's way too.
				if s, _ := statusOf(v.Queue, "WP-4"); len(s.HeldBy) != 1 || s.HeldBy[0].Key != "src/a.go" || s.HeldBy[0].Holder != "alice" {
					t.Fatalf("WP-4 held by %+v, want alice's src/a.go", s.HeldBy)
				}
			}},
		{name: "a work packages file that is not valid is a problem, not an error",
			setup: func(t *testing.T, dir string, _, bob *Workspace) {
				if err := os.WriteFile(filepath.Join(dir, "work-packages.yaml"), []byte("packages:\n  - title: no id\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if _, err := bob.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"src/b.go"}}); err != nil {
					t.Fatal(err)
				}
			},
			check: func(t *testing.T, v BoardView) {
				if v.QueueFile != "work-packages.yaml" || v.Queue != nil || v.QueueProblem == "" {
					t.Fatalf("queue %q %v %q, want the file named with its problem", v.QueueFile, v.Queue, v.QueueProblem)
				}
				if len(v.Locks) != 1 || v.Locks[0].Lock.Holder != "bob" {
					t.Fatalf("locks %+v, want bob's lock in view all the same", v.Locks)
				}
			}},
		{name: "a store that cannot be listed",
			setup: func(_ *testing.T, _ string, alice, _ *Workspace) {
				alice.Store = locktest.Unlistable{Store: alice.Store}
			},
			wantErr: func(err error) bool {
				var unavail *locks.UnavailableError
				return errors.As(err, &unavail)
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, clock, open := queueRepo(t, queuePackages)
			alice, bob := open("alice"), open("bob")
			tt.setup(t, r.Dir, alice, bob)
			v, err := alice.Board().Snapshot(ctx)
			if tt.wantErr != nil {
				if err == nil || !tt.wantErr(err) {
					t.Fatalf("error %v (%T), want the store's", err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !v.Now.Equal(clock.Now()) {
				t.Fatalf("frame at %s, want the clock's %s", v.Now, clock.Now())
			}
			tt.check(t, v)
		})
	}
}

// The board parses the work packages file again only when its bytes
// change: a frame a second must not decode an unchanged file each time.
func TestBoardQueueOfParsesOnChange(t *testing.T) {
	r, _, open := queueRepo(t, queuePackages)
	alice := open("alice")
	b := alice.Board()
	if _, q, problem := b.QueueOf(nil); q == nil || len(q.Packages) != 4 {
		t.Fatalf("first frame: %v %q, want 4 packages", q, problem)
	}
	parsed := b.pkgs
	if _, q, _ := b.QueueOf(nil); q == nil || b.pkgs != parsed {
		t.Fatal("an unchanged file was parsed again")
	}
	r.Write("work-packages.yaml", "packages:\n  - id: WP-9\n    title: only\n    locks: {files: [src/a.go]}\n")
	_, q, problem := b.QueueOf(nil)
	if q == nil || len(q.Packages) != 1 || q.Packages[0].ID != "WP-9" {
		t.Fatalf("after an edit: %v %q, want WP-9 alone", q, problem)
	}
	if err := os.Remove(filepath.Join(r.Dir, "work-packages.yaml")); err != nil {
		t.Fatal(err)
	}
	if file, q, problem := b.QueueOf(nil); file != "" || q != nil || problem != "" {
		t.Fatalf("file removed: %q %v %q, want no queue", file, q, problem)
	}
}

func TestBoardClear(t *testing.T) {
	ctx := context.Background()
	_, _, open := queueRepo(t, queuePackages)
	alice, bob := open("alice"), open("bob")
	if _, err := alice.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"src/a.go"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, key string
		wantErr   error
	}{
		{name: "another's lock", key: "src/a.go"},
		{name: "a key nobody holds", key: "src/b.go", wantErr: locks.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := bob.Board().Clear(ctx, tt.key)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Clear(%s) = %v, want %v", tt.key, err, tt.wantErr)
			}
			if _, err := bob.Store.Get(ctx, tt.key); !errors.Is(err, locks.ErrNotFound) {
				t.Fatalf("%s after the clear: %v, want no record", tt.key, err)
			}
		})
	}
	evs, err := bob.JournalFile().Read(alice.Now().Add(-1))
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(evs, func(ev journal.Event) bool {
		return ev.Action == journal.ActionClear && ev.Key == "src/a.go" && ev.Worker == "bob"
	}); i < 0 {
		t.Fatalf("journal %+v: no clear of src/a.go by bob", evs)
	}
}
