package workflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// newBare makes an empty bare repository and returns its path.
func newBare(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	gitIn(t, filepath.Dir(dir), gittest.Env(t.TempDir()), "", "init", "-q", "--bare", dir)
	return dir
}

// cloneOf is a repository with one commit whose origin is remote.
func cloneOf(t testing.TB, remote string) *gittest.Repo {
	t.Helper()
	r := newRepo(t)
	r.Git("remote", "add", "origin", remote)
	return r
}

func TestPushNoRemote(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	w := openWriter(t, repoOf(r))
	if _, err := w.Commit(context.Background(), events("w", 1)); err != nil {
		t.Fatal(err)
	}
	err := w.Push(context.Background())
	var pe *PushError
	if !errors.Is(err, ErrNoRemote) || !errors.As(err, &pe) {
		t.Fatalf("Push = %v, want a *PushError with ErrNoRemote", err)
	}
	for _, want := range []string{`no remote "origin"`, "git remote add origin", "stay in the journal"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestPushUnreachable(t *testing.T) {
	t.Parallel()
	r := cloneOf(t, filepath.Join(t.TempDir(), "gone.git"))
	w := openWriter(t, repoOf(r))
	if _, err := w.Commit(context.Background(), events("w", 1)); err != nil {
		t.Fatal(err)
	}
	before := r.Git("rev-parse", "lockgate/workflow")
	err := w.Push(context.Background())
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Push = %v, want ErrUnreachable", err)
	}
	for _, want := range []string{"does not appear to be a git repository", "stay in the journal"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if got := r.Git("rev-parse", "lockgate/workflow"); got != before {
		t.Fatal("a failed push moved the local branch")
	}
}

func TestPushNothing(t *testing.T) {
	t.Parallel()
	r := cloneOf(t, newBare(t))
	if err := openWriter(t, repoOf(r)).Push(context.Background()); err != nil {
		t.Fatalf("Push without a branch = %v", err)
	}
}

// TestPushDiverged: two clones commit different events (and one event
// both have); the second push is rejected, fetched, merged by id and
// pushed. Both clones end with the union.
func TestPushDiverged(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a, b := cloneOf(t, remote), cloneOf(t, remote)
	wa, wb := openWriter(t, repoOf(a)), openWriter(t, repoOf(b))
	ctx := context.Background()
	shared := event("both", 0)
	evA, evB := append(events("a", 3), shared), append(events("b", 2), shared)
	if _, err := wa.Commit(ctx, evA); err != nil {
		t.Fatal(err)
	}
	if _, err := wb.Commit(ctx, evB); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatalf("first push: %v", err)
	}
	userB := userState(t, b)
	if err := wb.Push(ctx); err != nil {
		t.Fatalf("diverged push: %v", err)
	}
	want := idsOf(append(evA, evB[:2]...))
	remoteW := openWriter(t, bareOf(remote))
	equalIDs(t, "remote", branchIDs(t, remoteW), want)
	equalIDs(t, "clone b", branchIDs(t, wb), want)
	// b's tip is a merge of its own commit and a's.
	parents := strings.Fields(b.Git("rev-list", "--parents", "-n1", "lockgate/workflow"))
	if len(parents) != 3 || parents[2] != a.Git("rev-parse", "lockgate/workflow") {
		t.Fatalf("merge commit parents %v", parents)
	}
	msg := b.Git("log", "-1", "--format=%B", "lockgate/workflow")
	if !strings.HasPrefix(msg, "Merge origin/lockgate/workflow\n") || !strings.Contains(msg, "adds none of its own") {
		t.Fatalf("merge message:\n%s", msg)
	}
	// Only the workflow branch and its remote-tracking ref moved.
	if got := userState(t, b); got != userB {
		t.Fatalf("user state changed:\n%s\nwant:\n%s", got, userB)
	}
	// a commits on its old tip and pushes: a second merge.
	if _, err := wa.Commit(ctx, events("a2", 1)); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatalf("push after the merge: %v", err)
	}
	if n := a.Git("rev-list", "--merges", "--count", "lockgate/workflow"); n != "2" {
		// b's merge, and a's merge of its new commit with b's merge.
		t.Fatalf("%s merges on a", n)
	}
	equalIDs(t, "remote after a", branchIDs(t, remoteW), branchIDs(t, wa))
	fsck(t, remote, a.Env)
	fsck(t, a.Dir, a.Env)
	fsck(t, b.Dir, b.Env)
}

// TestPushFastForward: a clone behind the remote (nothing of its own to
// add) just moves to the remote's commit.
func TestPushFastForward(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a, b := cloneOf(t, remote), cloneOf(t, remote)
	wa, wb := openWriter(t, repoOf(a)), openWriter(t, repoOf(b))
	ctx := context.Background()
	evs := events("a", 2)
	if _, err := wa.Commit(ctx, evs); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatal(err)
	}
	// b has an older copy of the remote branch, then commits nothing new.
	b.Git("fetch", "-q", "origin", "lockgate/workflow")
	b.Git("update-ref", "refs/heads/lockgate/workflow", "FETCH_HEAD")
	if _, err := wa.Commit(ctx, events("a", 1)); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := wb.Commit(ctx, evs); err != nil { // already there: no commit
		t.Fatal(err)
	}
	if err := wb.mergeRemoteAfterFetch(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := b.Git("rev-parse", "lockgate/workflow"), a.Git("rev-parse", "lockgate/workflow"); got != want {
		t.Fatalf("b at %s, want the remote's %s (a fast-forward)", got, want)
	}
}

