package service

import (
	"context"
	"testing"
)

// TestLoadStartsStagedListing: told the hook it runs, Load starts git
// listing the staged change at once, and the hook judges that listing
// (here the index as it was at Load, before lockedPath was staged); other
// hooks, and a hook LOCKGATE_SKIP may skip, start nothing.
func TestLoadStartsStagedListing(t *testing.T) {
	ctx := context.Background()
	r := testRepo(t, "")
	r.Write(freePath, "package src // changed\n")
	r.Git("add", freePath)
	for _, tc := range []struct {
		hook, skip string
		started    bool
	}{
		{hook: "pre-commit", started: true},
		{hook: "pre-merge-commit", started: true},
		{hook: "pre-commit", skip: "1"},
		{hook: "commit-msg"},
		{hook: "pre-push"},
		{},
	} {
		e, err := Load(ctx, Options{Dir: r.Dir, As: "alice", Hook: tc.hook, Getenv: env("LOCKGATE_SKIP=" + tc.skip), Clock: now.Local})
		if err != nil {
			t.Fatal(err)
		}
		if started := e.Staged != nil; started != tc.started {
			t.Errorf("hook %q, LOCKGATE_SKIP=%q: listing started %v, want %v", tc.hook, tc.skip, started, tc.started)
		}
		e.Close()
	}

	e, err := Load(ctx, Options{Dir: r.Dir, As: "alice", Hook: "pre-commit", Getenv: env(), Clock: now.Local})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Staged == nil {
		t.Fatal("Load did not start git listing the staged change")
	}
	if _, err := e.Staged(); err != nil { // git is done listing
		t.Fatal(err)
	}
	r.Write(lockedPath, "package src // changed\n")
	r.Git("add", lockedPath)
	rep, err := e.PreCommit(ctx, HookInput{Getenv: env()})
	wantOutcome(t, rep, err, nil, nil)
	if rep.Paths != 1 {
		t.Fatalf("judged %d paths, want 1 (%s, listed when Load started git)", rep.Paths, freePath)
	}
	if e.Staged != nil {
		t.Fatal("the listing was not taken by the hook")
	}
	rep, err = load(t, r, "alice").PreCommit(ctx, HookInput{Getenv: env()})
	wantOutcome(t, rep, err, []string{"locked"}, nil)
}
