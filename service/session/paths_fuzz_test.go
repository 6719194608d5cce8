package session

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/config"
)

// FuzzRepoPath: whatever path a guard or tool is given, it either is
// refused or becomes a clean repo-relative path inside the worktree and
// outside .git.
func FuzzRepoPath(f *testing.F) {
	for _, s := range []string{"src/a.py", "/repo/src/a.py", "../x", "/repo/../etc/passwd", "a/../../b", ".git/hooks/x",
		"/repo", ".", "", " ", "a\x00b", "./a//b/", "/repo/.git", "src/../.git/config", "/other/repo/a",
		".GIT/config", "/repo/.git./config", "sub/.git /x", "GIT~1/config", ".git::$INDEX_ALLOCATION/x"} {
		f.Add(s, "/repo/src")
	}
	e := &Workspace{repo: &gitexec.Repo{Toplevel: "/repo", GitDir: "/repo/.git", CommonDir: "/repo/.git"}, Cfg: config.Default()}
	f.Fuzz(func(t *testing.T, p, base string) {
		if !filepath.IsAbs(base) {
			return
		}
		rel, err := e.RepoPath(p, base)
		if err != nil {
			return
		}
		switch {
		case rel == "" || rel == "." || strings.HasPrefix(rel, "/") || rel == ".." || strings.HasPrefix(rel, "../"):
			t.Fatalf("repoPath(%q, %q) = %q: not inside the worktree", p, base, rel)
		case IsGitPath(rel):
			t.Fatalf("repoPath(%q, %q) = %q: inside .git (or an alias of it)", p, base, rel)
		case filepath.Clean(rel) != filepath.FromSlash(rel):
			t.Fatalf("repoPath(%q, %q) = %q: not clean", p, base, rel)
		}
		if got, err := e.RepoPath(rel, "/repo"); err != nil || got != rel {
			t.Fatalf("repoPath is not stable on %q: %q, %v", rel, got, err)
		}
		if _, err := e.ToolKeys(rel, nil); err != nil && strings.Contains(err.Error(), "panic") {
			t.Fatal(err)
		}
	})
}
