package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// eventsRemote is a bare remote of a clone with workflow.auto_push whose
// pre-receive hook refuses pushes of the workflow branch as the test
// says: every one while closed, the first of each new tip while racing
// (a push race lost once). When main arrives it notes where the
// workflow branch is on the remote at that moment.
type eventsRemote struct {
	t    *testing.T
	c    *cliRepo
	dir  string
	gate string
}

func newEventsRemote(t *testing.T, config string) *eventsRemote {
	t.Helper()
	r := &eventsRemote{t: t, c: newCLIRepo(t), dir: filepath.Join(t.TempDir(), "remote.git"), gate: t.TempDir()}
	if out, err := exec.Command("git", "init", "-q", "--bare", r.dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	hook := "#!/bin/sh\ngate='" + r.gate + "'\nwhile read old new ref; do\n" +
		"  if [ \"$ref\" = refs/heads/main ]; then\n" +
		"    git rev-parse -q --verify refs/heads/lockgate/workflow > \"$gate/workflow-at-main\" || :\n" +
		"  fi\n" +
		"  [ \"$ref\" = refs/heads/lockgate/workflow ] || continue\n" +
		"  if [ -e \"$gate/closed\" ]; then echo 'the remote is closed' >&2; exit 1; fi\n" +
		"  if [ -e \"$gate/racing\" ] && mkdir \"$gate/seen-$new\" 2>/dev/null; then echo 'lost the race (once)' >&2; exit 1; fi\n" +
		"done\n"
	if err := os.WriteFile(filepath.Join(r.dir, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	r.c.repo.Write(".lockgate.yaml", config)
	r.c.repo.Git("add", ".lockgate.yaml")
	r.c.repo.Git("commit", "-q", "-m", "policy")
	r.c.repo.Git("remote", "add", "origin", r.dir)
	r.c.repo.Git("push", "-q", "origin", "HEAD:refs/heads/main")
	lockgateBinary(t)
	return r
}

// set puts the remote in mode ("closed", "racing" or "" to take every push).
func (r *eventsRemote) set(mode string) {
	r.t.Helper()
	for _, m := range []string{"closed", "racing"} {
		p := filepath.Join(r.gate, m)
		if m == mode {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				r.t.Fatal(err)
			}
		} else if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			r.t.Fatal(err)
		}
	}
}

// remoteTip is the workflow branch on the remote ("" when it has none).
func (r *eventsRemote) remoteTip() string {
	out, _ := exec.Command("git", "-C", r.dir, "rev-parse", "-q", "--verify", "refs/heads/lockgate/workflow").Output()
	return strings.TrimSpace(string(out))
}

// localTip is the clone's workflow branch.
func (r *eventsRemote) localTip() string {
	return r.c.repo.Git("rev-parse", "refs/heads/lockgate/workflow")
}

// requirePushed fails unless the remote has every event of the clone.
func (r *eventsRemote) requirePushed(when string) {
	r.t.Helper()
	if local, remote := r.localTip(), r.remoteTip(); local != remote {
		r.t.Fatalf("%s: the remote's workflow branch is at %q, the clone's at %s: events not pushed", when, remote, local)
	}
}

// TestNextCommandPushesPendingEvents: events whose push failed (the
// remote was down) are pushed by the clone's next command that opens the
// lock store, though it records no event of its own.
func TestNextCommandPushesPendingEvents(t *testing.T) {
	t.Parallel()
	r := newEventsRemote(t, "version: 1\nworkflow: {auto_push: true}\n")
	r.set("closed")
	if code, out := r.c.run("alice", "lock", "acquire", "a.txt"); code != 0 || !strings.Contains(out, "pre-receive hook declined") {
		t.Fatalf("lock acquire with the remote closed: exit %d, want 0 and the push's refusal:\n%s", code, out)
	}
	if tip := r.remoteTip(); tip != "" {
		t.Fatalf("the remote took the workflow branch while closed: %s", tip)
	}
	r.set("")
	// workflow sync --no-push is told not to push: it does not.
	if code, out := r.c.run("alice", "workflow", "sync", "--no-push"); code != 0 || r.remoteTip() != "" {
		t.Fatalf("workflow sync --no-push: exit %d, remote at %q, want 0 and nothing pushed:\n%s", code, r.remoteTip(), out)
	}
	if code, out := r.c.run("alice", "lock", "list"); code != 0 {
		t.Fatalf("lock list: exit %d:\n%s", code, out)
	}
	r.requirePushed("after the next command")
	// Nothing is left: the next command pushes nothing, says nothing.
	r.set("closed")
	if code, out := r.c.run("alice", "lock", "list"); code != 0 || strings.Contains(out, "warning") {
		t.Fatalf("lock list with nothing to push and the remote closed: exit %d, want 0 without a warning:\n%s", code, out)
	}
}

// TestPrePushPushesPendingEvents: events whose push failed go to the
// remote in pre-push, before the commits that need them arrive there.
func TestPrePushPushesPendingEvents(t *testing.T) {
	t.Parallel()
	r := newEventsRemote(t, "version: 1\nworkflow: {auto_push: true}\nhooks: {require_lock: true, trailers: true}\n")
	if code, out := r.c.run("alice", "install"); code != 0 {
		t.Fatalf("install: exit %d:\n%s", code, out)
	}
	r.set("closed")
	if code, out := r.c.run("alice", "lock", "acquire", "a.txt"); code != 0 {
		t.Fatalf("lock acquire: exit %d:\n%s", code, out)
	}
	r.c.repo.Write("a.txt", "a\n")
	r.c.repo.Git("add", "a.txt")
	commit := exec.Command("git", "commit", "-q", "-m", "a")
	commit.Dir, commit.Env = r.c.repo.Dir, append(append([]string(nil), r.c.repo.Env...), "LOCKGATE_WORKER=alice")
	if out, err := commit.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v:\n%s", err, out)
	}
	if tip := r.remoteTip(); tip != "" {
		t.Fatalf("the remote took the workflow branch while closed: %s", tip)
	}
	r.set("")
	push := exec.Command("git", "push", "-q", "origin", "HEAD:refs/heads/main")
	push.Dir, push.Env = r.c.repo.Dir, append(append([]string(nil), r.c.repo.Env...), "LOCKGATE_WORKER=alice")
	if out, err := push.CombinedOutput(); err != nil {
		t.Fatalf("git push: %v:\n%s", err, out)
	}
	at, err := os.ReadFile(filepath.Join(r.gate, "workflow-at-main"))
	if err != nil {
		t.Fatalf("the remote's hook did not see main arrive: %v", err)
	}
	if got, want := strings.TrimSpace(string(at)), r.localTip(); got != want {
		t.Fatalf("when main arrived the remote's workflow branch was at %q, want the clone's %s (with the lock's events)", got, want)
	}
}

