package service

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/lockops"
)

// brokenAppend records intents but fails every append: a command killed
// between its change and its event.
type brokenAppend struct{ locks.EventSink }

func (brokenAppend) Append(...journal.Event) error { return errors.New("disk full") }

// interrupted leaves e's release of key made in the store and not
// recorded in the journal: an interrupted command.
func interrupted(t *testing.T, e *Workspace, key string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{key}}); err != nil {
		t.Fatal(err)
	}
	broken := &locks.Manager{Store: e.Mgr.Store, Host: e.Mgr.Host, PID: e.Mgr.PID, Now: e.Mgr.Now,
		Events: brokenAppend{e.Mgr.Events}}
	var je *locks.JournalError
	if _, err := broken.Release(ctx, []string{key}, e.Me, false); !errors.As(err, &je) || !je.Made {
		t.Fatalf("release with the journal broken: %v, want it made and not recorded", err)
	}
}

func TestRecover(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// interrupt leaves an interrupted release; cloneStore is the
		// clone's recorded store ("" the file store).
		interrupt  bool
		cloneStore string
		// wantRecorded: the release is in the journal after;
		// wantOpened: recoverInterrupted opened the store; wantWarning a part of
		// what it said.
		wantRecorded, wantOpened bool
		wantWarning              string
	}{
		{name: "nothing interrupted: the store stays closed"},
		{name: "an interrupted release is recorded", interrupt: true, wantRecorded: true, wantOpened: true},
		{name: "a store that cannot be opened: a warning, showing goes on", interrupt: true,
			cloneStore: "redis://127.0.0.1:1/0", wantWarning: "the events of an interrupted lockgate command are not recorded yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _, open := queueRepo(t, queuePackages)
			if tt.interrupt {
				interrupted(t, open("alice"), "src/a.go")
			}
			if tt.cloneStore != "" {
				r.Git("config", CloneStoreKey, tt.cloneStore)
			}
			var mu sync.Mutex
			var said []string
			e, err := Load(ctx, Options{Dir: r.Dir, As: "bob", Getenv: func(string) string { return "" },
				Clock: func() time.Time { return time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC) },
				Notify: func(level, msg string, _ ...string) {
					mu.Lock()
					defer mu.Unlock()
					said = append(said, level+": "+msg)
				}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			e.RecoverInterrupted(ctx)
			if opened := e.Mgr != nil && e.Store != nil; opened != tt.wantOpened {
				t.Fatalf("store opened %v, want %v", opened, tt.wantOpened)
			}
			mu.Lock()
			all := strings.Join(said, "\n")
			mu.Unlock()
			if !strings.Contains(all, tt.wantWarning) || tt.wantWarning == "" && all != "" {
				t.Fatalf("said %q, want %q", all, tt.wantWarning)
			}
			evs, err := e.JournalFile().Read(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			recorded := false
			for _, ev := range evs {
				recorded = recorded || ev.Action == journal.ActionRelease && ev.Key == "src/a.go" && ev.Worker == "alice"
			}
			if recorded != tt.wantRecorded {
				t.Fatalf("release recorded %v, want %v; journal %+v", recorded, tt.wantRecorded, evs)
			}
			if tt.wantRecorded && e.JournalFile().HasIntents() {
				t.Fatal("the intent is left after it was recorded")
			}
		})
	}
}
