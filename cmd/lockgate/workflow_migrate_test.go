package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// formatOneWorkflow writes, on the bare remote dir, a workflow branch of
// format 1 (every event in the tip's tree, no format blob) holding a
// lock of legacy.txt taken and given back by bob an hour ago, as
// earlier versions of lockgate left it.
func formatOneWorkflow(t *testing.T, dir string) {
	t.Helper()
	at := time.Now().Add(-time.Hour).UTC()
	var b strings.Builder
	b.WriteString("commit refs/heads/lockgate/workflow\ncommitter lockgate <lockgate@localhost> 1700000000 +0000\ndata 9\n2 events\n")
	for i, action := range []string{"lock_acquire", "lock_release"} {
		id := fmt.Sprintf("%016x%016x", at.UnixNano()+int64(i), 7+i)
		line := fmt.Sprintf(`{"id":%q,"timestamp":%q,"worker":"bob","worker_type":"agent","action":%q,"key":"legacy.txt"}`+"\n",
			id, at.Add(time.Duration(i)*time.Minute).Format(time.RFC3339Nano), action)
		h := sha256.Sum256([]byte(id))
		x := hex.EncodeToString(h[:])
		fmt.Fprintf(&b, "M 100644 inline events/%s/%s/%s.json\ndata %d\n%s\n", x[:2], x[2:4], id, len(line), line)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fast-import: %v: %s", err, out)
	}
}

// TestWorkflowMigrate: a clone whose remote holds a workflow branch of
// format 1 keeps its locks working but its events off the branch, and
// its pre-push refuses (exit 3) naming `lockgate workflow migrate`;
// that command moves the branch in place and pushes it, the journal's
// events follow with the next command, the push goes through, and a
// fresh clone verifies the pushed commit; the old events are still read.
func TestWorkflowMigrate(t *testing.T) {
	t.Parallel()
	r := newEventsRemote(t, "version: 1\nworkflow: {auto_push: true}\nhooks: {require_lock: true, trailers: true}\n")
	formatOneWorkflow(t, r.dir)
	old := r.remoteTip()
	r.c.repo.Git("fetch", "-q", "origin", "+refs/heads/lockgate/workflow:refs/remotes/origin/lockgate/workflow")
	if code, out := r.c.run("alice", "install"); code != 0 {
		t.Fatalf("install: exit %d:\n%s", code, out)
	}
	code, out := r.c.run("alice", "lock", "acquire", "a.txt")
	if code != 0 || !strings.Contains(out, "lockgate workflow migrate") || strings.Contains(out, "workflow sync") {
		t.Fatalf("lock acquire on a format-1 branch: exit %d, want 0 and a warning naming the migration (not a sync, which fails the same way):\n%s", code, out)
	}
	if r.remoteTip() != old {
		t.Fatal("the remote's format-1 branch moved before the migration")
	}
	r.c.repo.Write("a.txt", "a\n")
	r.c.repo.Git("add", "a.txt")
	gitAs := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		now := time.Now().Format(time.RFC3339)
		cmd.Dir, cmd.Env = r.c.repo.Dir, append(append([]string(nil), r.c.repo.Env...), "LOCKGATE_WORKER=alice", "GIT_AUTHOR_DATE="+now, "GIT_COMMITTER_DATE="+now)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := gitAs("commit", "-q", "-m", "a"); err != nil {
		t.Fatalf("git commit: %v:\n%s", err, out)
	}
	out, err := gitAs("push", "origin", "HEAD:refs/heads/main")
	if err == nil || !strings.Contains(out, "lockgate workflow migrate") {
		t.Fatalf("git push before the migration: %v, want pre-push's refusal naming the migration:\n%s", err, out)
	}
	if code, out := r.c.run("alice", "workflow", "sync"); code != 3 || !strings.Contains(out, "lockgate workflow migrate") {
		t.Fatalf("workflow sync before the migration: exit %d, want 3 naming the migration:\n%s", code, out)
	}
	code, out = r.c.run("alice", "workflow", "migrate")
	if code != 0 || !strings.Contains(out, "moved to format 2") || !strings.Contains(out, "pushed to origin") {
		t.Fatalf("workflow migrate: exit %d:\n%s", code, out)
	}
	if parent, _ := exec.Command("git", "-C", r.dir, "rev-parse", "refs/heads/lockgate/workflow^").Output(); strings.TrimSpace(string(parent)) != old {
		t.Fatalf("the remote's branch after the migration is on %s, want the old tip %s", parent, old)
	}
	if code, out := r.c.run("alice", "workflow", "migrate", "--json"); code != 0 || strings.Contains(out, `"base"`) {
		t.Fatalf("workflow migrate again: exit %d, want 0 and nothing migrated:\n%s", code, out)
	}
	if code, out := r.c.run("alice", "workflow", "sync"); code != 0 {
		t.Fatalf("workflow sync: exit %d:\n%s", code, out)
	}
	if out, err := gitAs("push", "origin", "HEAD:refs/heads/main"); err != nil {
		t.Fatalf("git push after the migration: %v:\n%s", err, out)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	clone := exec.Command("git", "clone", "-q", "--branch", "main", r.dir, fresh)
	clone.Env = r.c.repo.Env
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v: %s", err, out)
	}
	v := &cliRepo{t: t, repo: &gittest.Repo{Dir: fresh, Env: r.c.repo.Env}}
	if code, out := v.run("ci", "verify", "--fetch", "--range", "HEAD~1..HEAD"); code != 0 {
		t.Fatalf("verify in a fresh clone: exit %d:\n%s", code, out)
	}
	if code, out := r.c.run("alice", "log", "--worker", "bob", "--json"); code != 0 || strings.Count(out, `"legacy.txt"`) != 2 {
		t.Fatalf("log of the format-1 events after the migration: exit %d:\n%s", code, out)
	}
}

