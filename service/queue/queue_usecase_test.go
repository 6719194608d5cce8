package queue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/service/session"
)

func TestPackages(t *testing.T) {
	ctx := context.Background()
	_, clock, open := queueRepo(t, queuePackages)
	alice, bob := open("alice"), open("bob")
	claimed(t, alice, "WP-1")
	claimed(t, bob, "WP-2")
	clock.Add(time.Minute)
	finished(t, bob, "WP-2", "tests fail")
	wps, err := alice.LoadPackages("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		as        *Handler
		withLocks bool
		// wantHeldBy is who holds a lock in WP-4's way ("" none shown).
		wantHeldBy string
	}{
		{name: "the states alone", as: bob},
		{name: "with the locks of others", as: bob, withLocks: true, wantHeldBy: "alice"},
		{name: "the caller's own locks are in nobody's way", as: alice, withLocks: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := tt.as.Packages(ctx, wps, tt.withLocks)
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			for _, s := range q.Packages {
				order = append(order, s.ID)
			}
			if want := []string{"WP-2", "WP-1", "WP-3", "WP-4"}; !slices.Equal(order, want) {
				t.Fatalf("claim order %v, want %v", order, want)
			}
			want := map[PackageState]int{PackageClaimed: 1, PackageFailed: 1, PackageReady: 2}
			for state, n := range want {
				if q.Counts[state] != n {
					t.Fatalf("counts %v, want %v", q.Counts, want)
				}
			}
			if q.Drained() {
				t.Fatal("drained with two packages ready")
			}
			wp1, _ := q.status("WP-1")
			if wp1.State != PackageClaimed || wp1.Holder != "alice" || wp1.Since == nil || !wp1.Since.Equal(clock.Now().Add(-time.Minute)) {
				t.Fatalf("WP-1 %+v, want claimed by alice a minute ago", wp1)
			}
			wp2, _ := q.status("WP-2")
			if wp2.State != PackageFailed || wp2.Holder != "bob" || wp2.Reason != "tests fail" || wp2.FinishedAt == nil {
				t.Fatalf("WP-2 %+v, want failed by bob with the reason", wp2)
			}
			wp4, _ := q.status("WP-4")
			switch {
			case tt.wantHeldBy == "" && len(wp4.HeldBy) != 0,
				tt.wantHeldBy != "" && (len(wp4.HeldBy) != 1 || wp4.HeldBy[0].Holder != tt.wantHeldBy || wp4.HeldBy[0].Key != "src/a.go"):
				t.Fatalf("WP-4 held by %+v, want %q", wp4.HeldBy, tt.wantHeldBy)
			}
		})
	}
	t.Run("a store that cannot be listed", func(t *testing.T) {
		down := open("carol")
		down.Store = locktest.Unlistable{Store: down.Store}
		var unavail *locks.UnavailableError
		if _, err := down.Packages(ctx, wps, true); !errors.As(err, &unavail) {
			t.Fatalf("error %v (%T), want the store's", err, err)
		}
	})
}

