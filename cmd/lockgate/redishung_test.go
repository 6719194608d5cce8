package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/redistest"
)

// TestRedisHungCommand: against a hung Redis server (SIGSTOP: it accepts
// connections and answers nothing) every command fails with exit 3 and
// says the server did not answer within the timeout. The whole command
// shares one timeout: once the server has not answered, it is not asked
// again.
func TestRedisHungCommand(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	c := newCLIRepo(t)
	if code, out := c.run("alice", "store", "use", srv.URL()); code != 0 {
		t.Fatalf("store use: %d %s", code, out)
	}
	if code, out := c.run("alice", "lock", "acquire", "a.py"); code != 0 {
		t.Fatalf("acquire: %d %s", code, out)
	}
	srv.Pause()
	defer srv.Resume()
	for _, args := range [][]string{
		{"lock", "acquire", "b.py"},
		{"lock", "release", "a.py"},
		{"lock", "refresh", "a.py"},
		{"lock", "list"},
		{"lock", "check", "a.py"},
		{"lock", "clear", "a.py", "--force"},
	} {
		code, out := c.run("alice", args...)
		if code != 3 {
			t.Errorf("%s against a hung server: exit %d, want 3: %s", args, code, out)
		}
		if !strings.Contains(out, "unavailable") || !strings.Contains(out, "no answer within 2s") {
			t.Errorf("%s: %q does not say the store gave no answer within 2s", args, out)
		}
	}
}

// TestRedisHungLockHold: `lock hold` rides out a Redis server that stops
// answering for a while shorter than the lock's TTL (SIGSTOP, then
// SIGCONT): a renewal it could not confirm is tried again, CMD runs to its
// end, and the lock is given back after.
func TestRedisHungLockHold(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	c := newCLIRepo(t)
	if code, out := c.run("alice", "store", "use", srv.URL()); code != 0 {
		t.Fatalf("store use: %d %s", code, out)
	}
	// A 12s lock is renewed every 4s; the server pauses from CMD's start
	// for 7s, so that the first renewal meets it paused and times out.
	cmd := c.cmd("alice", "lock", "hold", "a.py", "--ttl", "12s", "--", "sh", "-c", "touch started && sleep 10")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	started := filepath.Join(c.repo.Dir, "started")
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("lock hold ended before CMD started: %v\n%s", err, &out)
		case <-time.After(20 * time.Millisecond):
		}
	}
	srv.Pause()
	time.Sleep(7 * time.Second)
	srv.Resume()
	if err := <-done; err != nil {
		t.Fatalf("lock hold: %v, want CMD's exit 0\n%s", err, &out)
	}
	for _, want := range []string{"could not renew the locks", "no answer within 2s", "renewed the locks again"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lock hold did not say %q:\n%s", want, &out)
		}
	}
	if code, list := c.run("alice", "lock", "list"); code != 0 || strings.Contains(list, "a.py") {
		t.Errorf("lock list after the hold: %d %s; want a.py given back", code, list)
	}
}
