package diffpath

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, reason string // reason: substring of the PathError reason, "" for success
	}{
		{name: "plain", in: "bridge/loop.py", want: "bridge/loop.py"},
		{name: "top level", in: "README.md", want: "README.md"},
		{name: "dot slash", in: "./a/./b", want: "a/b"},
		{name: "double slash", in: "a//b///c", want: "a/b/c"},
		{name: "trailing slash", in: "dir/", want: "dir"},
		{name: "dotdot inside", in: "a/b/../c", want: "a/c"},
		{name: "dotdot to top", in: "a/../b", want: "b"},
		{name: "backslash kept", in: `dir\file`, want: `dir\file`},
		{name: "spaces kept", in: " a b /c ", want: " a b /c "},
		{name: "newline kept", in: "new\nline", want: "new\nline"},
		{name: "invalid utf8 kept", in: "bad\xffname", want: "bad\xffname"},
		{name: "gitignore is fine", in: ".gitignore", want: ".gitignore"},
		{name: "dotgit prefix is fine", in: ".github/workflows/ci.yml", want: ".github/workflows/ci.yml"},
		{name: "dotdotdot is a name", in: "a/.../b", want: "a/.../b"},
		{name: "a prefix is not stripped", in: "a/bridge/loop.py", want: "a/bridge/loop.py"},
		{name: "empty", in: "", reason: "empty"},
		{name: "absolute", in: "/etc/passwd", reason: "absolute"},
		{name: "escape", in: "../x", reason: "escapes"},
		{name: "escape later", in: "a/../../x", reason: "escapes"},
		{name: "dotgit", in: ".git/config", reason: ".git"},
		{name: "dotgit nested", in: "sub/.git/hooks/pre-commit", reason: ".git"},
		{name: "dotgit case", in: "sub/.GiT/config", reason: ".git"},
		{name: "dotgit resolved away", in: "a/.git/../b", reason: ".git"},
		{name: "dot", in: ".", reason: "root"},
		{name: "dot slash only", in: "./", reason: "root"},
		{name: "up and back", in: "a/..", reason: "root"},
		{name: "nul", in: "a\x00b", reason: "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Normalize(tt.in)
			if tt.reason != "" {
				var pe *PathError
				if !errors.As(err, &pe) {
					t.Fatalf("Normalize(%q) = %q, %v; want a *PathError", tt.in, got, err)
				}
				if pe.Path != tt.in || !strings.Contains(pe.Reason, tt.reason) {
					t.Fatalf("Normalize(%q) error = %+v; want reason containing %q", tt.in, pe, tt.reason)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Normalize(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
			if again, err := Normalize(got); err != nil || again != got {
				t.Fatalf("Normalize is not idempotent: %q → %q, %v", got, again, err)
			}
		})
	}
}

func TestNormalizeCleanDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := Normalize("internal/some/deep/path/file.go"); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Normalize of a clean path allocates %v times", allocs)
	}
}

func TestTouched(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    Change
		want []string
	}{
		{name: "modify", c: Change{Status: 'M', Path: "a"}, want: []string{"a"}},
		{name: "rename", c: Change{Status: 'R', Score: 90, Path: "new", OldPath: "old"}, want: []string{"new", "old"}},
		{name: "copy", c: Change{Status: 'C', Score: 100, Path: "dst", OldPath: "src"}, want: []string{"dst", "src"}},
		{name: "same paths", c: Change{Status: 'R', Path: "x", OldPath: "x"}, want: []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.c.Touched(); !equalStrings(got, tt.want) {
				t.Fatalf("Touched() = %q, want %q", got, tt.want)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
