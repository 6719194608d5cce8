package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	c := newCLIRepo(t)
	for _, l := range []struct{ who, key, ttl string }{{"bob", "src/a.go", "1h"}, {"carol", "src/b.go", "2h"}} {
		if code, out := c.run(l.who, "lock", "acquire", l.key, "--ttl", l.ttl, "--reason", "work of "+l.who); code != 0 {
			t.Fatalf("lock: %d %s", code, out)
		}
	}
	p := boardPane(t, c, 160, 40)
	p.waitFor("both locks", hasAll("lockgate board", "src/a.go", "src/b.go", "work of bob", "sorted by expiry"))
	// A lock taken meanwhile appears with the next refresh.
	if code, out := c.run("dave", "lock", "acquire", "src/c.go"); code != 0 {
		t.Fatalf("lock: %d %s", code, out)
	}
	p.waitFor("the new lock", hasAll("src/c.go", "dave"))
	p.keys("s")
	p.waitFor("the holder sort", hasAll("sorted by holder"))
	p.keys("w")
	s := p.waitFor("one worker", hasAll("worker bob"))
	if !strings.Contains(s, "— 1 live lock(s)") || strings.Contains(s, "carol                human") {
		t.Fatalf("the filter on bob shows others' locks:\n%s", s)
	}
	// Clear bob's lock: asked first; n keeps it, y clears it.
	p.keys("c")
	p.waitFor("the confirmation", hasAll("clear src/a.go, held by bob? (logged) y/n"))
	p.keys("n")
	p.waitFor("the refusal", hasAll("not cleared"))
	p.keys("c")
	p.waitFor("the confirmation", hasAll("clear src/a.go, held by bob?"))
	p.keys("y")
	p.waitFor("the clearing", hasAll("cleared src/a.go (logged)"))
	if code, out := c.run("alice", "lock", "check", "src/a.go"); code != 0 || !strings.Contains(out, "free") {
		t.Fatalf("after the clear: %d %s", code, out)
	}
	if _, out := c.run("alice", "log"); !strings.Contains(out, "lock_clear") {
		t.Fatalf("the clear is not logged:\n%s", out)
	}
	p.keys("q")
	p.waitFor("the exit", hasAll("BOARD-EXITED"))
}

// TestBoardQueueTerminal: with a work packages file the board shows the
// queue beside the locks, cut to the screen, follows it as packages
// finish, and names a problem of the file without leaving the locks.
func TestBoardQueueTerminal(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	var wps strings.Builder
	wps.WriteString("packages:\n")
	for i := range 30 {
		fmt.Fprintf(&wps, "  - id: P-%02d\n    title: part %d\n    locks:\n      files: [src/p%02d.go]\n", i, i, i)
		if i == 1 {
			wps.WriteString("    depends_on: [P-00]\n")
		}
	}
	file := filepath.Join(c.repo.Dir, "work-packages.yaml")
	if err := os.WriteFile(file, []byte(wps.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		who  string
		args []string
	}{
		{"alice", []string{"claim", "P-00"}},
		{"bob", []string{"claim", "P-02"}},
		{"carol", []string{"claim", "P-03"}},
		{"carol", []string{"done", "P-03", "--failed", "flaky test"}},
	} {
		if code, out := c.run(step.who, step.args...); code != 0 {
			t.Fatalf("%s %v: %d %s", step.who, step.args, code, out)
		}
	}
	p := boardPane(t, c, 160, 40)
	// 4 rows of locks; the queue gets the 17 rows left: both claims, the
	// failure and 14 of the 27 ready packages, those free to claim first
	// (P-01 waits for P-00).
	s := p.waitFor("the queue", hasAll("src/p02.go",
		"work packages (work-packages.yaml): 27 ready, 2 claimed, 0 done, 1 failed",
		"failed: flaky test", "ready      P-04                 -                    -          free to claim", "… 13 more (13 ready)"))
	for _, want := range []string{"claimed    P-00                 alice", "claimed    P-02                 bob", "failed     P-03                 carol"} {
		if !strings.Contains(s, want) {
			t.Fatalf("the queue lacks %q:\n%s", want, s)
		}
	}
	if code, out := c.run("alice", "done", "P-00"); code != 0 {
		t.Fatalf("done: %d %s", code, out)
	}
	p.waitFor("P-00 done", hasAll("27 ready, 1 claimed, 1 done, 1 failed", "ready      P-01                 -                    -          free to claim"))
	// A broken file: the section says where, the locks stay in view.
	if err := os.WriteFile(file, []byte(wps.String()+"  - id: P-05\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = p.waitFor("the problem", hasAll("work packages (work-packages.yaml): not shown: work-packages.yaml:123: duplicate package id \"P-05\""))
	if !strings.Contains(s, "src/p02.go") || strings.Contains(s, "BOARD-EXITED") {
		t.Fatalf("the board lost the locks over a broken file:\n%s", s)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	s = p.waitFor("no section", func(s string) bool { return !strings.Contains(s, "work packages") })
	if !strings.Contains(s, "src/p02.go") {
		t.Fatalf("without the file:\n%s", s)
	}
	p.keys("q")
	p.waitFor("the exit", hasAll("BOARD-EXITED"))
}

// pane is lockgate board running in a tmux pane.
type pane struct {
	t    *testing.T
	tmux func(args ...string) (string, error)
}

// boardPane starts `lockgate board` as alice in c's repository, in a tmux
// pane of w×h cells.
func boardPane(t *testing.T, c *cliRepo, w, h int) *pane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: `make test` installs it (apt-get install tmux)")
	}
	socket := fmt.Sprintf("lockgate-board-%d", time.Now().UnixNano())
	p := &pane{t: t, tmux: func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}}
	t.Cleanup(func() { _, _ = p.tmux("kill-server") })
	var env []string
	for _, kv := range c.repo.Env {
		env = append(env, hint.Quote(kv))
	}
	line := fmt.Sprintf("cd %s && env %s LOCKGATE_WORKER=alice TERM=xterm-256color %s board; echo BOARD-EXITED; sleep 60",
		hint.Quote(c.repo.Dir), strings.Join(env, " "), hint.Quote(lockgateBinary(t)))
	if out, err := p.tmux("new-session", "-d", "-s", "b", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), line); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	return p
}

func (p *pane) screen() string {
	out, err := p.tmux("capture-pane", "-p", "-t", "b")
	if err != nil {
		p.t.Fatalf("capture-pane: %v: %s", err, out)
	}
	return out
}

// waitFor waits until the screen passes ok, and returns it.
func (p *pane) waitFor(what string, ok func(string) bool) string {
	p.t.Helper()
	var s string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if s = p.screen(); ok(s) {
			return s
		}
	}
	p.t.Fatalf("the board never showed %s:\n%s", what, s)
	return ""
}

func (p *pane) keys(k ...string) {
	if out, err := p.tmux(append([]string{"send-keys", "-t", "b"}, k...)...); err != nil {
		p.t.Fatalf("send-keys: %v: %s", err, out)
	}
}

// hasAll passes a screen that shows every one of subs.
func hasAll(subs ...string) func(string) bool {
	return func(s string) bool {
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				return false
			}
		}
		return true
	}
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
