package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestKilledAcquireGitStore: a `lock acquire` on the git store killed while
// its push is on its way to a slow server never leaves a lock on the
// remote without its lock_acquire event, once the next command has run and
// the server has finished whatever it was receiving. (The push dies with
// lockgate, and the next command seals the state it finds, so that a push
// still being received fails its lease.)
func TestKilledAcquireGitStore(t *testing.T) {
	t.Parallel()
	remote := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	// The server takes a while with every push, as a forge does.
	hook := filepath.Join(remote, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >/dev/null\nsleep 0.5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCLIRepo(t)
	c.repo.Write(".lockgate.yaml", "version: 1\nlocks: {store: git}\nworkflow: {auto_commit: false}\n")
	c.repo.Git("remote", "add", "origin", remote)
	lockgateBinary(t)
	start := time.Now()
	if code, out := c.run("probe", "lock", "acquire", "probe.txt"); code != 0 {
		t.Fatalf("probe: %d %s", code, out)
	}
	span := time.Since(start)
	n := gittest.Rounds(t, 24)
	for i := range n {
		cmd := c.cmd("victim", "lock", "acquire", fmt.Sprintf("killed-%d.txt", i))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(rand.N(span))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		// The next command settles what the killed one left.
		if code, out := c.run("next", "lock", "list"); code != 0 {
			t.Fatalf("lock list: %d %s", code, out)
		}
	}
	time.Sleep(2 * time.Second) // anything the server was still receiving
	code, out := c.run("reader", "--json", "lock", "list")
	if code != 0 {
		t.Fatalf("lock list: %d %s", code, out)
	}
	var live []struct {
		Key       string `json:"key"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(out), &live); err != nil {
		t.Fatalf("lock list: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(c.repo.Dir, ".git", "lockgate", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	acquired := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev struct {
			Action    string `json:"action"`
			Key       string `json:"key"`
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Action == "lock_acquire" {
			acquired[ev.Key+" "+ev.RequestID] = true
		}
	}
	left := 0
	for _, l := range live {
		if !strings.HasPrefix(l.Key, "killed-") {
			continue
		}
		left++
		if !acquired[l.Key+" "+l.RequestID] {
			t.Errorf("lock %s (request %s) is on the remote without its lock_acquire event", l.Key, l.RequestID)
		}
	}
	t.Logf("%d acquires killed, %d left a lock", n, left)
}
