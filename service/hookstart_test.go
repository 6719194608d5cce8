package service

import (
	"context"
	"path/filepath"
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
		if started := e.staged != nil; started != tc.started {
			t.Errorf("hook %q, LOCKGATE_SKIP=%q: listing started %v, want %v", tc.hook, tc.skip, started, tc.started)
		}
		e.Close()
	}

	e, err := Load(ctx, Options{Dir: r.Dir, As: "alice", Hook: "pre-commit", Getenv: env(), Clock: now.Local})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.staged == nil {
		t.Fatal("Load did not start git listing the staged change")
	}
	if _, err := e.staged(); err != nil { // git is done listing
		t.Fatal(err)
	}
	r.Write(lockedPath, "package src // changed\n")
	r.Git("add", lockedPath)
	rep, err := e.PreCommit(ctx, HookInput{Getenv: env()})
	wantOutcome(t, rep, err, nil, nil)
	if rep.Paths != 1 {
		t.Fatalf("judged %d paths, want 1 (%s, listed when Load started git)", rep.Paths, freePath)
	}
	if e.staged != nil {
		t.Fatal("the listing was not taken by the hook")
	}
	rep, err = load(t, r, "alice").PreCommit(ctx, HookInput{Getenv: env()})
	wantOutcome(t, rep, err, []string{"locked"}, nil)
}

// TestStartListing: a hook's listing started before the workspace loads
// is the one the hook judges when it ran at the work tree's top (where
// git runs hooks); one started elsewhere is stopped and the change listed
// again. Hooks that judge no staged change, or that LOCKGATE_SKIP may
// skip, start none.
func TestStartListing(t *testing.T) {
	ctx := context.Background()
	r := testRepo(t, "")
	r.Write(freePath, "package src // changed\n")
	r.Git("add", freePath)
	t.Chdir(r.Dir)
	for _, tc := range []struct {
		hook, skip string
		started    bool
	}{
		{hook: "pre-commit", started: true},
		{hook: "pre-merge-commit", started: true},
		{hook: "pre-commit", skip: "yes"},
		{hook: "commit-msg"},
		{hook: "pre-receive"},
	} {
		l := StartListing(ctx, tc.hook, env("LOCKGATE_SKIP="+tc.skip))
		if (l != nil) != tc.started {
			t.Errorf("hook %q, LOCKGATE_SKIP=%q: listing started %v, want %v", tc.hook, tc.skip, l != nil, tc.started)
		}
		l.Stop()
	}

	for _, tc := range []struct {
		name, cwd string
		rules     []string
	}{
		// Listed before lockedPath was staged, and judged.
		{name: "at the top", cwd: r.Dir},
		// Stopped: the hook lists the change again, lockedPath included.
		{name: "in a subdirectory", cwd: filepath.Join(r.Dir, "src"), rules: []string{"locked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.Git("reset", "-q", lockedPath)
			t.Chdir(tc.cwd)
			l := StartListing(ctx, "pre-commit", env())
			if l == nil {
				t.Fatal("no listing started")
			}
			defer l.Stop()
			if _, err := l.wait(); err != nil { // git is done listing
				t.Fatal(err)
			}
			r.Write(lockedPath, "package src // changed\n")
			r.Git("add", lockedPath)
			e, err := Load(ctx, Options{Dir: r.Dir, As: "alice", Hook: "pre-commit", Listing: l, Getenv: env(), Clock: now.Local})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			rep, err := e.PreCommit(ctx, HookInput{Getenv: env()})
			wantOutcome(t, rep, err, tc.rules, nil)
		})
	}
}
