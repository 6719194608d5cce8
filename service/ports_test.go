package service_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
)

func TestAllocatePorts(t *testing.T) {
	r := repoWith(t, nil)
	alice := openAs(t, r.Dir, "alice", nil)
	tests := []struct {
		name    string
		req     lockops.PortsRequest
		wantTTL time.Duration // 0: any lifetime
		wantErr any
	}{
		{name: "two for an hour", req: lockops.PortsRequest{Count: 2, TTL: time.Hour}, wantTTL: time.Hour},
		{name: "one by worker type", req: lockops.PortsRequest{Count: 1}},
		{name: "none", req: lockops.PortsRequest{Count: 0}, wantErr: new(*service.UsageError)},
		{name: "negative lifetime", req: lockops.PortsRequest{Count: 1, TTL: -time.Second}, wantErr: new(*service.UsageError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ls, err := alice.Locks().AllocatePorts(context.Background(), tt.req)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			if len(ls) != tt.req.Count {
				t.Fatalf("leased %d ports, want %d", len(ls), tt.req.Count)
			}
			for _, l := range ls {
				ttl := l.ExpiresAt.Sub(epoch)
				if !strings.HasPrefix(l.Key, lockops.PortNS+":") || l.Session != alice.Owner().Session || ttl <= 0 || tt.wantTTL != 0 && ttl != tt.wantTTL {
					t.Fatalf("lease %+v for %s, want a port of %s for %s", l, ttl, alice.Owner().Session, tt.wantTTL)
				}
			}
		})
	}
}

func TestPortLeases(t *testing.T) {
	r := repoWith(t, nil)
	ctx := context.Background()
	alice, bob := openAs(t, r.Dir, "alice", nil), openAs(t, r.Dir, "bob", nil)
	mine, err := alice.Locks().AllocatePorts(ctx, lockops.PortsRequest{Count: 2, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := bob.Locks().AllocatePorts(ctx, lockops.PortsRequest{Count: 1, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	port := func(l locks.Lock) string { return strings.TrimPrefix(l.Key, lockops.PortNS+":") }
	rows, err := alice.Locks().ListPorts(ctx)
	if err != nil || len(rows) != 3 || !slices.IsSortedFunc(rows, func(a, b lockops.PortRow) int { return a.Port - b.Port }) {
		t.Fatalf("listed %+v, %v; want three leases by port", rows, err)
	}
	if rows[0].Port < 1 || rows[0].Holder == "" {
		t.Fatalf("listed %+v, want port and holder", rows[0])
	}
	later := loadAs(t, r.Dir, "carol", func() time.Time { return epoch.Add(3 * time.Hour) })
	if err := later.Open(ctx, service.Purpose{}); err != nil {
		t.Fatal(err)
	}
	if rows, err := later.Locks().ListPorts(ctx); err != nil || len(rows) != 0 {
		t.Fatalf("listed %+v, %v after the leases expired; want none", rows, err)
	}
	tests := []struct {
		name string
		as   *service.Workspace
		do   func(e *service.Workspace) ([]locks.Lock, error)
		// wantKeys are the leases the step refreshed or released.
		wantKeys []string
		wantErr  any
	}{
		{name: "refresh all of mine", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			return e.Locks().RefreshPorts(ctx, lockops.PortsRefreshRequest{TTL: 2 * time.Hour})
		}, wantKeys: []string{mine[0].Key, mine[1].Key}},
		{name: "refresh a port named", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			return e.Locks().RefreshPorts(ctx, lockops.PortsRefreshRequest{Ports: []string{port(mine[0])}, TTL: time.Minute})
		}, wantKeys: []string{mine[0].Key}},
		{name: "refresh another's", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			return e.Locks().RefreshPorts(ctx, lockops.PortsRefreshRequest{Ports: []string{port(theirs[0])}})
		}, wantErr: new(*locks.NotOwnerError)},
		{name: "refresh no port", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			return e.Locks().RefreshPorts(ctx, lockops.PortsRefreshRequest{Ports: []string{"http"}})
		}, wantErr: new(*service.UsageError)},
		{name: "release another's", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			res, err := e.Locks().ReleasePorts(ctx, lockops.PortsReleaseRequest{Ports: []string{port(theirs[0])}})
			return res.Removed, err
		}, wantErr: new(*locks.NotOwnerError)},
		{name: "release port 0", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			res, err := e.Locks().ReleasePorts(ctx, lockops.PortsReleaseRequest{Ports: []string{"0"}})
			return res.Removed, err
		}, wantErr: new(*service.UsageError)},
		{name: "release another's with force", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			res, err := e.Locks().ReleasePorts(ctx, lockops.PortsReleaseRequest{Ports: []string{port(theirs[0])}, Force: true})
			return res.Forced, err
		}, wantKeys: []string{theirs[0].Key}},
		{name: "release all of mine", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			res, err := e.Locks().ReleasePorts(ctx, lockops.PortsReleaseRequest{})
			return res.Removed, err
		}, wantKeys: []string{mine[0].Key, mine[1].Key}},
		{name: "release when none are left", as: alice, do: func(e *service.Workspace) ([]locks.Lock, error) {
			res, err := e.Locks().ReleasePorts(ctx, lockops.PortsReleaseRequest{})
			return res.Removed, err
		}},
	}
	for _, tt := range tests {
		ls, err := tt.do(tt.as)
		wantError(t, err, tt.wantErr)
		var keys []string
		for _, l := range ls {
			keys = append(keys, l.Key)
		}
		slices.Sort(keys)
		want := slices.Sorted(slices.Values(tt.wantKeys))
		if !slices.Equal(keys, want) {
			t.Fatalf("%s: %v, want %v", tt.name, keys, want)
		}
	}
	if rows, err := bob.Locks().ListPorts(ctx); err != nil || len(rows) != 0 {
		t.Fatalf("left %+v, %v; want no lease", rows, err)
	}
}
