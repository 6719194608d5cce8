package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/workflow"
)

func TestWithRequest(t *testing.T) {
	ctx := service.WithRequest(context.Background(), "trace")
	one, two := locks.AuditOf(ctx), locks.AuditOf(service.WithRequest(context.Background(), ""))
	if one.TraceID != "trace" || two.TraceID != "" || one.RequestID == "" || one.RequestID == two.RequestID {
		t.Fatalf("requests %+v and %+v: want the trace given and an id of each", one, two)
	}
}

func TestSyncWorkflow(t *testing.T) {
	// Without auto_commit, events wait in the journal for a sync.
	r := repoWith(t, map[string]string{".lockgate.yaml": "version: 1\nworkflow: {auto_commit: false}\n"})
	ctx := context.Background()
	alice := openAs(t, r.Dir, "alice", nil)
	if _, err := alice.Locks().Pause(ctx, lockops.PauseRequest{Feature: "FEAT-1"}); err != nil {
		t.Fatal(err)
	}
	remote := filepath.Join(t.TempDir(), "remote.git")
	tests := []struct {
		name string
		req  service.SyncRequest
		// before runs ahead of the sync.
		before                     func()
		wantCommitted, wantAlready int
		wantPushed                 bool
		wantErr                    any
		wantNoRemote               bool
	}{
		{name: "commits what waits", req: service.SyncRequest{NoPush: true}, wantCommitted: 1},
		{name: "again commits nothing", req: service.SyncRequest{}, wantAlready: 1},
		{name: "push without a remote", req: service.SyncRequest{Push: true}, wantErr: new(*workflow.PushError), wantNoRemote: true},
		{name: "push", req: service.SyncRequest{Push: true}, before: func() {
			r.Git("init", "-q", "--bare", remote)
			r.Git("remote", "add", "origin", remote)
		}, wantAlready: 1, wantPushed: true},
		{name: "no-push wins", req: service.SyncRequest{Push: true, NoPush: true}, wantAlready: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			s, err := alice.SyncWorkflow(ctx, tt.req)
			wantError(t, err, tt.wantErr)
			if errors.Is(err, workflow.ErrNoRemote) != tt.wantNoRemote {
				t.Fatalf("error %v: no remote %v, want %v", err, !tt.wantNoRemote, tt.wantNoRemote)
			}
			if tt.wantErr != nil {
				return
			}
			if s.Committed != tt.wantCommitted || s.Already != tt.wantAlready || s.Journal != 1 || s.Pushed != tt.wantPushed || s.Branch != "lockgate/workflow" {
				t.Fatalf("synced %+v, want %d committed, %d already there, pushed %v", s, tt.wantCommitted, tt.wantAlready, tt.wantPushed)
			}
		})
	}
	if got := r.Git("--git-dir", remote, "rev-parse", "--verify", "-q", "refs/heads/lockgate/workflow"); got == "" {
		t.Fatal("the workflow branch is not on the remote")
	}
}
