package service_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
)

// A server's requests are done once their events are in the journal; the
// events reach the workflow branch in the background, and stop leaves
// none behind.
func TestBackground(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		policy string
		// wantOnBranch: the events are on the workflow branch once stopped.
		wantOnBranch bool
	}{
		{name: "events committed to the branch by stop", policy: "version: 1\nworkflow: {auto_commit: true, auto_push: false}\n", wantOnBranch: true},
		{name: "journal only", policy: "version: 1\nworkflow: {auto_commit: false}\n"},
	}
	const requests = 5
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repoWith(t, map[string]string{".lockgate.yaml": tt.policy})
			server := openAs(t, r.Dir, "server", nil)
			stop := server.Background()
			for i := range requests {
				if _, err := server.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: []string{fmt.Sprintf("api:GET /r%d", i)}}); err != nil {
					t.Fatal(err)
				}
			}
			stop()
			evs, err := server.JournalFile().Read(epoch.Add(-1))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, ev := range evs {
				if ev.Action == journal.ActionAcquire {
					n++
				}
			}
			if n != requests {
				t.Fatalf("%d acquisitions in the journal, want %d", n, requests)
			}
			// A sync after stop finds every event on the branch already,
			// or, without auto_commit, commits them all.
			s, err := server.SyncWorkflow(ctx, service.SyncRequest{NoPush: true})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantOnBranch && (s.Committed != 0 || s.Already != s.Journal) ||
				!tt.wantOnBranch && (s.Already != 0 || s.Committed != s.Journal) || s.Journal < requests {
				t.Fatalf("synced %+v after stop; events on the branch before: %v", s, tt.wantOnBranch)
			}
		})
	}
}

// The branch writer opens the workflow branch once a run, and its
// writes never renew or release a `workflow` lock the user holds.
func TestBranchWriter(t *testing.T) {
	ctx := context.Background()
	r := repoWith(t, map[string]string{".lockgate.yaml": logPolicy})
	alice := openAs(t, r.Dir, "alice", nil)
	takeKeys(t, alice, "workflow")
	before, err := alice.Locks().List(ctx, lockops.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	open := alice.BranchWriter(ctx)
	w, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := open(); again != w || err != nil {
		t.Fatalf("opened again: %p, %v; want the writer of the first opening, %p", again, err, w)
	}
	evs, err := alice.JournalFile().Read(epoch.Add(-1))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := w.Commit(ctx, evs); err != nil || n != len(evs) {
		t.Fatalf("committed %d of %d events: %v", n, len(evs), err)
	}
	after, err := alice.Locks().List(ctx, lockops.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if b, a := before.Live(), after.Live(); len(a) != 1 || a[0] != b[0] {
		t.Fatalf("the user's workflow lock %+v after the write, want it as it was: %+v", a, b)
	}
	s, err := alice.SyncWorkflow(ctx, service.SyncRequest{NoPush: true})
	if err != nil || s.Committed != 0 || s.Already != len(evs) {
		t.Fatalf("synced %+v, %v: want the %d events on the branch already", s, err, len(evs))
	}
}
