package gitexec

import (
	"context"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestAddedByThroughMerges: the commit that added a file is found behind
// a merge whose tree lacks the file, on either side.
func TestAddedByThroughMerges(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("base", "b\n")
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "side")
	r.Write("side.json", "s\n")
	r.Commit("adds side.json")
	side := r.Git("rev-parse", "HEAD")
	r.Git("checkout", "-q", "main")
	r.Write("main.json", "m\n")
	r.Commit("adds main.json")
	mine := r.Git("rev-parse", "HEAD")
	// A merge whose tree holds neither file.
	tree := r.Git("rev-parse", "main~1^{tree}")
	merge := r.Git("commit-tree", tree, "-p", "main", "-p", "side", "-m", "merge without the files")
	for file, want := range map[string]string{"main.json": mine, "side.json": side} {
		got, err := AddedBy(context.Background(), r.Dir, []string{merge}, []string{file})
		if err != nil {
			t.Fatal(err)
		}
		if got[file] != want {
			t.Errorf("AddedBy(%s) = %q, want %s", file, got[file], want)
		}
	}
}
