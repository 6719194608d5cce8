package main

import (
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
