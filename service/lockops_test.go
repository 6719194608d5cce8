package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/usecasetest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/lockops"
)

// lockClock is a clock the test moves by hand.
type lockClock = usecasetest.Clock

// lockFixture is a repository with the file store, whose workers share
// one fake clock.
type lockFixture struct {
	t     *testing.T
	repo  *gittest.Repo
	clock *lockClock
}

// lockPolicy keeps events in the journal only: the workflow branch is
// another use case's.
const lockPolicy = `workflow:
  auto_commit: false
scope:
  profiles:
    backfill: {}
    agents: {}
`

func newLockFixture(t *testing.T) *lockFixture {
	t.Helper()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", lockPolicy)
	r.Write("src/a.go", "package a\n")
	r.Write("src/gone.go", "package a\n")
	r.Commit("init")
	// Tracked, not in the work tree: a path that names a file all the same.
	if err := os.Remove(filepath.Join(r.Dir, "src", "gone.go")); err != nil {
		t.Fatal(err)
	}
	return &lockFixture{t: t, repo: r, clock: usecasetest.NewClock(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))}
}

// as is the workspace of agent worker, its store open.
func (f *lockFixture) as(worker string) *Workspace {
	f.t.Helper()
	ctx := context.Background()
	e, err := Load(ctx, Options{Dir: f.repo.Dir, As: worker, WorkerType: "agent", Session: worker,
		Clock: f.clock.Now, Getenv: func(string) string { return "" }})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(e.Close)
	if err := e.Open(ctx, Purpose{TakesLocks: true}); err != nil {
		f.t.Fatal(err)
	}
	return e
}

// take has worker take keys, failing the test when it cannot.
func (f *lockFixture) take(e *Workspace, keys ...string) {
	f.t.Helper()
	if _, err := e.Locks().Acquire(context.Background(), lockops.AcquireRequest{Keys: keys}); err != nil {
		f.t.Fatal(err)
	}
}

// wantErr checks that err is a T (errors.As), as service/outcome
// classifies it.
func wantErr[T error](t *testing.T, err error) {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("error %v (%T), want a %T", err, err, target)
	}
}

