package service_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
)

// keysRepo is a repository with src/a.go and a link, ln, to src; a worker
// of type workerType works in its directory sub (repo-relative).
func keysRepo(t *testing.T, sub, workerType string) (string, *service.Workspace) {
	t.Helper()
	r := repoWith(t, map[string]string{"src/a.go": "package a\n", "docs/x.md": "x\n"})
	if err := os.Symlink("src", filepath.Join(r.Dir, "ln")); err != nil {
		t.Fatal(err)
	}
	e, err := service.Load(context.Background(), service.Options{Dir: filepath.Join(r.Dir, sub), As: "alice",
		WorkerType: workerType, Getenv: envOf(), Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return r.Dir, e
}

func TestDefaultTTL(t *testing.T) {
	tests := []struct {
		name, workerType string
		keys             []string
		want             time.Duration
	}{
		{name: "a human's file", workerType: "human", keys: []string{"src/a.go"}, want: 4 * time.Hour},
		{name: "a human's activity", workerType: "human", keys: []string{"activity:WI-1"}, want: 8 * time.Hour},
		{name: "an agent's file", workerType: "agent", keys: []string{"src/a.go"}, want: 30 * time.Minute},
		{name: "the longest of a set", workerType: "agent", keys: []string{"src/a.go", "activity:WI-1"}, want: time.Hour},
		{name: "no keys: a task's", workerType: "agent", want: 30 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := keysRepo(t, "", tt.workerType)
			keys, err := e.ParseKeys(tt.keys)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Locks().DefaultTTL(keys)
			if err != nil || got != tt.want {
				t.Fatalf("DefaultTTL(%v) = %s, %v, want %s", tt.keys, got, err, tt.want)
			}
		})
	}
}

func TestPauseKey(t *testing.T) {
	tests := []struct {
		feature, want string
		wantErr       any
	}{
		{feature: "FEAT-1", want: "feature:FEAT-1:pause"},
		{feature: "feature:FEAT-1:pause", want: "feature:FEAT-1:pause"},
		{feature: "feature:FEAT-1:release", wantErr: new(*service.UsageError)},
		{feature: "FEAT 1", wantErr: new(*lockkey.Error)},
		{feature: "", wantErr: new(*lockkey.Error)},
	}
	for _, tt := range tests {
		t.Run(tt.feature, func(t *testing.T) {
			_, e := keysRepo(t, "", "human")
			got, err := e.Locks().PauseKey(tt.feature)
			wantError(t, err, tt.wantErr)
			if got != tt.want {
				t.Fatalf("PauseKey(%q) = %q, want %q", tt.feature, got, tt.want)
			}
		})
	}
}
