package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// regexpLine reports whether a line of out matches the pattern.
func regexpLine(out, pattern string) bool {
	return regexp.MustCompile("(?m)" + pattern).MatchString(out)
}

// TestAgentClearOfAPersonsLock: an agent worker (`--worker-type agent`)
// that forces a person's lock away with `lock clear --force` is refused
// with exit 6, naming the rule, the config key that lifts it and the
// command the person runs; the lock stays. Once the committed policy says
// locks.agents_clear_human: true, the same clear goes through. A person
// clears an agent's lock either way.
func TestAgentClearOfAPersonsLock(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.repo.Write("src/a.go", "package a\n")
	if code, out := c.run("admin", "init"); code != 0 {
		t.Fatalf("lockgate init: exit %d: %s", code, out)
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-qm", "init")
	for _, args := range [][]string{{"alice", "lock", "acquire", "src/a.go"}, {"bot2", "--worker-type", "agent", "lock", "acquire", "src/b.go"}} {
		if code, out := c.run(args[0], args[1:]...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
	for _, args := range [][]string{{"lock", "clear", "--force", "src/a.go"}, {"lock", "release", "--force", "src/a.go"}} {
		code, out := c.run("bot", append([]string{"--worker-type", "agent"}, args...)...)
		if code != 6 || !strings.Contains(out, "agent bot may not clear a person's lock") || !strings.Contains(out, "locks.agents_clear_human: true") ||
			!strings.Contains(out, "ask alice to run `lockgate lock release src/a.go`") {
			t.Errorf("%v as agent bot: exit %d, want 6 naming the rule, the key and the command:\n%s", args, code, out)
		}
	}
	if code, out := c.runOut("viewer", "lock", "list", "--json"); code != 0 || !strings.Contains(out, `"holder": "alice"`) {
		t.Fatalf("alice's lock is gone: exit %d: %s", code, out)
	}
	if code, out := c.run("alice", "lock", "clear", "--force", "src/b.go"); code != 0 {
		t.Fatalf("alice clearing an agent's lock: exit %d: %s", code, out)
	}

	// The policy lets agents, once committed.
	policy, err := os.ReadFile(filepath.Join(c.repo.Dir, ".lockgate.yaml"))
	if err != nil || !strings.Contains(string(policy), "\nlocks:\n") {
		t.Fatalf("the policy lockgate init wrote: %v:\n%s", err, policy)
	}
	c.repo.Write(".lockgate.yaml", strings.Replace(string(policy), "\nlocks:\n", "\nlocks:\n  agents_clear_human: true\n", 1))
	if code, out := c.run("bot", "--worker-type", "agent", "lock", "clear", "--force", "src/a.go"); code != 6 {
		t.Errorf("with the policy changed in the worktree only: exit %d, want 6:\n%s", code, out)
	}
	c.repo.Git("commit", "-qam", "agents may clear people's locks")
	if code, out := c.run("bot", "--worker-type", "agent", "lock", "clear", "--force", "src/a.go"); code != 0 || !strings.Contains(out, "alice") {
		t.Errorf("with the policy committed: exit %d:\n%s", code, out)
	}
}

// TestServeUserAdmin: `serve user add --admin` makes an admin, as
// `serve user list` (and --json) shows; through the server a user who is
// no admin may not clear another's lock (403, naming the rule and the
// command that adds an admin), an admin may.
func TestServeUserAdmin(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.repo.Write("src/a.go", "package a\n")
	if code, out := c.run("admin", "init"); code != 0 {
		t.Fatalf("lockgate init: exit %d: %s", code, out)
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-qm", "init")
	token := func(args ...string) string {
		code, out := c.run("admin", append([]string{"serve", "user", "add"}, args...)...)
		if code != 0 {
			t.Fatalf("serve user add %v: exit %d: %s", args, code, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	bob, root := token("bob"), token("root", "--admin")
	code, out := c.runOut("admin", "serve", "user", "list")
	if code != 0 || !strings.Contains(out, "ADMIN") || !regexpLine(out, `^bob\s+human\s+no\s`) || !regexpLine(out, `^root\s+human\s+yes\s`) {
		t.Fatalf("serve user list: exit %d:\n%s", code, out)
	}
	code, out = c.runOut("admin", "serve", "user", "list", "--json")
	var us []struct {
		Name  string
		Admin bool
	}
	if code != 0 || json.Unmarshal([]byte(out), &us) != nil || len(us) != 2 || us[0].Admin || !us[1].Admin {
		t.Fatalf("serve user list --json: exit %d: %s", code, out)
	}

	if code, out := c.run("alice", "lock", "acquire", "src/a.go"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	addr := startServe(t, c)
	clear := func(name, tok string) (int, string) {
		req, err := http.NewRequest(http.MethodDelete, "http://"+addr+"/api/v1/locks/src/a.go?force=true", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(name, tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, string(b)
	}
	if status, body := clear("bob", bob); status != 403 || !strings.Contains(body, "only an admin") || !strings.Contains(body, "lockgate serve user add NAME --admin") {
		t.Errorf("bob's clear: %d %s, want 403 naming the rule", status, body)
	}
	if status, body := clear("root", root); status != 200 || !strings.Contains(body, `"holder":"alice"`) {
		t.Errorf("root's clear: %d %s", status, body)
	}
}
