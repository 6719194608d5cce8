package main

import (
	"strings"
	"testing"

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
