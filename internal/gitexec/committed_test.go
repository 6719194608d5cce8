package gitexec

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

func TestTrackedPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	repo := &Repo{Toplevel: r.Dir, GitDir: filepath.Join(r.Dir, ".git"), CommonDir: filepath.Join(r.Dir, ".git")}
	ask := func(t *testing.T, repo *Repo, paths []string, want ...string) {
		t.Helper()
		got, err := TrackedPaths(ctx, repo, paths)
		if err != nil {
			t.Fatal(err)
		}
		if g := slices.Sorted(maps.Keys(got)); !slices.Equal(g, want) {
			t.Fatalf("TrackedPaths(%q) = %q, want %q", paths, g, want)
		}
	}
	query := []string{"src/a.go", "src/del.go", "new.go", "untracked.go", "src", "*.go", "a1.go", ":(top)b.go", "b.go", ":!src/a.go", ":(exclude)new.go"}

	// Unborn HEAD: the index alone.
	r.Write("new.go", "n\n")
	r.Git("add", "new.go")
	ask(t, repo, query, "new.go")

	r.Write("src/a.go", "a\n")
	r.Write("src/del.go", "d\n")
	r.Write("a[1].go", "glob\n")
	r.Commit("one")
	r.Git("rm", "-q", "--cached", "src/del.go")
	r.Write("untracked.go", "u\n")
	// Names are exact: "src" is a directory, "*.go" and "a1.go" are no
	// patterns for "a[1].go", ":(top)b.go" is no magic for b.go, and
	// ":!src/a.go" excludes nothing.
	ask(t, repo, query, "new.go", "src/a.go", "src/del.go")

	t.Run("bare", func(t *testing.T) {
		t.Parallel()
		bare := filepath.Join(t.TempDir(), "srv.git")
		r.Git("clone", "-q", "--bare", r.Dir, bare)
		ask(t, &Repo{GitDir: bare, CommonDir: bare}, query, "new.go", "src/a.go", "src/del.go")
	})
	t.Run("many", func(t *testing.T) {
		t.Parallel()
		// More names than fit as arguments: git lists every file.
		many := slices.Clone(query)
		for i := 0; len(many) < 2*maxPathspecBytes/20; i++ {
			many = append(many, fmt.Sprintf("no/such/file/%06d", i))
		}
		ask(t, repo, many, "new.go", "src/a.go", "src/del.go")
	})
	t.Run("long", func(t *testing.T) {
		t.Parallel()
		// One name longer than the system takes as one argument.
		ask(t, repo, []string{"src/a.go", strings.Repeat("n/", 100<<10)}, "src/a.go")
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		ask(t, repo, nil)
	})
}

// The caller's pathspec settings neither make git fail (they conflict with
// --literal-pathspecs) nor change what a name matches.
func TestTrackedPathsPathspecEnv(t *testing.T) {
	r := gittest.New(t)
	repo := &Repo{Toplevel: r.Dir, GitDir: filepath.Join(r.Dir, ".git"), CommonDir: filepath.Join(r.Dir, ".git")}
	r.Write("A.go", "a\n")
	r.Commit("one")
	for _, v := range []string{"GIT_ICASE_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_LITERAL_PATHSPECS"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, "1")
			got, err := TrackedPaths(context.Background(), repo, []string{"a.go", "A.go"})
			if err != nil {
				t.Fatal(err)
			}
			if !got["A.go"] || len(got) != 1 {
				t.Fatalf("TrackedPaths = %v, want A.go", got)
			}
		})
	}
}

func TestCommitFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	repo := &Repo{Toplevel: r.Dir, GitDir: filepath.Join(r.Dir, ".git"), CommonDir: filepath.Join(r.Dir, ".git")}
	r.Write("f.txt", "one\n")
	r.Commit("one")
	first := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
	r.Write("f.txt", "two\n")
	r.Write("dir/x", "x\n")
	r.Commit("two")
	r.Write("f.txt", "three\n") // not committed: never read

	for _, c := range []struct {
		rev, path, want string
		found           bool
	}{
		{first, "f.txt", "one\n", true},
		{"HEAD", "f.txt", "two\n", true},
		{first, "dir/x", "", false},
		{"HEAD", "nosuch", "", false},
	} {
		data, found, err := CommitFile(ctx, repo, c.rev, c.path)
		if err != nil || found != c.found || string(data) != c.want {
			t.Errorf("CommitFile(%s, %s) = %q, %v, %v; want %q, %v", c.rev, c.path, data, found, err, c.want, c.found)
		}
	}
	// A directory is not a policy file; a name that is no commit is an error.
	if _, _, err := CommitFile(ctx, repo, "HEAD", "dir"); err == nil {
		t.Error("CommitFile(HEAD, dir): no error for a directory")
	}
	if _, _, err := CommitFile(ctx, repo, "nosuch", "f.txt"); err == nil {
		t.Error("CommitFile(nosuch, f.txt): no error for a missing commit")
	}
}
