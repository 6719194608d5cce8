package service

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
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

// FuzzLFSLockID: any string sent as a git-lfs lock id is read as a key
// or refused, never a panic; the id of any lock names its key again, and
// no other string than that id does.
func FuzzLFSLockID(f *testing.F) {
	for _, s := range [][2]string{{"src/a.go", "t"}, {"é/ü.psd", ""}, {"a.b.c", "tok.en"}, {"", "x"}, {"\x00\xff", "\n"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, key, token string) {
		// Read as an id, the string names a key whose ids start as it does.
		if k, ok := lfsIDKey(key); ok {
			if prefix, _, _ := strings.Cut(lfsLockID(locks.Lock{Key: k, Token: token}), "."); !strings.HasPrefix(key, prefix+".") {
				t.Fatalf("lfsIDKey(%q) = %q, whose ids start %q", key, k, prefix)
			}
		}
		if key == "" {
			return
		}
		id := lfsLockID(locks.Lock{Key: key, Token: token})
		if k, ok := lfsIDKey(id); !ok || k != key {
			t.Fatalf("the id %q of %q names %q, %v", id, key, k, ok)
		}
		if id == lfsLockID(locks.Lock{Key: key, Token: token + "x"}) {
			t.Fatalf("two tokens of %q share the id %q", key, id)
		}
	})
}
