package service

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// FuzzLFSRef: a ref a git-lfs client names is refused with a usage error
// or is a full ref name under refs/ that git's own check-ref-format
// accepts too (checked against git for the seeds).
func FuzzLFSRef(f *testing.F) {
	seeds := []string{"", "refs/heads/main", "refs/heads/feature/x", "main", "refs/heads/a..b", "refs/heads/x.lock", "refs/heads/ a",
		"refs/heads/a\x00", "refs/heads/", "refs/heads/@{1}", "refs/heads/.hidden", "refs//heads", "refs/heads/a.", "refs/heads/ü", "refs/tags/v1.0"}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		err := lfsRef(ref)
		if err != nil {
			var usage *UsageError
			if !errors.As(err, &usage) {
				t.Fatalf("lfsRef(%q) = %v, not a usage error", ref, err)
			}
			return
		}
		if ref != "" && (!strings.HasPrefix(ref, "refs/") || strings.ContainsAny(ref, " ~^:?*[\\\x00\x7f") || strings.Contains(ref, "..")) {
			t.Fatalf("lfsRef(%q) accepted it", ref)
		}
	})
}

// TestLFSRefAsGit: for the fuzz seeds, lfsRef accepts what git's
// check-ref-format accepts.
func TestLFSRefAsGit(t *testing.T) {
	for _, ref := range []string{"refs/heads/main", "refs/heads/feature/x", "refs/heads/a..b", "refs/heads/x.lock", "refs/heads/ a",
		"refs/heads/", "refs/heads/@{1}", "refs/heads/.hidden", "refs//heads", "refs/heads/a.", "refs/heads/ü", "refs/tags/v1.0"} {
		gitOK := exec.Command("git", "check-ref-format", ref).Run() == nil
		if ours := lfsRef(ref) == nil; ours != gitOK {
			t.Errorf("%q: lfsRef accepts %v, git check-ref-format %v", ref, ours, gitOK)
		}
	}
}
