package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestGitStoreFlatFreshClone: on the git store, the lock ref holds the
// present only, through the whole binary: after any number of lock
// commands it reaches one commit, and a fresh clone's first `lock list`
// fetches as many objects after 23 commands as after 3.
func TestGitStoreFlatFreshClone(t *testing.T) {
	t.Parallel()
	bin := lockgateBinary(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nlocks: {store: git}\nworkflow: {auto_commit: false, auto_push: false}\n")
	r.Write("README.md", "x\n")
	r.Commit("init")
	r.Git("remote", "add", "origin", bare)
	r.Git("push", "-q", "origin", "main")
	env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=alice", "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SESSION=s1")
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("lockgate %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gitIn := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, r.Env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	objects := func(dir string) int {
		total := 0
		for _, l := range strings.Split(gitIn(dir, "count-objects", "-v"), "\n") {
			if k, v, _ := strings.Cut(l, ": "); k == "count" || k == "in-pack" {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("count-objects: %q", l)
				}
				total += n
			}
		}
		return total
	}
	// firstList is what a fresh clone fetches for its first `lock list`.
	firstList := func() int {
		dir := filepath.Join(t.TempDir(), "fresh")
		gitIn(t.TempDir(), "clone", "-q", "--no-local", bare, dir) // no hard links to the remote's objects
		before := objects(dir)
		if out := run(dir, "lock", "list"); !strings.Contains(out, "live.go") || strings.Contains(out, "churn.go") {
			t.Fatalf("a fresh clone's lock list:\n%s", out)
		}
		return objects(dir) - before
	}
	run(r.Dir, "lock", "acquire", "live.go")
	churn := func(n int) {
		for range n {
			run(r.Dir, "lock", "acquire", "churn.go")
			run(r.Dir, "lock", "release", "churn.go")
		}
	}
	churn(1)
	few := firstList()
	churn(10)
	if n := gitIn(bare, "rev-list", "--count", "refs/lockgate/locks"); n != "1" {
		t.Errorf("after 23 lock commands the lock ref reaches %s commits, want 1", n)
	}
	if many := firstList(); many != few {
		t.Errorf("a fresh clone's first lock list fetched %d objects after 23 lock commands, %d after 3: want the same", many, few)
	}
}