func TestAcquireLocks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(f *lockFixture, other *Workspace)
		req   lockops.AcquireRequest
		check func(t *testing.T, res lockops.AcquireResult, err error)
	}{
		{name: "free key", req: lockops.AcquireRequest{Keys: []string{"api:GET /v1/users"}, Reason: "r"},
			check: func(t *testing.T, res lockops.AcquireResult, err error) {
				if err != nil || len(res.Locks) != 1 || res.Locks[0].Renewed || res.Locks[0].Lock.Reason != "r" {
					t.Fatalf("%+v, %v", res, err)
				}
				// agent's default for a logical key: 30m
				if got := res.Locks[0].Lock.ExpiresAt.Sub(res.Locks[0].Lock.CreatedAt); got != 30*time.Minute {
					t.Fatalf("lifetime %s, want the agent default 30m", got)
				}
			}},
		{name: "held by another",
			setup: func(f *lockFixture, other *Workspace) { f.take(other, "api:GET /v1/users") },
			req:   lockops.AcquireRequest{Keys: []string{"api:GET /v1/users"}},
			check: func(t *testing.T, _ lockops.AcquireResult, err error) { wantErr[*locks.HeldError](t, err) }},
		{name: "lapsed lock of another is taken over",
			setup: func(f *lockFixture, other *Workspace) {
				f.take(other, "api:GET /v1/users")
				f.clock.Add(time.Hour)
			},
			req: lockops.AcquireRequest{Keys: []string{"api:GET /v1/users"}},
			check: func(t *testing.T, res lockops.AcquireResult, err error) {
				if err != nil || len(res.Locks) != 1 || res.Locks[0].TookOver == nil || res.Locks[0].TookOver.Holder != "other" {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "invalid key", req: lockops.AcquireRequest{Keys: []string{"api:get /v1/users"}},
			check: func(t *testing.T, _ lockops.AcquireResult, err error) { wantErr[*lockkey.Error](t, err) }},
		{name: "invalid task id", req: lockops.AcquireRequest{Keys: []string{"src/a.go"}, Task: "a b"},
			check: func(t *testing.T, _ lockops.AcquireResult, err error) { wantErr[*UsageError](t, err) }},
		{name: "a named ttl is exact", req: lockops.AcquireRequest{Keys: []string{"src/a.go"}, TTL: 5 * time.Minute},
			check: func(t *testing.T, res lockops.AcquireResult, err error) {
				if err != nil || res.Locks[0].Lock.ExpiresAt.Sub(res.Locks[0].Lock.CreatedAt) != 5*time.Minute {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "paths that name no file", req: lockops.AcquireRequest{Keys: []string{"src", "src/a.go", "src/gone.go", "src/typo.go", "src/**"}, WarnPaths: true},
			check: func(t *testing.T, res lockops.AcquireResult, err error) {
				if err != nil || !slices.Equal(res.Dirs, []string{"src"}) || !slices.Equal(res.Missing, []string{"src/typo.go"}) {
					t.Fatalf("dirs %q, missing %q, %v", res.Dirs, res.Missing, err)
				}
			}},
		{name: "tool keys are repo-relative", req: lockops.AcquireRequest{Keys: []string{"src/a.go"}, Tool: true},
			check: func(t *testing.T, res lockops.AcquireResult, err error) {
				if err != nil || res.Locks[0].Lock.Key != "src/a.go" {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "tool without keys", req: lockops.AcquireRequest{Tool: true},
			check: func(t *testing.T, _ lockops.AcquireResult, err error) { wantErr[*UsageError](t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLockFixture(t)
			me, other := f.as("me"), f.as("other")
			if tt.setup != nil {
				tt.setup(f, other)
			}
			res, err := me.Locks().Acquire(ctx, tt.req)
			tt.check(t, res, err)
		})
	}
}

func TestAcquireLocksRenewsOwn(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me := f.as("me")
	f.take(me, "src/a.go")
	f.clock.Add(10 * time.Minute)
	res, err := me.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"src/a.go"}, WarnPaths: true})
	if err != nil || !res.Locks[0].Renewed || !res.Locks[0].Lock.ExpiresAt.Equal(f.clock.Now().Add(30*time.Minute)) {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestAcquireLocksPackage(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	f.repo.Write("work-packages.yaml", "packages:\n  - id: WP-1\n    title: the first\n    locks:\n      files: [src/a.go]\n      keys: ['api:GET /v1/users']\n")
	me := f.as("me")
	res, err := me.Locks().Acquire(ctx, lockops.AcquireRequest{Package: "WP-1"})
	if err != nil || len(res.Locks) != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	for _, r := range res.Locks {
		if r.Lock.Reason != "the first" || r.Lock.Action != "package:WP-1" {
			t.Fatalf("lock %+v: want the package's title as reason and its action", r.Lock)
		}
	}
	_, err = me.Locks().Acquire(ctx, lockops.AcquireRequest{Package: "WP-9"})
	wantErr[*UsageError](t, err)
}

func TestReleaseLocks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		req   lockops.ReleaseRequest
		check func(t *testing.T, res locks.ReleaseResult, err error)
	}{
		{name: "mine", req: lockops.ReleaseRequest{Keys: []string{"src/a.go"}},
			check: func(t *testing.T, res locks.ReleaseResult, err error) {
				if err != nil || len(res.Removed) != 1 || len(res.Forced) != 0 {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "not mine", req: lockops.ReleaseRequest{Keys: []string{"api:GET /v1/users"}},
			check: func(t *testing.T, _ locks.ReleaseResult, err error) { wantErr[*locks.NotOwnerError](t, err) }},
		{name: "not mine, forced", req: lockops.ReleaseRequest{Keys: []string{"api:GET /v1/users"}, Force: true},
			check: func(t *testing.T, res locks.ReleaseResult, err error) {
				if err != nil || len(res.Forced) != 1 || res.Forced[0].Holder != "other" {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "not held", req: lockops.ReleaseRequest{Keys: []string{"env:staging"}},
			check: func(t *testing.T, res locks.ReleaseResult, err error) {
				if err != nil || !slices.Equal(res.Missing, []string{"env:staging"}) {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "invalid key", req: lockops.ReleaseRequest{Keys: []string{"api:get /v1/users"}},
			check: func(t *testing.T, _ locks.ReleaseResult, err error) { wantErr[*lockkey.Error](t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLockFixture(t)
			me, other := f.as("me"), f.as("other")
			f.take(me, "src/a.go")
			f.take(other, "api:GET /v1/users")
			res, err := me.Locks().Release(ctx, tt.req)
			tt.check(t, res, err)
		})
	}
}

func TestRefreshLocks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(f *lockFixture, me, other *Workspace)
		req   lockops.RefreshRequest
		check func(t *testing.T, f *lockFixture, ls []locks.Lock, err error)
	}{
		{name: "mine, by default", req: lockops.RefreshRequest{Keys: []string{"src/a.go"}},
			check: func(t *testing.T, f *lockFixture, ls []locks.Lock, err error) {
				if err != nil || len(ls) != 1 || !ls[0].ExpiresAt.Equal(f.clock.Now().Add(30*time.Minute)) {
					t.Fatalf("%+v, %v", ls, err)
				}
			}},
		{name: "mine, exactly shorter", req: lockops.RefreshRequest{Keys: []string{"src/a.go"}, TTL: time.Minute},
			check: func(t *testing.T, f *lockFixture, ls []locks.Lock, err error) {
				if err != nil || !ls[0].ExpiresAt.Equal(f.clock.Now().Add(time.Minute)) {
					t.Fatalf("%+v, %v", ls, err)
				}
			}},
		{name: "not mine", req: lockops.RefreshRequest{Keys: []string{"api:GET /v1/users"}},
			check: func(t *testing.T, _ *lockFixture, _ []locks.Lock, err error) { wantErr[*locks.NotOwnerError](t, err) }},
		{name: "not held", req: lockops.RefreshRequest{Keys: []string{"env:staging"}},
			check: func(t *testing.T, _ *lockFixture, _ []locks.Lock, err error) { wantErr[*locks.LostError](t, err) }},
		{name: "lapsed and taken over",
			setup: func(f *lockFixture, _, other *Workspace) {
				f.clock.Add(time.Hour)
				f.take(other, "src/a.go")
			},
			req:   lockops.RefreshRequest{Keys: []string{"src/a.go"}},
			check: func(t *testing.T, _ *lockFixture, _ []locks.Lock, err error) { wantErr[*locks.NotOwnerError](t, err) }},
		{name: "refreshed before the key that fails", req: lockops.RefreshRequest{Keys: []string{"src/a.go", "env:staging"}},
			check: func(t *testing.T, _ *lockFixture, ls []locks.Lock, err error) {
				wantErr[*locks.LostError](t, err)
				if len(ls) != 1 || ls[0].Key != "src/a.go" {
					t.Fatalf("refreshed %+v, want src/a.go", ls)
				}
			}},
		{name: "invalid key", req: lockops.RefreshRequest{Keys: []string{"api:get /v1/users"}},
			check: func(t *testing.T, _ *lockFixture, _ []locks.Lock, err error) { wantErr[*lockkey.Error](t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLockFixture(t)
			me, other := f.as("me"), f.as("other")
			f.take(me, "src/a.go")
			f.take(other, "api:GET /v1/users")
			f.clock.Add(10 * time.Minute)
			if tt.setup != nil {
				tt.setup(f, me, other)
			}
			ls, err := me.Locks().Refresh(ctx, tt.req)
			tt.check(t, f, ls, err)
		})
	}
}

func TestCheckLocks(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me, other := f.as("me"), f.as("other")
	f.take(me, "src/a.go")
	f.take(other, "api:GET /v1/users")
	tests := []struct {
		name   string
		keys   []string
		states []locks.KeyState
		held   bool
	}{
		{name: "mine", keys: []string{"src/a.go"}, states: []locks.KeyState{locks.StateMine}},
		{name: "free", keys: []string{"env:staging"}, states: []locks.KeyState{locks.StateFree}},
		{name: "held by another", keys: []string{"src/a.go", "api:GET /v1/users"},
			states: []locks.KeyState{locks.StateMine, locks.StateHeld}, held: true},
		{name: "a pattern over my lock", keys: []string{"src/**"}, states: []locks.KeyState{locks.StateMine}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := me.Locks().Check(ctx, lockops.CheckRequest{Keys: tt.keys})
			if err != nil {
				t.Fatal(err)
			}
			var states []locks.KeyState
			for _, s := range res.Statuses {
				states = append(states, s.State)
			}
			if !slices.Equal(states, tt.states) || res.Held != tt.held {
				t.Fatalf("states %v held %v, want %v %v", states, res.Held, tt.states, tt.held)
			}
		})
	}
	_, err := me.Locks().Check(ctx, lockops.CheckRequest{Keys: []string{"api:get /v1/users"}})
	wantErr[*lockkey.Error](t, err)
}

func TestListLocks(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me, other := f.as("me"), f.as("other")
	f.take(me, "src/a.go")
	if _, err := other.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"env:short"}, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	f.take(other, "api:GET /v1/users")
	f.clock.Add(10 * time.Minute) // env:short has expired
	if err := os.WriteFile(me.Store.Where("env:broken"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	keys := func(rows []lockops.LockRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.Key)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name    string
		req     lockops.ListRequest
		keys    []string
		expired int
	}{
		{name: "live", req: lockops.ListRequest{Recover: true}, keys: []string{"api:GET /v1/users", "env:broken", "src/a.go"}, expired: 1},
		{name: "all", req: lockops.ListRequest{All: true}, keys: []string{"api:GET /v1/users", "env:broken", "env:short", "src/a.go"}},
		{name: "mine", req: lockops.ListRequest{Mine: true}, keys: []string{"src/a.go"}},
		{name: "stale", req: lockops.ListRequest{Stale: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := me.Locks().List(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(res.Rows); !slices.Equal(got, tt.keys) || res.Expired != tt.expired {
				t.Fatalf("keys %q expired %d, want %q %d", got, res.Expired, tt.keys, tt.expired)
			}
			for _, r := range res.Rows {
				if r.Corrupt != (r.Key == "env:broken") || r.Corrupt && (r.Hint == "" || r.Error == "") {
					t.Fatalf("row %+v: only env:broken is corrupt, with its error and a hint", r)
				}
				if r.Key == "src/a.go" && r.AgeSeconds != 600 {
					t.Fatalf("age %d, want 600 by the request's clock", r.AgeSeconds)
				}
			}
		})
	}
	res, err := me.Locks().List(ctx, lockops.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, v := range res.Live() {
		live = append(live, v.Key)
	}
	if !slices.Equal(live, []string{"api:GET /v1/users", "src/a.go"}) {
		t.Fatalf("live %q: want the readable unexpired locks by key", live)
	}
}

func TestListLocksStale(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me := f.as("me")
	if _, err := me.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"src/a.go"}, TTL: 48 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(25 * time.Hour) // past the default locks.stale_minutes
	res, err := me.Locks().List(ctx, lockops.ListRequest{Stale: true})
	if err != nil || len(res.Rows) != 1 || !res.Rows[0].Stale || !res.Live()[0].Stale {
		t.Fatalf("%+v, %v", res, err)
	}
}

func TestListLocksLookAlike(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me := f.as("me")
	// NFC and NFD spellings are one key; a Cyrillic с only looks like c.
	f.take(me, "src/caf\u00e9.go", "src/\u0441af\u00e9.go")
	res, err := me.Locks().List(ctx, lockops.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range res.Rows {
		if r.LookAlike != "" {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("%+v: want the look-alike keys marked", res.Rows)
	}
}

func TestClearLocks(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		req   func(me *Workspace) lockops.ClearRequest
		check func(t *testing.T, me *Workspace, res lockops.ClearResult, err error)
	}{
		{name: "without force", req: func(*Workspace) lockops.ClearRequest { return lockops.ClearRequest{Target: "api:GET /v1/users"} },
			check: func(t *testing.T, _ *Workspace, _ lockops.ClearResult, err error) { wantErr[*UsageError](t, err) }},
		{name: "record without force", req: func(*Workspace) lockops.ClearRequest { return lockops.ClearRequest{Record: "x"} },
			check: func(t *testing.T, _ *Workspace, _ lockops.ClearResult, err error) { wantErr[*UsageError](t, err) }},
		{name: "another's lock", req: func(*Workspace) lockops.ClearRequest {
			return lockops.ClearRequest{Target: "api:GET /v1/users", Force: true}
		},
			check: func(t *testing.T, _ *Workspace, res lockops.ClearResult, err error) {
				if err != nil || res.Cleared == nil || res.Cleared.Holder != "other" || res.Age != 10*time.Minute || res.AgeSeconds != 600 || res.Store != "file" {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "a task id", req: func(*Workspace) lockops.ClearRequest { return lockops.ClearRequest{Target: "T-1", Force: true} },
			check: func(t *testing.T, _ *Workspace, res lockops.ClearResult, err error) {
				if err != nil || res.Key != "task:T-1" {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "no such lock", req: func(*Workspace) lockops.ClearRequest { return lockops.ClearRequest{Target: "src/none.go", Force: true} },
			check: func(t *testing.T, _ *Workspace, _ lockops.ClearResult, err error) { wantErr[*UsageError](t, err) }},
		{name: "invalid key of no record", req: func(*Workspace) lockops.ClearRequest {
			return lockops.ClearRequest{Target: "api:get /v1/users", Force: true}
		},
			check: func(t *testing.T, _ *Workspace, _ lockops.ClearResult, err error) { wantErr[*lockkey.Error](t, err) }},
		{name: "corrupt record by key", req: func(*Workspace) lockops.ClearRequest { return lockops.ClearRequest{Target: "env:broken", Force: true} },
			check: func(t *testing.T, me *Workspace, res lockops.ClearResult, err error) {
				if err != nil || !res.Corrupt || res.Key != "env:broken" || res.Record != me.Store.Where("env:broken") {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "corrupt record by file", req: func(me *Workspace) lockops.ClearRequest {
			return lockops.ClearRequest{Record: me.Store.Where("env:broken"), Force: true}
		},
			check: func(t *testing.T, _ *Workspace, res lockops.ClearResult, err error) {
				if err != nil || !res.Corrupt || res.Key != "env:broken" || res.Record == "" {
					t.Fatalf("%+v, %v", res, err)
				}
			}},
		{name: "readable record by file", req: func(me *Workspace) lockops.ClearRequest {
			return lockops.ClearRequest{Record: me.Store.Where("src/a.go"), Force: true}
		},
			check: func(t *testing.T, _ *Workspace, _ lockops.ClearResult, err error) { wantErr[*UsageError](t, err) }},
		{name: "no record file", req: func(*Workspace) lockops.ClearRequest {
			return lockops.ClearRequest{Record: "nothing-here", Force: true}
		},
			check: func(t *testing.T, _ *Workspace, _ lockops.ClearResult, err error) { wantErr[*UsageError](t, err) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLockFixture(t)
			me, other := f.as("me"), f.as("other")
			f.take(me, "src/a.go")
			f.take(other, "api:GET /v1/users")
			if _, err := other.Mgr.Acquire(ctx, locks.Request{Keys: []string{"task:T-1"}, Owner: other.Me, TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(me.Store.Where("env:broken"), []byte("{not json"), 0o644); err != nil {
				t.Fatal(err)
			}
			f.clock.Add(10 * time.Minute)
			res, err := me.Locks().Clear(ctx, tt.req(me))
			tt.check(t, me, res, err)
		})
	}
}

func TestPruneLocks(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me, other := f.as("me"), f.as("other")
	f.take(me, "src/a.go")
	if _, err := other.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{"env:short"}, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(10 * time.Minute)
	pruned, err := me.Locks().Prune(ctx)
	if err != nil || len(pruned) != 1 || pruned[0].Key != "env:short" || pruned[0].Holder != "other" || pruned[0].ExpiredFor != 9*time.Minute {
		t.Fatalf("%+v, %v", pruned, err)
	}
	res, err := me.Locks().List(ctx, lockops.ListRequest{All: true})
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Key != "src/a.go" {
		t.Fatalf("left %+v, %v: want only the live lock", res.Rows, err)
	}
}

func TestCandidates(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	f.repo.Write("work-packages.yaml", "packages:\n  - id: WP-1\n    title: one\n  - id: WP-2\n    title: two\n  - id: X-1\n    title: x\n")
	me, other := f.as("me"), f.as("other")
	f.take(me, "src/a.go", "env:staging")
	f.take(other, "src/b.go")
	tests := []struct {
		req  lockops.CandidatesRequest
		want []string
	}{
		{lockops.CandidatesRequest{Of: lockops.HeldKeys}, []string{"env:staging", "src/a.go"}},
		{lockops.CandidatesRequest{Of: lockops.HeldKeys, Prefix: "src/"}, []string{"src/a.go"}},
		{lockops.CandidatesRequest{Of: lockops.PackageIDs, Prefix: "WP"}, []string{"WP-1", "WP-2"}},
		{lockops.CandidatesRequest{Of: lockops.ScopeProfiles}, []string{"agents", "backfill"}},
		{lockops.CandidatesRequest{Of: lockops.ScopeProfiles, Prefix: "z"}, nil},
	}
	for _, tt := range tests {
		got, err := me.Locks().Candidates(ctx, tt.req)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Candidates(%+v) = %q, %v; want %q", tt.req, got, err, tt.want)
		}
	}
	loaded, err := Load(ctx, Options{Dir: f.repo.Dir, As: "me", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loaded.Locks().Candidates(ctx, lockops.CandidatesRequest{Of: lockops.HeldKeys}); err == nil {
		t.Fatal("held keys of a workspace whose store is not open: want an error")
	}
}

func TestRestoreSessionNeedsRedis(t *testing.T) {
	f := newLockFixture(t)
	_, err := f.as("me").Locks().RestoreSession(context.Background())
	wantErr[*UsageError](t, err)
}
