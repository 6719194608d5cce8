package service_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

func TestParseKeys(t *testing.T) {
	tests := []struct {
		name string
		// sub is the directory the command runs in; args may name the
		// repository's directory as ROOT.
		sub     string
		args    []string
		want    []string
		wantErr any
	}{
		{name: "paths from the top", args: []string{"src/a.go", "docs/**"}, want: []string{"src/a.go", "docs/**"}},
		{name: "a directory named without a pattern", args: []string{"docs/"}, wantErr: new(*lockkey.Error)},
		{name: "paths from a directory", sub: "src", args: []string{"a.go", "../docs/x.md"},
			want: []string{"src/a.go", "docs/x.md"}},
		{name: "an absolute path in the worktree", sub: "docs", args: []string{"ROOT/src/a.go"}, want: []string{"src/a.go"}},
		{name: "a path through a symbolic link names the file", args: []string{"ln/a.go"}, want: []string{"src/a.go"}},
		{name: "logical keys as given", args: []string{"api:GET /v1/users", "workflow"}, want: []string{"api:GET /v1/users", "workflow"}},
		{name: "a path above the repository", sub: "src", args: []string{"../../x.go"}, wantErr: new(*service.UsageError)},
		{name: "an absolute path outside", args: []string{"/etc/passwd"}, wantErr: new(*service.UsageError)},
		{name: "a key that is not valid", args: []string{"api:nope"}, wantErr: new(*lockkey.Error)},
		{name: "a namespace nobody declared", args: []string{"queue:jobs"}, wantErr: new(*lockkey.Error)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, e := keysRepo(t, tt.sub, "human")
			args := slices.Clone(tt.args)
			for i, a := range args {
				if rest, ok := strings.CutPrefix(a, "ROOT"); ok {
					args[i] = dir + rest
				}
			}
			keys, err := e.ParseKeys(args)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			if got := service.Canonicals(keys); !slices.Equal(got, tt.want) {
				t.Fatalf("ParseKeys(%q) = %v, want %v", args, got, tt.want)
			}
		})
	}
}

// A file's keys are relative to the top, wherever the command runs.
func TestFileKeys(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr any
	}{
		{name: "repo-relative paths", args: []string{"src/a.go", "ln/a.go", "api:GET /x"}, want: []string{"src/a.go", "src/a.go", "api:GET /x"}},
		{name: "a path relative to the directory is another path", args: []string{"a.go"}, want: []string{"a.go"}},
		{name: "a path above the top", args: []string{"../docs/x.md"}, wantErr: new(*lockkey.Error)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, e := keysRepo(t, "src", "human")
			keys, err := e.FileKeys(tt.args)
			wantError(t, err, tt.wantErr)
			if got := service.Canonicals(keys); tt.wantErr == nil && !slices.Equal(got, tt.want) {
				t.Fatalf("FileKeys(%q) = %v, want %v", tt.args, got, tt.want)
			}
		})
	}
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
			got, err := e.DefaultTTL(keys)
			if err != nil || got != tt.want {
				t.Fatalf("DefaultTTL(%v) = %s, %v, want %s", tt.keys, got, err, tt.want)
			}
		})
	}
}

func TestCheckID(t *testing.T) {
	tests := []struct {
		id      string
		wantErr bool
	}{
		{id: "WP-1"}, {id: "task_7.b"},
		{id: "", wantErr: true}, {id: "WP 1", wantErr: true}, {id: "a/b", wantErr: true}, {id: "a:b", wantErr: true},
		{id: "WP\x1b[2J", wantErr: true}, {id: "WP\u202e1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			var target any
			if tt.wantErr {
				target = new(*service.UsageError)
			}
			wantError(t, service.CheckID("package", tt.id), target)
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
			got, err := e.PauseKey(tt.feature)
			wantError(t, err, tt.wantErr)
			if got != tt.want {
				t.Fatalf("PauseKey(%q) = %q, want %q", tt.feature, got, tt.want)
			}
		})
	}
}
