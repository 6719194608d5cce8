package service

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/lockops"
)

func TestLog(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	me, other := f.as("me"), f.as("other")
	f.take(me, "src/a.go")
	f.clock.Add(2 * time.Hour)
	f.take(other, "env:staging")
	if _, err := other.Locks().Release(ctx, lockops.ReleaseRequest{Keys: []string{"env:staging"}}); err != nil {
		t.Fatal(err)
	}
	type ev struct{ worker, action, key string }
	tests := []struct {
		name string
		req  LogRequest
		want []ev
	}{
		{name: "all", want: []ev{{"me", journal.ActionAcquire, "src/a.go"}, {"other", journal.ActionAcquire, "env:staging"}, {"other", journal.ActionRelease, "env:staging"}}},
		{name: "since", req: LogRequest{Since: time.Hour}, want: []ev{{"other", journal.ActionAcquire, "env:staging"}, {"other", journal.ActionRelease, "env:staging"}}},
		{name: "worker", req: LogRequest{Worker: "me"}, want: []ev{{"me", journal.ActionAcquire, "src/a.go"}}},
		{name: "action", req: LogRequest{Action: journal.ActionRelease}, want: []ev{{"other", journal.ActionRelease, "env:staging"}}},
		{name: "key", req: LogRequest{Key: "src/a.go"}, want: []ev{{"me", journal.ActionAcquire, "src/a.go"}}},
		{name: "none", req: LogRequest{Worker: "nobody"}, want: []ev{}},
		{name: "from", req: LogRequest{From: f.clock.Now().Add(-time.Hour)}, want: []ev{{"other", journal.ActionAcquire, "env:staging"}, {"other", journal.ActionRelease, "env:staging"}}},
		{name: "until", req: LogRequest{Until: f.clock.Now().Add(-time.Hour)}, want: []ev{{"me", journal.ActionAcquire, "src/a.go"}}},
		{name: "from and since: the later", req: LogRequest{From: f.clock.Now().Add(-3 * time.Hour), Since: time.Hour}, want: []ev{{"other", journal.ActionAcquire, "env:staging"}, {"other", journal.ActionRelease, "env:staging"}}},
		{name: "limit: the newest", req: LogRequest{Limit: 1}, want: []ev{{"other", journal.ActionRelease, "env:staging"}}},
		{name: "limit above the count", req: LogRequest{Limit: 10, Worker: "me"}, want: []ev{{"me", journal.ActionAcquire, "src/a.go"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Loaded only: the log needs no lock store.
			e, err := Load(ctx, Options{Dir: f.repo.Dir, As: "me", Clock: f.clock.Now, Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := e.Log(ctx, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			got := []ev{}
			for _, e := range evs {
				got = append(got, ev{e.Worker, e.Action, e.Key})
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("events %v, want %v", got, tt.want)
			}
			if evs == nil {
				t.Fatal("nil events: --json would print null, not []")
			}
		})
	}
	e, err := Load(ctx, Options{Dir: f.repo.Dir, As: "me", Clock: f.clock.Now, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	var usage *UsageError
	if _, err := e.Log(ctx, LogRequest{Limit: -1}); !errors.As(err, &usage) {
		t.Fatalf("a negative limit: %v, want a usage error", err)
	}
}