func TestDropLostClaim(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// lose changes the store after alice's claim of WP-4 (src/a.go
		// and src/d.go), before she gives back what is left of it.
		lose        func(t *testing.T, clock *fakeClock, bob *Handler)
		wantRemoved []string
		// wantBob is the key bob holds after, "" none.
		wantBob string
	}{
		{name: "every lock still the claim's", lose: func(*testing.T, *fakeClock, *Handler) {},
			wantRemoved: []string{"src/a.go", "src/d.go"}},
		{name: "a lock another took over is left to it",
			lose: func(t *testing.T, clock *fakeClock, bob *Handler) {
				clock.Add(2 * time.Hour) // the claim lapsed
				take(t, bob, "src/d.go")
			},
			wantRemoved: []string{"src/a.go"}, wantBob: "src/d.go"},
		{name: "nothing left to give back",
			lose: func(t *testing.T, clock *fakeClock, bob *Handler) {
				clock.Add(2 * time.Hour)
				take(t, bob, "src/a.go", "src/d.go")
			},
			wantBob: "src/a.go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, clock, open := queueRepo(t, queuePackages)
			alice, bob := open("alice"), open("bob")
			c := claimed(t, alice, "WP-4")
			tt.lose(t, clock, bob)
			res, err := alice.dropLostClaim(ctx, "WP-4", c.Locks)
			if err != nil {
				t.Fatal(err)
			}
			var removed []string
			for _, l := range res.Removed {
				removed = append(removed, l.Key)
			}
			slices.Sort(removed)
			if !slices.Equal(removed, tt.wantRemoved) || len(res.Forced) != 0 {
				t.Fatalf("removed %v (forced %v), want %v", removed, res.Forced, tt.wantRemoved)
			}
			// The task record is the package's state: never given back here.
			if tt.wantBob == "" {
				if l, err := alice.Store.Get(ctx, lockkey.TaskKey("WP-4")); err != nil || l.Holder != "alice" {
					t.Fatalf("task record %+v, %v: want alice's kept", l, err)
				}
			}
			if tt.wantBob != "" {
				if l, err := bob.Store.Get(ctx, tt.wantBob); err != nil || l.Holder != "bob" {
					t.Fatalf("%s: %+v, %v, want bob's lock kept", tt.wantBob, l, err)
				}
			}
		})
	}
	t.Run("a lock the claim renewed stays", func(t *testing.T) {
		_, _, open := queueRepo(t, queuePackages)
		alice := open("alice")
		take(t, alice, "src/a.go")
		c := claimed(t, alice, "WP-4")
		res, err := alice.dropLostClaim(ctx, "WP-4", c.Locks)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Removed) != 1 || res.Removed[0].Key != "src/d.go" {
			t.Fatalf("removed %+v, want src/d.go alone", res.Removed)
		}
		if _, err := alice.Store.Get(ctx, "src/a.go"); err != nil {
			t.Fatalf("src/a.go, held before the claim: %v", err)
		}
	})
}

func TestWorkPackage(t *testing.T) {
	tests := []struct {
		name string
		// yaml is the work packages file; "" removes it.
		yaml, id string
		claim    Claim
		wantKeys []string
		wantTTL  time.Duration
		wantErr  func(error) bool
	}{
		{name: "a package's keys", yaml: queuePackages, id: "WP-4",
			wantKeys: []string{"src/a.go", "src/d.go"}, wantTTL: 30 * time.Minute}, // an agent's task lifetime
		{name: "the package's ttl", yaml: "packages:\n  - id: WP-1\n    locks: {ttl: 90m, files: [src/a.go], keys: [\"api:GET /x\"]}\n", id: "WP-1",
			wantKeys: []string{"src/a.go", "api:GET /x"}, wantTTL: 90 * time.Minute},
		{name: "the claim's ttl over the package's", yaml: "packages:\n  - id: WP-1\n    locks: {ttl: 90m, files: [src/a.go]}\n", id: "WP-1",
			claim: Claim{TTL: time.Minute}, wantKeys: []string{"src/a.go"}, wantTTL: time.Minute},
		{name: "no such package", yaml: queuePackages, id: "WP-9", wantErr: asType[*session.UsageError]},
		{name: "no work packages file", id: "WP-1", wantErr: asType[*session.UsageError]},
		{name: "a file that is not valid", yaml: "packages:\n  - id: WP-1\n    depends_on: [WP-0]\n", id: "WP-1",
			wantErr: asType[*config.Error]},
		{name: "a key that is not valid", yaml: "packages:\n  - id: WP-1\n    locks: {keys: [\"api:nope\"]}\n", id: "WP-1",
			wantErr: func(err error) bool { return err != nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, open := queueRepo(t, queuePackages)
			if tt.yaml == "" {
				if err := os.Remove(filepath.Join(r.Dir, "work-packages.yaml")); err != nil {
					t.Fatal(err)
				}
			} else {
				r.Write("work-packages.yaml", tt.yaml)
			}
			e := open("alice")
			wp, keys, err := e.WorkPackage("", tt.id)
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Fatalf("error %v (%T), want another", err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := session.Canonicals(keys); wp.ID != tt.id || !slices.Equal(got, tt.wantKeys) {
				t.Fatalf("%s with keys %v, want %s with %v", wp.ID, got, tt.id, tt.wantKeys)
			}
			if got := e.claimTTL(wp, tt.claim); got != tt.wantTTL {
				t.Fatalf("claim ttl %s, want %s", got, tt.wantTTL)
			}
			if got, want := e.PackagesFile(""), filepath.Join(r.Dir, "work-packages.yaml"); got != want {
				t.Fatalf("packages file %s, want %s", got, want)
			}
		})
	}
}
