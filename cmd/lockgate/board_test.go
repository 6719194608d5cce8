package main

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/hint"
)

// TestBoardTerminal drives `lockgate board` in a tmux pane: it shows the
// live locks and keeps up with changes, sorts and filters on keys, clears
// the selected lock after a confirmation (logged), and quits on q.
func TestBoardTerminal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: `make test` installs it (apt-get install tmux)")
	}
	c := newCLIRepo(t)
	for _, l := range []struct{ who, key, ttl string }{{"bob", "src/a.go", "1h"}, {"carol", "src/b.go", "2h"}} {
		if code, out := c.run(l.who, "lock", "acquire", l.key, "--ttl", l.ttl, "--reason", "work of "+l.who); code != 0 {
			t.Fatalf("lock: %d %s", code, out)
		}
	}
	socket := fmt.Sprintf("lockgate-board-%d", time.Now().UnixNano())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	var env []string
	for _, kv := range c.repo.Env {
		env = append(env, hint.Quote(kv))
	}
	line := fmt.Sprintf("cd %s && env %s LOCKGATE_WORKER=alice TERM=xterm-256color %s board; echo BOARD-EXITED; sleep 60",
		hint.Quote(c.repo.Dir), strings.Join(env, " "), hint.Quote(lockgateBinary(t)))
	if out, err := tmux("new-session", "-d", "-s", "b", "-x", "160", "-y", "40", line); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	screen := func() string {
		out, err := tmux("capture-pane", "-p", "-t", "b")
		if err != nil {
			t.Fatalf("capture-pane: %v: %s", err, out)
		}
		return out
	}
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		var s string
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if s = screen(); ok(s) {
				return s
			}
		}
		t.Fatalf("the board never showed %s:\n%s", what, s)
		return ""
	}
	keys := func(k ...string) {
		if out, err := tmux(append([]string{"send-keys", "-t", "b"}, k...)...); err != nil {
			t.Fatalf("send-keys: %v: %s", err, out)
		}
	}
	has := func(subs ...string) func(string) bool {
		return func(s string) bool {
			for _, sub := range subs {
				if !strings.Contains(s, sub) {
					return false
				}
			}
			return true
		}
	}
	waitFor("both locks", has("lockgate board", "src/a.go", "src/b.go", "work of bob", "sorted by expiry"))
	// A lock taken meanwhile appears with the next refresh.
	if code, out := c.run("dave", "lock", "acquire", "src/c.go"); code != 0 {
		t.Fatalf("lock: %d %s", code, out)
	}
	waitFor("the new lock", has("src/c.go", "dave"))
	keys("s")
	waitFor("the holder sort", has("sorted by holder"))
	keys("w")
	s := waitFor("one worker", has("worker bob"))
	if !strings.Contains(s, "— 1 live lock(s)") || strings.Contains(s, "carol                human") {
		t.Fatalf("the filter on bob shows others' locks:\n%s", s)
	}
	// Clear bob's lock: asked first; n keeps it, y clears it.
	keys("c")
	waitFor("the confirmation", has("clear src/a.go, held by bob? (logged) y/n"))
	keys("n")
	waitFor("the refusal", has("not cleared"))
	keys("c")
	waitFor("the confirmation", has("clear src/a.go, held by bob?"))
	keys("y")
	waitFor("the clearing", has("cleared src/a.go (logged)"))
	if code, out := c.run("alice", "lock", "check", "src/a.go"); code != 0 || !strings.Contains(out, "free") {
		t.Fatalf("after the clear: %d %s", code, out)
	}
	if _, out := c.run("alice", "log"); !strings.Contains(out, "lock_clear") {
		t.Fatalf("the clear is not logged:\n%s", out)
	}
	keys("q")
	waitFor("the exit", has("BOARD-EXITED"))
}

// TestBoardNotATerminal: off a terminal the board prints a plain frame a
// second until it is stopped.
func TestBoardNotATerminal(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	if code, out := c.run("bob", "lock", "acquire", "src/a.go"); code != 0 {
		t.Fatalf("lock: %d %s", code, out)
	}
	cmd := c.cmd("alice", "board")
	out := &lockedBuffer{}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); strings.Count(out.String(), "lockgate board —") < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if n := strings.Count(out.String(), "lockgate board —"); n < 2 || !strings.Contains(out.String(), "src/a.go") || strings.Contains(out.String(), "\x1b") {
		t.Fatalf("%d frames (want 2 or more, plain, naming src/a.go):\n%q", n, out.String())
	}
}

// lockedBuffer is a buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
