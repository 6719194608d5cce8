package main

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/hint"
)

// TestColourOnTerminal drives the real binary in a tmux pane: on a
// terminal a refusal is in colour; with NO_COLOR it is not.
func TestColourOnTerminal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: `make test` installs it (apt-get install tmux)")
	}
	c := newCLIRepo(t)
	if code, out := c.run("bob", "lock", "acquire", "a.py"); code != 0 {
		t.Fatalf("lock: %d %s", code, out)
	}
	socket := fmt.Sprintf("lockgate-test-%d", time.Now().UnixNano())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	for _, tc := range []struct {
		name, env string
		colour    bool
	}{{"tty", "", true}, {"nocolor", "NO_COLOR=1", false}} {
		var env []string
		for _, kv := range c.repo.Env {
			env = append(env, hint.Quote(kv))
		}
		line := fmt.Sprintf("cd %s && env %s LOCKGATE_WORKER=alice TERM=xterm-256color %s %s lock acquire a.py; sleep 60",
			hint.Quote(c.repo.Dir), strings.Join(env, " "), tc.env, hint.Quote(lockgateBinary(t)))
		if out, err := tmux("new-session", "-d", "-s", tc.name, "-x", "200", "-y", "50", line); err != nil {
			t.Fatalf("tmux new-session: %v: %s", err, out)
		}
		var screen string
		for deadline := time.Now().Add(30 * time.Second); ; {
			out, err := tmux("capture-pane", "-p", "-e", "-t", tc.name)
			if err != nil {
				t.Fatalf("capture-pane: %v: %s", err, out)
			}
			screen = out
			if strings.Contains(screen, "or remove it") || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(screen, "held by bob") {
			t.Fatalf("%s: the refusal did not appear:\n%s", tc.name, screen)
		}
		var refusal string
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, "held by bob") {
				refusal = l
			}
		}
		if got := strings.Contains(refusal, "\x1b["); got != tc.colour {
			t.Errorf("%s: colour %v, want %v: %q", tc.name, got, tc.colour, refusal)
		}
	}
}
