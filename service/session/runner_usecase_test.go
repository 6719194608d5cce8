package session_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/session"
)

// profilePolicy defines one scope profile, backfill.
const profilePolicy = "version: 1\nworkflow: {auto_commit: false}\nscope:\n  profiles:\n    backfill: {allow: [tests/**]}\n"

func TestRunner(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		profile string
		// store is --store ("" the clone's); cloneStore the clone's
		// recorded one ("" the default file store).
		store, cloneStore string
		// wantStore: the runner reads an opened store; wantStoreErr: it
		// carries why the store could not be opened instead.
		wantStore, wantStoreErr bool
		wantErr                 any
	}{
		{name: "the clone's store", wantStore: true},
		{name: "a profile the policy defines", profile: "backfill", wantStore: true},
		{name: "a profile it does not", profile: "nope", wantErr: new(*session.UnknownProfileError)},
		{name: "an unknown profile is invalid input", profile: "nope", wantErr: new(*session.UsageError)},
		{name: "a store the hooks do not read", store: "redis://127.0.0.1:1/0", cloneStore: "file", wantErr: new(*session.StoreMismatchError)},
		{name: "a clone store that is down is the checks' to judge", cloneStore: "redis://127.0.0.1:1/0", wantStoreErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repoWith(t, map[string]string{".lockgate.yaml": profilePolicy})
			if tt.cloneStore != "" {
				r.Git("config", session.CloneStoreKey, tt.cloneStore)
			}
			e, err := session.Load(ctx, session.Options{Dir: r.Dir, As: "alice", Store: tt.store, Getenv: envOf(), Clock: fixedClock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			h, err := e.Runner(ctx, session.Purpose{}, tt.profile)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			ck := h.Checker
			if (ck.Store != nil) != tt.wantStore || (ck.StoreErr != nil) != tt.wantStoreErr {
				t.Fatalf("store %v, store error %v; want a store %v, an error %v", ck.Store, ck.StoreErr, tt.wantStore, tt.wantStoreErr)
			}
			var unavail *locks.UnavailableError
			if tt.wantStoreErr && !errors.As(ck.StoreErr, &unavail) {
				t.Fatalf("store error %v (%T), want the store unavailable", ck.StoreErr, ck.StoreErr)
			}
			if ck.Profile != tt.profile || ck.Me != e.Owner() || !ck.Now.Equal(epoch) {
				t.Fatalf("checker %+v, want profile %q as %+v at %s", ck, tt.profile, e.Owner(), epoch)
			}
		})
	}
}

func TestLogRunner(t *testing.T) {
	ctx := context.Background()
	r := repoWith(t, map[string]string{".lockgate.yaml": profilePolicy, "tests/a_test.go": "package a\n"})
	e, err := session.Load(ctx, session.Options{Dir: r.Dir + "/tests", As: "alice", Getenv: envOf(), Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	h, err := e.LogRunner(ctx, "backfill")
	if err != nil {
		t.Fatal(err)
	}
	// No store: verify judges by the lock log, in a clone that may have none.
	if h.Checker.Store != nil || h.Checker.StoreErr != nil || h.Checker.Dir != "tests/" || h.Checker.Profile != "backfill" {
		t.Fatalf("checker %+v, want no store, the user's directory tests/ and the profile", h.Checker)
	}
	if _, err := e.LogRunner(ctx, "nope"); err == nil {
		t.Fatal("LogRunner with an unknown profile: no error")
	}
}

func TestWarnSkipped(t *testing.T) {
	tests := []struct {
		lines []int
		want  []string
	}{
		{},
		{lines: []int{3}, want: []string{"warning: J:3 is not an event; skipped"}},
		{lines: []int{1, 2, 3, 4, 5, 6, 7}, want: []string{
			"warning: J:1 is not an event; skipped", "warning: J:2 is not an event; skipped", "warning: J:3 is not an event; skipped",
			"warning: J:4 is not an event; skipped", "warning: J:5 is not an event; skipped",
			"warning: J: … and 2 more lines that are not events; skipped"}},
	}
	r := repoWith(t, nil)
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.lines), func(t *testing.T) {
			var said notes
			e, err := session.Load(context.Background(), session.Options{Dir: r.Dir, As: "alice", Getenv: envOf(), Clock: fixedClock, Notify: said.Notify})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			e.WarnSkipped("J", tt.lines)
			if !slices.Equal(said.Messages(), tt.want) {
				t.Fatalf("said %q, want %q", said.Messages(), tt.want)
			}
		})
	}
}
