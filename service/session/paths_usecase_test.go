package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lockgate/lockgate/service/session"
)

func TestIsPathArg(t *testing.T) {
	tests := []struct {
		arg  string
		want bool
	}{
		{"src/a.go", true}, {"a.go", true}, {"docs/**", true}, {"./x", true}, {"C:/x", false},
		{"api:GET /x", false}, {"API:GET /x", false}, {"my-ns:x", false}, {"x1:y", false},
		{"1x:y", true}, {"-x:y", true}, {"workflow", false}, {"claim", false}, {"workflows", true},
	}
	for _, tt := range tests {
		if got := session.IsPathArg(tt.arg); got != tt.want {
			t.Errorf("IsPathArg(%q) = %v, want %v", tt.arg, got, tt.want)
		}
	}
}

func TestWithin(t *testing.T) {
	root := filepath.FromSlash("/r/top")
	tests := []struct {
		abs, want string
		ok        bool
	}{
		{abs: "/r/top/src/a.go", want: "src/a.go", ok: true},
		{abs: "/r/top", want: ".", ok: true},
		{abs: "/r/top/..x", want: "..x", ok: true},
		{abs: "/r/topx/a.go"},
		{abs: "/r/a.go"},
	}
	for _, tt := range tests {
		got, ok := session.Within(root, filepath.FromSlash(tt.abs))
		if ok != tt.ok || got != filepath.FromSlash(tt.want) {
			t.Errorf("Within(%s) = %q, %v; want %q, %v", tt.abs, got, ok, tt.want, tt.ok)
		}
	}
}

func TestResolveExisting(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(rel string) {
		if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	mk("real/sub")
	link("real", "ln")
	link("missing/deeper", "dangling")
	link("loop2", "loop1")
	link("loop1", "loop2")
	tests := []struct {
		name, abs, want string
		wantErr         any
	}{
		{name: "a file that exists", abs: "real/sub", want: "real/sub"},
		{name: "a file not yet there", abs: "real/sub/new.go", want: "real/sub/new.go"},
		{name: "through a link", abs: "ln/sub/new.go", want: "real/sub/new.go"},
		{name: "a dangling link leads where it points", abs: "dangling/x.go", want: "missing/deeper/x.go"},
		{name: "a loop of links", abs: "loop1/x.go", wantErr: new(*session.UsageError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := session.ResolveExisting(filepath.Join(dir, tt.abs))
			wantError(t, err, tt.wantErr)
			if tt.wantErr == nil && got != filepath.Join(dir, tt.want) {
				t.Fatalf("ResolveExisting(%s) = %s, want %s", tt.abs, got, filepath.Join(dir, tt.want))
			}
		})
	}
}
