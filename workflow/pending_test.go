package workflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// refuseFirstPush makes the bare remote refuse the first push of every
// new tip of the workflow branch (a push race lost); the same tip pushed
// again is taken.
func refuseFirstPush(t *testing.T, bare string) {
	t.Helper()
	seen := t.TempDir()
	hook := "#!/bin/sh\nwhile read old new ref; do\n" +
		"  if [ \"$ref\" = refs/heads/lockgate/workflow ] && mkdir '" + seen + "'/\"$new\" 2>/dev/null; then\n" +
		"    echo 'refused once' >&2; exit 1\n  fi\ndone\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestUnpushed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	r := cloneOf(t, remote)
	w := openWriter(t, repoOf(r))
	unpushed := func(want bool, when string) {
		t.Helper()
		got, err := w.Unpushed(ctx)
		if err != nil || got != want {
			t.Fatalf("%s: Unpushed = %v, %v; want %v", when, got, err, want)
		}
	}
	unpushed(false, "no branch")
	if _, err := w.Commit(ctx, events("a", 1)); err != nil {
		t.Fatal(err)
	}
	unpushed(true, "committed, never pushed")
	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}
	unpushed(false, "pushed")
	if _, err := w.Commit(ctx, events("b", 1)); err != nil {
		t.Fatal(err)
	}
	unpushed(true, "committed after the push")
	if err := w.Push(ctx); err != nil {
		t.Fatal(err)
	}

	// Another clone pushes on top; this clone's fetch brings it: the
	// remote-tracking ref is ahead, nothing of this clone is left.
	other := cloneOf(t, remote)
	ow := openWriter(t, repoOf(other))
	if _, err := ow.Commit(ctx, events("c", 1)); err != nil {
		t.Fatal(err)
	}
	if err := ow.Push(ctx); err != nil {
		t.Fatal(err)
	}
	r.Git("fetch", "-q", "origin", "lockgate/workflow")
	unpushed(false, "the remote ahead of the branch")
}

// TestPushPendingWithoutFetchRefspec: a remote whose fetch refspec does
// not cover the branch leaves git's push without a remote-tracking ref to
// move; Push moves it, so that what it sent is not sent again.
func TestPushPendingWithoutFetchRefspec(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := cloneOf(t, newBare(t))
	r.Git("config", "remote.origin.fetch", "+refs/heads/main:refs/remotes/origin/main")
	w := openWriter(t, repoOf(r))
	if _, err := w.Commit(ctx, events("a", 2)); err != nil {
		t.Fatal(err)
	}
	if pushed, err := w.PushPending(ctx, 1); err != nil || !pushed {
		t.Fatalf("PushPending = %v, %v; want pushed", pushed, err)
	}
	if got, want := r.Git("rev-parse", w.TrackingRef()), r.Git("rev-parse", w.Ref()); got != want {
		t.Fatalf("%s = %s after the push, want the pushed tip %s", w.TrackingRef(), got, want)
	}
	if pushed, err := w.PushPending(ctx, 1); err != nil || pushed {
		t.Fatalf("PushPending with nothing left = %v, %v; want nothing pushed", pushed, err)
	}
}

// TestPushPendingRetriesLostRace: a push the remote refuses once (a race
// lost) is pushed again by PushPending; a single round leaves the events
// unpushed and says so.
func TestPushPendingRetriesLostRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := newBare(t)
	refuseFirstPush(t, remote)
	r := cloneOf(t, remote)
	w := openWriter(t, repoOf(r))
	if _, err := w.Commit(ctx, events("a", 1)); err != nil {
		t.Fatal(err)
	}
	pushed, err := w.PushPending(ctx, 1)
	var pe *PushError
	if pushed || !errors.As(err, &pe) || !errors.Is(err, ErrRejected) {
		t.Fatalf("PushPending in one round against a remote that refuses once = %v, %v; want a *PushError", pushed, err)
	}
	if pending, err := w.Unpushed(ctx); err != nil || !pending {
		t.Fatalf("after the lost push: Unpushed = %v, %v; want true", pending, err)
	}

	if _, err := w.Commit(ctx, events("b", 1)); err != nil {
		t.Fatal(err)
	}
	if pushed, err := w.PushPending(ctx, PushRounds); err != nil || !pushed {
		t.Fatalf("PushPending = %v, %v; want pushed after the lost round", pushed, err)
	}
	tip := r.Git("rev-parse", w.Ref())
	if got := gitIn(t, remote, gittest.Env(t.TempDir()), "", "rev-parse", "refs/heads/lockgate/workflow"); got != tip {
		t.Fatalf("the remote's branch is at %s, want %s", got, tip)
	}
	if pending, err := w.Unpushed(ctx); err != nil || pending {
		t.Fatalf("after the push: Unpushed = %v, %v; want false", pending, err)
	}
}
