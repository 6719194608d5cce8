package session_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

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
		{name: "a path above the repository", sub: "src", args: []string{"../../x.go"}, wantErr: new(*session.UsageError)},
		{name: "an absolute path outside", args: []string{"/etc/passwd"}, wantErr: new(*session.UsageError)},
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
			if got := session.Canonicals(keys); !slices.Equal(got, tt.want) {
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
			if got := session.Canonicals(keys); tt.wantErr == nil && !slices.Equal(got, tt.want) {
				t.Fatalf("FileKeys(%q) = %v, want %v", tt.args, got, tt.want)
			}
		})
	}
}

// keysRepo is a repository with src/a.go and a link, ln, to src; a worker
// of type workerType works in its directory sub (repo-relative).
func keysRepo(t *testing.T, sub, workerType string) (string, *session.Workspace) {
	t.Helper()
	r := repoWith(t, map[string]string{"src/a.go": "package a\n", "docs/x.md": "x\n"})
	if err := os.Symlink("src", filepath.Join(r.Dir, "ln")); err != nil {
		t.Fatal(err)
	}
	e, err := session.Load(context.Background(), session.Options{Dir: filepath.Join(r.Dir, sub), As: "alice",
		WorkerType: workerType, Getenv: envOf(), Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return r.Dir, e
}
