package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// slowFirstPush is a clone whose remote holds up the first push it
// receives (the first grant's event, with workflow.auto_push) at the
// server until open is called; the pushes after it go through. entered
// appears once that push has reached the server.
func slowFirstPush(t *testing.T) (c *cliRepo, entered string, open func()) {
	t.Helper()
	gate := t.TempDir()
	remote := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	receive := filepath.Join(gate, "receive-pack")
	script := "#!/bin/sh\nif mkdir '" + gate + "/first' 2>/dev/null; then\n  touch '" + gate + "/entered'\n" +
		"  n=0; while [ ! -e '" + gate + "/open' ]; do n=$((n+1)); [ $n -lt 3000 ] || exit 9; sleep 0.1; done\nfi\nexec git-receive-pack \"$@\"\n"
	if err := os.WriteFile(receive, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c = newCLIRepo(t)
	c.repo.Write(".lockgate.yaml", "version: 1\nworkflow: {auto_push: true}\n")
	c.repo.Git("remote", "add", "origin", remote)
	c.repo.Git("config", "remote.origin.receivepack", receive)
	lockgateBinary(t)
	return c, filepath.Join(gate, "entered"), func() {
		if err := os.WriteFile(filepath.Join(gate, "open"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHoldLapsedBeforeCommand: `lock hold` whose grant takes longer to
// return than the lock lives (its event's push to a slow remote) does not
// start the command once another worker has taken the lapsed lock: it
// renews before the command starts, finds the lock taken, and fails
// (exit 4) without running it.
func TestHoldLapsedBeforeCommand(t *testing.T) {
	t.Parallel()
	c, entered, open := slowFirstPush(t)
	ran := filepath.Join(t.TempDir(), "ran")
	hold := c.cmd("alice", "lock", "hold", "a.txt", "--ttl", "2s", "--", "touch", ran)
	var out strings.Builder
	hold.Stdout, hold.Stderr = &out, &out
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, entered)
	// alice's grant is made and its event on its way; bob waits for the
	// lock to lapse and takes it.
	if code, o := c.run("bob", "lock", "acquire", "a.txt", "--wait", "1m"); code != 0 {
		t.Fatalf("bob's acquire: %d %s", code, o)
	}
	open()
	err := hold.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("lock hold = %v, want exit 4 (held by another): bob took the lock before the command started:\n%s", err, out.String())
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("the command ran under a lock bob held:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "lapsed before the command could start") || !strings.Contains(out.String(), "bob") {
		t.Fatalf("lock hold's error does not say the lock lapsed to bob:\n%s", out.String())
	}
	if strings.Contains(out.String(), "holding a.txt") {
		t.Fatalf("lock hold said it held a.txt:\n%s", out.String())
	}
	// bob still holds it: alice's failed hold gave back nothing of his.
	if code, o := c.run("carol", "lock", "check", "a.txt"); code != 4 || !strings.Contains(o, "bob") {
		t.Fatalf("lock check after: %d %s", code, o)
	}
}