// TestDoneRetriesLostPush: done whose push of its events loses a race
// pushes again before it exits, and says in --json that they are on the
// remote; with the remote refusing every push it still finishes the
// package but says loudly that the events are not there.
func TestDoneRetriesLostPush(t *testing.T) {
	t.Parallel()
	r := newEventsRemote(t, "version: 1\nworkflow: {auto_push: true}\n")
	r.c.writePackages("packages:\n  - id: WP-1\n    title: one\n    locks: {files: [a.txt]}\n  - id: WP-2\n    title: two\n    locks: {files: [b.txt]}\n")
	r.set("racing")
	if code, out := r.c.run("alice", "claim", "WP-1"); code != 0 {
		t.Fatalf("claim WP-1: exit %d:\n%s", code, out)
	}
	r.requirePushed("after claim")
	code, out := r.c.runOut("alice", "done", "WP-1", "--json")
	if code != 0 {
		t.Fatalf("done WP-1: exit %d:\n%s", code, out)
	}
	var rep struct {
		Pushed *bool  `json:"events_pushed"`
		Error  string `json:"events_push_error"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Pushed == nil || !*rep.Pushed || rep.Error != "" {
		t.Fatalf("done --json = %v, want events_pushed true:\n%s", err, out)
	}
	r.requirePushed("after done")

	if code, out := r.c.run("alice", "claim", "WP-2"); code != 0 {
		t.Fatalf("claim WP-2: exit %d:\n%s", code, out)
	}
	r.set("closed")
	cmd := r.c.cmd("alice", "done", "WP-2", "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("done WP-2 with the remote closed: %v (the package is done all the same):\n%s%s", err, stdout, stderr.String())
	}
	rep.Pushed, rep.Error = nil, ""
	if err := json.Unmarshal(stdout, &rep); err != nil || rep.Pushed == nil || *rep.Pushed || !strings.Contains(rep.Error, "pre-receive hook declined") {
		t.Fatalf("done --json with the remote closed = %v, want events_pushed false and the refusal in events_push_error:\n%s", err, stdout)
	}
	if !strings.Contains(stderr.String(), "warning: events not on origin yet") || !strings.Contains(stderr.String(), "lockgate workflow sync") {
		t.Fatalf("done with the remote closed does not warn naming `lockgate workflow sync`:\n%s", stderr.String())
	}
	if r.remoteTip() == r.localTip() {
		t.Fatal("the remote took the workflow branch while closed")
	}

	// The worker loop pushes its events (and those done left behind)
	// before it ends, pushing again a push that lost, and says so.
	r.c.writePackages("packages:\n  - id: WP-1\n    title: one\n    locks: {files: [a.txt]}\n  - id: WP-2\n    title: two\n    locks: {files: [b.txt]}\n" +
		"  - id: WP-3\n    title: three\n    locks: {files: [c.txt]}\n")
	r.set("racing")
	code, out = r.c.runOut("alice", "work", "--json", "--", "true")
	if code != 0 {
		t.Fatalf("work: exit %d:\n%s", code, out)
	}
	rep.Pushed, rep.Error = nil, ""
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Pushed == nil || !*rep.Pushed || rep.Error != "" {
		t.Fatalf("work --json = %v, want events_pushed true:\n%s", err, out)
	}
	r.requirePushed("after work")
}