// TestWorkflowMigrateElsewhere: a clone whose own branch is still of
// format 1 after another clone moved the remote's takes the remote's
// with `workflow migrate` (its events kept, as a base), rather than move
// the branch a second time; its lock commands then commit and push again.
func TestWorkflowMigrateElsewhere(t *testing.T) {
	t.Parallel()
	r := newEventsRemote(t, "version: 1\nworkflow: {auto_push: true}\n")
	formatOneWorkflow(t, r.dir)
	b := &cliRepo{t: t, repo: &gittest.Repo{Dir: filepath.Join(t.TempDir(), "b"), Env: r.c.repo.Env}}
	clone := exec.Command("git", "clone", "-q", "--branch", "main", r.dir, b.repo.Dir)
	clone.Env = r.c.repo.Env
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v: %s", err, out)
	}
	// b's own branch, of format 1, with an event of its own on it.
	branch := exec.Command("git", "branch", "lockgate/workflow", "origin/lockgate/workflow")
	branch.Dir, branch.Env = b.repo.Dir, b.repo.Env
	if out, err := branch.CombinedOutput(); err != nil {
		t.Fatalf("git branch: %v: %s", err, out)
	}
	if code, out := b.run("bob", "lock", "acquire", "b.txt"); code != 0 || !strings.Contains(out, "lockgate workflow migrate") {
		t.Fatalf("lock acquire in b before any migration: exit %d:\n%s", code, out)
	}
	r.c.repo.Git("fetch", "-q", "origin", "+refs/heads/lockgate/workflow:refs/remotes/origin/lockgate/workflow")
	if code, out := r.c.run("alice", "workflow", "migrate"); code != 0 || !strings.Contains(out, "moved to format 2") {
		t.Fatalf("workflow migrate in a: exit %d:\n%s", code, out)
	}
	code, out := b.run("bob", "workflow", "migrate")
	if code != 0 || !strings.Contains(out, "took it") {
		t.Fatalf("workflow migrate in b after a's: exit %d, want b to take the remote's branch:\n%s", code, out)
	}
	if code, out := b.run("bob", "workflow", "sync"); code != 0 {
		t.Fatalf("workflow sync in b: exit %d:\n%s", code, out)
	}
	if code, out := b.run("bob", "lock", "acquire", "c.txt"); code != 0 || strings.Contains(out, "workflow branch") {
		t.Fatalf("lock acquire in b after taking the remote's branch: exit %d, want 0 without a warning about the branch:\n%s", code, out)
	}
	log, err := exec.Command("git", "-C", r.dir, "log", "--format=%s", "refs/heads/lockgate/workflow").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "Move the workflow branch to format 2"); n != 1 {
		t.Fatalf("the remote's branch was moved %d times, want once:\n%s", n, log)
	}
	if code, out := b.run("bob", "log", "--json"); code != 0 || !strings.Contains(out, `"b.txt"`) || !strings.Contains(out, `"c.txt"`) || !strings.Contains(out, `"legacy.txt"`) {
		t.Fatalf("log in b: exit %d, want the old events, b's of before and after:\n%s", code, out)
	}
}