// mergeRemoteAfterFetch fetches and merges, as Push does after a rejection.
func (w *Writer) mergeRemoteAfterFetch(ctx context.Context) error {
	if err := gitexec.Fetch(ctx, w.repo, w.remote, "+"+w.ref.String()+":"+w.TrackingRef()); err != nil {
		return err
	}
	return w.mergeRemote(ctx)
}

// TestMergeSameIDDifferentContent: one event id written with two
// contents on two clones is one event on the merged branch, the same on
// every clone.
func TestMergeSameIDDifferentContent(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	a, b := cloneOf(t, remote), cloneOf(t, remote)
	wa, wb := openWriter(t, repoOf(a)), openWriter(t, repoOf(b))
	ctx := context.Background()
	ev := event("w", 0)
	other := ev
	other.Details = "re-encoded elsewhere"
	if _, err := wa.Commit(ctx, []journal.Event{ev}); err != nil {
		t.Fatal(err)
	}
	if _, err := wb.Commit(ctx, []journal.Event{other}); err != nil {
		t.Fatal(err)
	}
	if err := wa.Push(ctx); err != nil {
		t.Fatal(err)
	}
	if err := wb.Push(ctx); err != nil {
		t.Fatal(err)
	}
	ids := branchIDs(t, openWriter(t, bareOf(remote)))
	if len(ids) != 1 || ids[0] != ev.ID {
		t.Fatalf("remote ids %v", ids)
	}
	// Every reader picks the same one of the two.
	want, err := openWriter(t, bareOf(remote)).Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wb.Events(ctx)
	if err != nil || len(got) != 1 || got[0].Details != want[0].Details {
		t.Fatalf("clone b reads %+v, %v; the remote %+v", got, err, want)
	}
}

// TestPushRemoteHookRejects: a refusal that merging cannot fix is
// reported at once.
func TestPushRemoteHookRejects(t *testing.T) {
	t.Parallel()
	remote := newBare(t)
	writeFile(t, filepath.Join(remote, "hooks", "pre-receive"), "#!/bin/sh\necho 'protected by policy' >&2\nexit 1\n", 0o755)
	r := cloneOf(t, remote)
	w := openWriter(t, repoOf(r))
	if _, err := w.Commit(context.Background(), events("w", 1)); err != nil {
		t.Fatal(err)
	}
	err := w.Push(context.Background())
	if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "remote rejected") || !strings.Contains(err.Error(), "protected by policy") {
		t.Fatalf("Push = %v, want ErrRejected by the remote, with what its hook said", err)
	}
}

// TestShallowClone: a `git clone --depth 1` has no workflow branch; its
// first commit is a new root, and the push merges it with the remote's.
func TestShallowClone(t *testing.T) {
	t.Parallel()
	origin := newRepo(t)
	origin.Write("a.txt", "two\n")
	origin.Commit("two")
	wo := openWriter(t, repoOf(origin))
	ctx := context.Background()
	old := events("origin", 3)
	if _, err := wo.Commit(ctx, old); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "shallow")
	env := origin.Env
	gitIn(t, filepath.Dir(dir), env, "", "clone", "-q", "--depth", "1", "file://"+origin.Dir, dir)
	if got := gitIn(t, dir, env, "", "rev-parse", "--is-shallow-repository"); got != "true" {
		t.Fatalf("not shallow: %s", got)
	}
	repo, err := gitexec.Discover(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	w := openWriter(t, repo)
	mine := events("shallow", 2)
	if n, err := w.Commit(ctx, mine); err != nil || n != 2 {
		t.Fatalf("Commit in a shallow clone = %d, %v", n, err)
	}
	if err := w.Push(ctx); err != nil {
		t.Fatalf("Push from a shallow clone: %v", err)
	}
	equalIDs(t, "origin", branchIDs(t, wo), idsOf(append(old, mine...)))
	if got := gitIn(t, dir, env, "", "rev-parse", "--is-shallow-repository"); got != "true" {
		t.Fatal("the clone is no longer shallow")
	}
	fsck(t, origin.Dir, env)
}

// TestPushIgnoresUserHook: the user's pre-push hook is for the user's
// branches; lockgate's branch is pushed without it.
func TestPushIgnoresUserHook(t *testing.T) {
	t.Parallel()
	r := cloneOf(t, newBare(t))
	marker := filepath.Join(t.TempDir(), "ran")
	writeFile(t, filepath.Join(r.Dir, ".git", "hooks", "pre-push"), "#!/bin/sh\ntouch "+marker+"\nexit 1\n", 0o755)
	w := openWriter(t, repoOf(r))
	if _, err := w.Commit(context.Background(), events("w", 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Push(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the user's pre-push hook ran")
	}
}
