package service_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
)

const planPolicy = `version: 1
scope:
  core: [bridge/loop.py]
  hot_files: [api.py]
  profiles:
    backfill: {allow: [tests/**, docs/**]}
    backfill-bridge: {allow: [tests/**, docs/**, bridge/**]}
`

const planTasks = `tasks:
  - {id: lint-a, type: lint, backfill: true, touched_paths: [tests/test_a.py]}
  - {id: core-fix, type: lint, backfill: true, touched_paths: [bridge/loop.py]}
  - {id: feat-1, type: feature, backfill: false, touched_paths: [src/api.py], keys: ["api:GET /v1/a"]}
`

func TestPlan(t *testing.T) {
	r := repoWith(t, map[string]string{".lockgate.yaml": planPolicy})
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tasks := write("tasks.yaml", planTasks)
	bad := write("bad.yaml", "tasks: [{id: x, touched_paths: 3}]\n")
	r.Write("plans/tasks.yaml", planTasks)
	ctx := context.Background()
	alice, bob := openAs(t, r.Dir, "alice", nil), openAs(t, r.Dir, "bob", nil)
	tests := []struct {
		name string
		as   *service.Workspace
		req  service.PlanRequest
		// wantStatus is each task's status; wantAcquired the keys taken
		// for req.Acquire.
		wantStatus   map[string]string
		wantAcquired []string
		wantTTL      time.Duration
		wantErr      any
	}{
		{name: "plan", as: alice, req: service.PlanRequest{File: tasks, Cycle: 1},
			wantStatus: map[string]string{"lint-a": "ready", "core-fix": "rejected", "feat-1": "ready"}},
		{name: "a file relative to the working directory", as: alice, req: service.PlanRequest{File: "plans/tasks.yaml", Cycle: 1},
			wantStatus: map[string]string{"lint-a": "ready", "core-fix": "rejected", "feat-1": "ready"}},
		{name: "acquire a ready task", as: alice, req: service.PlanRequest{File: tasks, Cycle: 2, Acquire: "feat-1", TTL: time.Hour},
			wantAcquired: []string{"api:GET /v1/a", "hot:api.py", "src/api.py"}, wantTTL: time.Hour},
		{name: "a task another holds waits", as: bob, req: service.PlanRequest{File: tasks, Cycle: 3},
			wantStatus: map[string]string{"lint-a": "ready", "feat-1": "waiting"}},
		{name: "acquire a task another holds", as: bob, req: service.PlanRequest{File: tasks, Acquire: "feat-1"}, wantErr: new(*locks.HeldError)},
		{name: "acquire a rejected task", as: alice, req: service.PlanRequest{File: tasks, Acquire: "core-fix"}, wantErr: new(*service.TaskNotReadyError)},
		{name: "acquire no such task", as: alice, req: service.PlanRequest{File: tasks, Acquire: "nope"}, wantErr: new(*service.UsageError)},
		{name: "no task file", as: alice, req: service.PlanRequest{File: filepath.Join(dir, "missing.yaml")}, wantErr: new(*service.UsageError)},
		{name: "invalid task file", as: alice, req: service.PlanRequest{File: bad}, wantErr: new(*service.UsageError)},
		{name: "negative cycle", as: alice, req: service.PlanRequest{File: tasks, Cycle: -1}, wantErr: new(*service.UsageError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := tt.as.Plan(ctx, tt.req)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			for _, task := range p.Plan.Tasks {
				if want, ok := tt.wantStatus[task.ID]; ok && task.Status != want {
					t.Errorf("task %s is %s (%s), want %s", task.ID, task.Status, task.Reason, want)
				}
			}
			var keys []string
			for _, res := range p.Acquired {
				keys = append(keys, res.Lock.Key)
				if ttl := res.Lock.ExpiresAt.Sub(epoch); ttl != tt.wantTTL || res.Lock.TaskID != tt.req.Acquire {
					t.Errorf("lock %s for %s of task %q, want %s of %q", res.Lock.Key, ttl, res.Lock.TaskID, tt.wantTTL, tt.req.Acquire)
				}
			}
			// The file: key of a hot file carries a hash: compare the others.
			keys = slices.DeleteFunc(keys, func(k string) bool { return len(k) > 5 && k[:5] == "file:" })
			slices.Sort(keys)
			if !slices.Equal(keys, tt.wantAcquired) {
				t.Errorf("acquired %q, want %q", keys, tt.wantAcquired)
			}
		})
	}
}
