package service_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

// A view never carries the owner token: whoever reads a listing could
// release the lock with it.
func TestViewsOf(t *testing.T) {
	taskEnd := epoch.Add(time.Hour)
	ls := []locks.Lock{
		{Key: "src/a.go", Holder: "alice", HolderType: "agent", Session: "s1", Token: "secret-1", Reason: "r",
			TaskID: "WP-1", CreatedAt: epoch, ExpiresAt: epoch.Add(30 * time.Minute), TaskExpires: &taskEnd, Fence: 7},
		{Key: "api:GET /x", Holder: "bob", HolderType: "human", Session: "bob", Token: "secret-2", Fence: 8},
	}
	views := session.ViewsOf(ls)
	if len(views) != len(ls) {
		t.Fatalf("%d views of %d locks", len(views), len(ls))
	}
	want := service.LockView{Key: "src/a.go", Holder: "alice", HolderType: "agent", Session: "s1", Reason: "r", TaskID: "WP-1",
		CreatedAt: epoch, ExpiresAt: epoch.Add(30 * time.Minute), TaskExpire: &taskEnd, Fence: 7}
	if views[0] != want || views[0] != service.ViewOf(ls[0]) {
		t.Fatalf("view %+v, want %+v", views[0], want)
	}
	data, err := json.Marshal(views)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "secret") {
		t.Fatalf("views carry a token: %s", data)
	}
	if got := session.ViewsOf(nil); got == nil || len(got) != 0 {
		t.Fatalf("session.ViewsOf(nil) = %#v, want an empty list (JSON [])", got)
	}
}

func TestIsBookkeeping(t *testing.T) {
	tests := []struct {
		name          string
		l             locks.Lock
		want, wantFin bool
	}{
		{name: "a file lock", l: locks.Lock{Key: "src/a.go", Action: "lock"}},
		{name: "a claim's task record", l: locks.Lock{Key: "task:WP-1", Action: session.ClaimAction}},
		{name: "a done package's task record", l: locks.Lock{Key: "task:WP-1", Action: session.DoneAction}, want: true, wantFin: true},
		{name: "a failed package's task record", l: locks.Lock{Key: "task:WP-1", Action: session.FailedAction}, want: true, wantFin: true},
		{name: "done, but not a task record", l: locks.Lock{Key: "api:GET /x", Action: session.DoneAction}},
		{name: "a cooldown", l: locks.Lock{Key: "cooldown:backfill:src/a.go"}, want: true},
		{name: "the planner's cycle", l: locks.Lock{Key: session.PlanCycleKey}, want: true},
		{name: "a branch writer's workflow lock", l: locks.Lock{Key: "workflow", Action: service.BranchWriterAction}, want: true},
		{name: "a person's workflow lock", l: locks.Lock{Key: "workflow", Action: "lock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := session.IsBookkeeping(tt.l); got != tt.want {
				t.Errorf("IsBookkeeping = %v, want %v", got, tt.want)
			}
			if got := session.IsFinishedPackage(tt.l); got != tt.wantFin {
				t.Errorf("IsFinishedPackage = %v, want %v", got, tt.wantFin)
			}
		})
	}
}

func TestPortRows(t *testing.T) {
	ls := []locks.Lock{
		{Key: "port:41000", Holder: "bob", HolderType: "human", Session: "b", ExpiresAt: epoch, Token: "t1"},
		{Key: "port:8080", Holder: "alice", HolderType: "agent", Session: "a", ExpiresAt: epoch.Add(time.Hour), Token: "t2"},
	}
	rows := lockops.PortRows(ls)
	want := []lockops.PortRow{
		{Port: 8080, Holder: "alice", HolderType: "agent", Session: "a", ExpiresAt: epoch.Add(time.Hour)},
		{Port: 41000, Holder: "bob", HolderType: "human", Session: "b", ExpiresAt: epoch},
	}
	if !slices.Equal(rows, want) {
		t.Fatalf("PortRows = %+v, want %+v (by port)", rows, want)
	}
	if rows := lockops.PortRows(nil); rows == nil {
		t.Fatal("PortRows(nil) is nil, want an empty list (JSON [])")
	}
}

func TestAtCommit(t *testing.T) {
	for c, want := range map[string]string{"": " (no commit on this branch yet)", "abc1234": " at abc1234"} {
		if got := queue.AtCommit(c); got != want {
			t.Errorf("AtCommit(%q) = %q, want %q", c, got, want)
		}
	}
}

func TestHookArgs(t *testing.T) {
	tests := []struct {
		hook    string
		args    []string
		wantErr bool
	}{
		{hook: "pre-commit"},
		{hook: "pre-commit", args: []string{"x"}, wantErr: true},
		{hook: "pre-merge-commit", args: []string{"x"}, wantErr: true},
		{hook: "commit-msg", args: []string{".git/COMMIT_EDITMSG"}},
		{hook: "commit-msg", wantErr: true},
		{hook: "commit-msg", args: []string{"a", "b"}, wantErr: true},
		{hook: "pre-push"},
		{hook: "pre-push", args: []string{"origin", "git@host:r.git"}},
		{hook: "pre-push", args: []string{"origin", "url", "extra"}, wantErr: true},
		{hook: "pre-receive"},
		{hook: "pre-receive", args: []string{"x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.hook+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			var target any
			if tt.wantErr {
				target = new(*service.UsageError)
			}
			wantError(t, service.HookArgs(tt.hook, tt.args), target)
		})
	}
}
