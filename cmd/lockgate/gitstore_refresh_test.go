package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestGitStoreRefreshOnePush: `lock refresh` of several keys on the git
// store is one change of the lock table, one push, whatever the number of
// keys; and a key it cannot refresh stops it after those before it, as
// before (they are refreshed, the command fails).
func TestGitStoreRefreshOnePush(t *testing.T) {
	t.Parallel()
	bin := lockgateBinary(t)
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nlocks: {store: git}\nworkflow: {auto_commit: false}\n")
	r.Write("README.md", "x\n")
	r.Commit("init")
	r.Git("remote", "add", "origin", bare)
	// Every push runs git receive-pack on the remote: a wrapper counts them.
	calls := filepath.Join(t.TempDir(), "pushes")
	wrapper := filepath.Join(t.TempDir(), "receive-pack")
	script := "#!/bin/sh\necho push >> '" + calls + "'\nexec git receive-pack \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("config", "remote.origin.receivepack", wrapper)
	pushes := func() int {
		data, _ := os.ReadFile(calls)
		os.Remove(calls)
		return strings.Count(string(data), "push")
	}
	env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=alice", "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SESSION=s1")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = r.Dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("lock", "acquire", "a.go", "b.go", "c.go", "d.go"); err != nil {
		t.Fatalf("lock acquire: %v\n%s", err, out)
	}
	pushes()
	if out, err := run("lock", "refresh", "a.go", "b.go", "c.go", "d.go", "--ttl", "2h"); err != nil {
		t.Fatalf("lock refresh: %v\n%s", err, out)
	}
	if n := pushes(); n != 1 {
		t.Fatalf("lock refresh of four keys pushed %d times, want once", n)
	}
	// e.go is not held: a.go and b.go are refreshed, in one push, and the
	// command fails naming e.go.
	out, err := run("--json", "lock", "refresh", "a.go", "b.go", "e.go", "c.go", "--ttl", "3h")
	if err == nil || !strings.Contains(out, `"key": "a.go"`) || !strings.Contains(out, `"key": "b.go"`) || strings.Contains(out, `"key": "c.go"`) || !strings.Contains(out, "e.go") {
		t.Fatalf("lock refresh with a key not held: %v\n%s", err, out)
	}
	if n := pushes(); n != 1 {
		t.Fatalf("lock refresh of two keys before one not held pushed %d times, want once", n)
	}
}
