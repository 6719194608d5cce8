package workflow

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// cloned is a `git clone` of remote: it has the remote's branches as
// remote-tracking refs, the workflow branch's among them, and no local
// workflow branch.
func cloned(t testing.TB, remote string) (*gitexec.Repo, []string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	env := newRepo(t).Env
	gitIn(t, filepath.Dir(dir), env, "", "clone", "-q", "file://"+remote, dir)
	repo, err := gitexec.Discover(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo, env
}

// TestFirstCommitStartsOnTrackingRef: a fresh clone's first commit goes
// on top of the remote branch it fetched, so that its push is a
// fast-forward: no fetch, no merge commit, no read of the remote's whole
// tree. The remote ends with every event of both.
func TestFirstCommitStartsOnTrackingRef(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	a := cloneOf(t, remote)
	wa := openWriter(t, repoOf(a))
	old := events("a", 40)
	if _, err := wa.Commit(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatal(err)
	}
	remoteTip := a.Git("rev-parse", "lockgate/workflow")

	repo, env := cloned(t, remote)
	w := openWriter(t, repo)
	mine := events("fresh", 2)
	if n, err := w.Commit(ctx, append(mine, old[0])); err != nil || n != 2 {
		t.Fatalf("Commit in a fresh clone = %d, %v; want the 2 events the remote lacks", n, err)
	}
	parents := strings.Fields(gitIn(t, repo.Toplevel, env, "", "rev-list", "--parents", "-n1", "lockgate/workflow"))
	if len(parents) != 2 || parents[1] != remoteTip {
		t.Fatalf("the first commit's parents are %v, want the remote-tracking ref's %s", parents[1:], remoteTip)
	}
	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	local := gitIn(t, repo.Toplevel, env, "", "rev-parse", "lockgate/workflow")
	if got := gitIn(t, remote, env, "", "rev-parse", "lockgate/workflow"); got != local {
		t.Fatalf("remote at %s, want the clone's commit %s pushed as it is (a fast-forward, no merge)", got, local)
	}
	if n := gitIn(t, remote, env, "", "rev-list", "--merges", "--count", "lockgate/workflow"); n != "0" {
		t.Fatalf("%s merge commits on the remote", n)
	}
	equalIDs(t, "remote", branchIDs(t, openWriter(t, bareOf(remote))), idsOf(append(old, mine...)))
	fsck(t, remote, env)
}

// TestFirstCommitTrackingRefBehind: the remote moved on since the clone
// fetched; the commit on the old remote-tracking ref is merged with the
// remote's new events at the push, and nothing is lost.
func TestFirstCommitTrackingRefBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	a := cloneOf(t, remote)
	wa := openWriter(t, repoOf(a))
	first := events("a", 3)
	if _, err := wa.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatal(err)
	}
	repo, env := cloned(t, remote)
	later := events("a2", 2)
	if _, err := wa.Commit(ctx, later); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatal(err)
	}
	w := openWriter(t, repo)
	mine := events("fresh", 1)
	if _, err := w.Commit(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	want := idsOf(append(append(first, later...), mine...))
	equalIDs(t, "remote", branchIDs(t, openWriter(t, bareOf(remote))), want)
	equalIDs(t, "clone", branchIDs(t, w), want)
	fsck(t, remote, env)
}

// TestFirstCommitTrackingRefNotEvents: a remote-tracking ref that does
// not name an event commit (a tree with more than events/) is not built
// on: the first commit is a root commit, as in a clone without the ref.
func TestFirstCommitTrackingRefNotEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := cloneOf(t, newBare(t))
	r.Git("update-ref", "refs/remotes/origin/lockgate/workflow", "HEAD") // a.txt and b.txt
	w := openWriter(t, repoOf(r))
	if _, err := w.Commit(ctx, events("w", 1)); err != nil {
		t.Fatal(err)
	}
	if parents := strings.Fields(r.Git("rev-list", "--parents", "-n1", "lockgate/workflow")); len(parents) != 1 {
		t.Fatalf("the first commit has parents %v, want a root commit", parents[1:])
	}
	if got := r.Git("ls-tree", "--name-only", "lockgate/workflow"); got != eventsDir {
		t.Fatalf("the branch's tree holds %q, want events/ alone", got)
	}
	if got := r.Git("ls-tree", "--name-only", "lockgate/workflow:"+eventsDir); !strings.Contains(got, formatFile) {
		t.Fatalf("events/ holds %q, want the format blob in it", got)
	}
}

// TestPushFetchRunsNoGC: the fetch before a merge starts no automatic gc
// (which would repack the whole clone in the background of a lock
// command); the clone's own git commands pack what lockgate wrote. The
// clone is set so that any gc --auto would run at once and repack: two
// packs where one is too many.
func TestPushFetchRunsNoGC(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	a, b := cloneOf(t, remote), cloneOf(t, remote)
	wa, wb := openWriter(t, repoOf(a)), openWriter(t, repoOf(b))
	if _, err := wa.Commit(ctx, events("a", 3)); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"gc.autoPackLimit", "1"}, {"gc.autoDetach", "false"}, {"transfer.unpackLimit", "1"}} {
		b.Git("config", kv[0], kv[1])
	}
	b.Git("repack", "-q", "-d")
	if _, err := wb.Commit(ctx, events("b", 2)); err != nil {
		t.Fatal(err)
	}
	if err := wb.Push(ctx); err != nil { // rejected, fetched, merged, pushed
		t.Fatal(err)
	}
	if n := b.Git("rev-list", "--merges", "--count", "lockgate/workflow"); n != "1" {
		t.Fatalf("%s merges: the push did not fetch and merge", n)
	}
	packs, err := filepath.Glob(filepath.Join(b.Dir, ".git", "objects", "pack", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	if len(packs) != 2 {
		t.Fatalf("%d packs, want 2 (the clone's and the fetched one): a gc ran", len(packs))
	}
}
