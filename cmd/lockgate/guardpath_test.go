package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestGuardGitDirAliases: names that reach git's own directory on some
// file system — another case under core.ignorecase, NTFS's trailing dots
// and spaces and its short name — are the git directory to the guard and
// to lock keys alike.
func TestGuardGitDirAliases(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Git("config", "core.ignorecase", "true")
	r.Write("a.txt", "a\n")
	r.Commit("init")
	c := &cliRepo{t: t, repo: r}
	agent := []string{"LOCKGATE_WORKER=agent-1"}
	for _, p := range []string{".GIT/config", ".Git/hooks/pre-commit", ".git./config", ".git /config", ".git. ./config", "GIT~1/config", "sub/.GIT/config"} {
		code, stderr := guard(t, r, agent, payload(t, "Write", map[string]any{"file_path": filepath.Join(r.Dir, p)}, r.Dir))
		if code != 2 || !strings.Contains(stderr, "git directory") {
			t.Errorf("guard claude-code %s: exit %d, want 2 (git directory); stderr:\n%s", p, code, stderr)
		}
		if code, out := c.run("agent-1", "guard", "edit", p); code != 2 || !strings.Contains(out, "git directory") {
			t.Errorf("guard edit %s: exit %d, want 2 (git directory):\n%s", p, code, out)
		}
		if code, out := c.run("agent-1", "lock", "acquire", p); code != 2 || !strings.Contains(out, "git's own directory") {
			t.Errorf("lock acquire %s: exit %d, want 2:\n%s", p, code, out)
		}
	}
	// Names that merely look alike are files like any other.
	for _, p := range []string{".gitignore", ".git-x/config", "git/config", ".gitx"} {
		if code, stderr := guard(t, r, agent, payload(t, "Write", map[string]any{"file_path": filepath.Join(r.Dir, p)}, r.Dir)); code != 0 {
			t.Errorf("guard claude-code %s: exit %d, want 0; stderr:\n%s", p, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(r.Dir, ".git", "config")); err != nil {
		t.Fatal(err)
	}
}

// TestGuardSymlinks: an edit through a symbolic link inside the worktree
// writes the file the link leads to, and is judged as that file: one
// locked by another is blocked, one outside the worktree (another
// worktree) or in .git too. A checkout reached through a link and a cwd
// inside a linked directory keep working.
func TestGuardSymlinks(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("src/a.go", "a\n")
	r.Commit("init")
	other := filepath.Join(t.TempDir(), "other")
	r.Git("worktree", "add", "-q", other, "-b", "other")
	out := newOutside(t)
	abs := func(p string) string { return filepath.Join(r.Dir, p) }
	plant(t, "src", abs("srclink"))
	plant(t, "src/a.go", abs("alink"))
	plant(t, other, abs("wtlink"))
	plant(t, out.dir, abs("outlink"))
	plant(t, ".git", abs("gitlink"))
	plant(t, filepath.Join(out.dir, "new"), abs("dangling"))
	plant(t, filepath.Join(out.dir, "nodir"), abs("danglingdir"))
	r.Git("worktree", "add", "-q", abs("inner"), "-b", "inner")
	plant(t, "inner/src", abs("innerlink"))
	checkout := filepath.Join(t.TempDir(), "checkout")
	plant(t, r.Dir, checkout)
	c := &cliRepo{t: t, repo: r}
	if code, o := c.run("alice", "lock", "acquire", "src/a.go"); code != 0 {
		t.Fatalf("acquire: %s", o)
	}
	bob := []string{"LOCKGATE_WORKER=bob"}
	cases := []struct {
		path, cwd string
		code      int
		stderr    string
	}{
		{path: abs("srclink/a.go"), code: 2, stderr: "src/a.go: locked"},
		{path: abs("alink"), code: 2, stderr: "src/a.go: locked"},
		{path: "a.go", cwd: abs("srclink"), code: 2, stderr: "src/a.go: locked"},
		{path: filepath.Join(checkout, "src", "a.go"), code: 2, stderr: "src/a.go: locked"},
		{path: abs("wtlink/src/a.go"), code: 2, stderr: "outside the worktree"},
		{path: abs("outlink/f"), code: 2, stderr: "outside the worktree"},
		{path: abs("outlink/bait"), code: 2, stderr: "outside the worktree"},
		{path: abs("gitlink/hooks/pre-commit"), code: 2, stderr: "git directory"},
		{path: abs("dangling"), code: 2, stderr: "outside the worktree"},
		{path: abs("danglingdir/f"), code: 2, stderr: "outside the worktree"},
		{path: abs("inner/src/a.go"), code: 2, stderr: "another repository or worktree"},
		{path: abs("innerlink/a.go"), code: 2, stderr: "another repository or worktree"},
		{path: abs("srclink/b.go")},
		{path: "b.go", cwd: abs("srclink")},
		{path: filepath.Join(checkout, "src", "b.go")},
		{path: "src/b.go", cwd: checkout},
	}
	for _, tc := range cases {
		cwd := tc.cwd
		if cwd == "" {
			cwd = r.Dir
		}
		code, stderr := guard(t, r, bob, payload(t, "Write", map[string]any{"file_path": tc.path}, cwd))
		if code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("guard claude-code %s (cwd %s): exit %d, want %d with %q; stderr:\n%s", tc.path, cwd, code, tc.code, tc.stderr, stderr)
		}
	}
	out.untouched("guard")
}

// TestMCPSymlinks: the MCP tools follow links inside the worktree as the
// command line does, and refuse one that leads out of it.
func TestMCPSymlinks(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("src/a.go", "a\n")
	r.Commit("init")
	plant(t, "src", filepath.Join(r.Dir, "srclink"))
	plant(t, t.TempDir(), filepath.Join(r.Dir, "outlink"))
	if code, o := run(t, r, "alice", "lock", "acquire", "src/a.go"); code != 0 {
		t.Fatalf("acquire: %s", o)
	}
	b := startMCP(t, r, "agent-2", "LOCKGATE_WORKER_TYPE=agent")
	for _, p := range []string{"srclink/a.go", filepath.Join(r.Dir, "srclink", "a.go")} {
		if out, isErr := b.call("acquire_lock", map[string]any{"file_path": p}); !isErr || errClass(out) != "busy" {
			t.Errorf("acquire_lock %s = %v (isError %v), want busy", p, out, isErr)
		}
		if out, isErr := b.call("check_change", map[string]any{"paths": []string{p}}); isErr || out["ok"] != false {
			t.Errorf("check_change %s = %v (isError %v), want a violation", p, out, isErr)
		}
	}
	if out, isErr := b.call("acquire_lock", map[string]any{"file_path": "outlink/f"}); !isErr || !strings.Contains(fmt.Sprint(out), "outside the worktree") {
		t.Errorf("acquire_lock outlink/f = %v (isError %v), want refused", out, isErr)
	}
}
