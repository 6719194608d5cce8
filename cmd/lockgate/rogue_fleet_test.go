//go:build agents

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestRogueAgentFleet runs a team as it runs in fact, on the git store
// with a clone each: an owner holds src/owned.go throughout; two honest
// agents lock, edit, commit through the hooks, push and release in
// rounds; a rogue agent tries every way past the owner's lock that
// skips the commit hooks (`commit --no-verify`, a copied trailer,
// `cherry-pick`, `commit-tree` with `update-ref`), edits the policy, and
// asks its pre-edit guard; a waiting worker is killed. Every rogue
// attempt is refused, the honest work lands, and `lockgate verify` in a
// fresh clone proves what was pushed.
func TestRogueAgentFleet(t *testing.T) {
	t.Parallel()
	bin := lockgateBinary(t)
	root := t.TempDir()
	home := filepath.Join(root, ".home")
	// Real dates: verify judges each commit at the time it was made.
	var env []string
	for _, kv := range gittest.Env(home) {
		if !strings.HasPrefix(kv, "GIT_AUTHOR_DATE=") && !strings.HasPrefix(kv, "GIT_COMMITTER_DATE=") {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(dir, worker string, stdin string, name string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(append([]string(nil), env...), "LOCKGATE_WORKER="+worker, "LOCKGATE_WORKER_TYPE=agent")
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &ee):
			return string(out), ee.ExitCode()
		}
		t.Fatalf("%s %v: %v", name, args, err)
		return "", -1
	}
	must := func(dir, worker, name string, args ...string) string {
		t.Helper()
		out, code := run(dir, worker, "", name, args...)
		if code != 0 {
			t.Fatalf("%s %s %v: exit %d\n%s", worker, name, args, code, out)
		}
		return out
	}

	origin := filepath.Join(root, "origin.git")
	must(root, "setup", "git", "init", "-q", "--bare", "-b", "main", origin)
	seed := filepath.Join(root, "seed")
	must(root, "setup", "git", "init", "-q", "-b", "main", seed)
	write(t, filepath.Join(seed, ".lockgate.yaml"), "version: 1\nlocks:\n  store: git\nworkflow:\n  auto_push: true\nscope:\n  user_owned: [DESIGN.md]\n")
	write(t, filepath.Join(seed, "DESIGN.md"), "design\n")
	for _, f := range []string{"src/owned.go", "src/h0.go", "src/h1.go", "src/free.go"} {
		write(t, filepath.Join(seed, f), "package src\n")
	}
	must(seed, "setup", "git", "add", "-A")
	must(seed, "setup", "git", "commit", "-q", "-m", "base")
	must(seed, "setup", "git", "push", "-q", origin, "main")
	base := strings.TrimSpace(must(seed, "setup", "git", "rev-parse", "HEAD"))
	clone := func(name string) string {
		dir := filepath.Join(root, name)
		must(root, "setup", "git", "clone", "-q", origin, dir)
		must(dir, "setup", "git", "config", "gc.auto", "0")
		must(dir, "setup", bin, "install")
		return dir
	}
	owner, rogue := clone("owner"), clone("rogue")
	must(owner, "owner", bin, "lock", "acquire", "src/owned.go", "--ttl", "30m", "--reason", "owner's refactor")

	// A worker killed while it waits for the owner's file.
	waiter := exec.Command(bin, "lock", "acquire", "src/owned.go", "--wait", "5m")
	waiter.Dir = clone("waiter")
	waiter.Env = append(append([]string(nil), env...), "LOCKGATE_WORKER=waiter", "LOCKGATE_WORKER_TYPE=agent")
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}

	// The honest agents work while the rogue tries.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	pushed := make(chan int, 2)
	for n := range 2 {
		dir := clone(fmt.Sprintf("honest-%d", n))
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker, file := fmt.Sprintf("honest-%d", n), fmt.Sprintf("src/h%d.go", n)
			count := 0
			for round := range 2 {
				for _, step := range [][]string{
					{bin, "lock", "acquire", file, "--wait", "2m", "--ttl", "10m"},
					{"git", "pull", "-q", "--rebase", "origin", "main"},
				} {
					if out, code := run(dir, worker, "", step[0], step[1:]...); code != 0 {
						errs <- fmt.Errorf("%s: %v: exit %d\n%s", worker, step, code, out)
						return
					}
				}
				b, err := os.ReadFile(filepath.Join(dir, file))
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, file), fmt.Appendf(b, "// %s round %d\n", worker, round), 0o644)
				}
				if err != nil {
					errs <- err
					return
				}
				if out, code := run(dir, worker, "", "git", "commit", "-qam", fmt.Sprintf("%s round %d", worker, round)); code != 0 {
					errs <- fmt.Errorf("%s: an honest commit refused: %s", worker, out)
					return
				}
				for try := 0; ; try++ {
					out, code := run(dir, worker, "", "git", "push", "-q", "origin", "HEAD:main")
					if code == 0 {
						break
					}
					if try == 20 {
						errs <- fmt.Errorf("%s: push: %s", worker, out)
						return
					}
					if out, code := run(dir, worker, "", "git", "pull", "-q", "--rebase", "origin", "main"); code != 0 {
						errs <- fmt.Errorf("%s: pull: %s", worker, out)
						return
					}
				}
				count++
				if out, code := run(dir, worker, "", bin, "lock", "release", file); code != 0 {
					errs <- fmt.Errorf("%s: release: %s", worker, out)
					return
				}
			}
			pushed <- count
		}()
	}

	// The rogue agent: each way past the owner's lock is refused, and the
	// branch does not move.
	head := func() string { return strings.TrimSpace(must(rogue, "rogue", "git", "rev-parse", "HEAD")) }
	before := head()
	write(t, filepath.Join(rogue, "src/owned.go"), "package src\n// rogue\n")
	forged := "rogue edit\n\nLockgate-Worker: owner\nLockgate-Worker-Type: agent\nLockgate-Session: owner\n"
	for _, attempt := range [][]string{
		{"git", "commit", "-q", "--no-verify", "-am", "rogue: no verify"},
		{"git", "commit", "-q", "--no-verify", "-am", forged},
	} {
		out, code := run(rogue, "rogue", "", attempt[0], attempt[1:]...)
		if code == 0 || !strings.Contains(out, "reference-transaction refused") || !strings.Contains(out, "src/owned.go: locked") {
			t.Errorf("rogue %v: exit %d, want a refusal naming the owner's lock\n%s", attempt, code, out)
		}
		if h := head(); h != before {
			t.Fatalf("rogue %v moved the branch to %s", attempt, h)
		}
	}
	must(rogue, "rogue", "git", "add", "src/owned.go")
	tree := strings.TrimSpace(must(rogue, "rogue", "git", "write-tree"))
	plumbed := strings.TrimSpace(must(rogue, "rogue", "git", "commit-tree", "-p", "HEAD", "-m", "rogue: plumbing", tree))
	if out, code := run(rogue, "rogue", "", "git", "update-ref", "refs/heads/main", plumbed); code == 0 || !strings.Contains(out, "src/owned.go: locked") {
		t.Errorf("rogue update-ref: exit %d\n%s", code, out)
	}
	must(rogue, "rogue", "git", "reset", "-q", "--hard")
	must(rogue, "rogue", "git", "checkout", "-q", "-b", "side")
	write(t, filepath.Join(rogue, "src/owned.go"), "package src\n// rogue on a side branch\n")
	// A side commit made with the logged bypass, then picked onto main
	// (-x: a commit of its own, as a pick of another's work is).
	skip := exec.Command("git", "commit", "-qam", "rogue: bypassed on a side branch")
	skip.Dir, skip.Env = rogue, append(append([]string(nil), env...), "LOCKGATE_WORKER=rogue", "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SKIP=1")
	if out, err := skip.CombinedOutput(); err != nil {
		t.Fatalf("setting up the side commit: %v\n%s", err, out)
	}
	must(rogue, "rogue", "git", "checkout", "-q", "main")
	if out, code := run(rogue, "rogue", "", "git", "cherry-pick", "-x", "side"); code == 0 || !strings.Contains(out, "src/owned.go: locked") {
		t.Errorf("rogue cherry-pick: exit %d\n%s", code, out)
	}
	run(rogue, "rogue", "", "git", "cherry-pick", "--abort")
	if h := head(); h != before {
		t.Fatalf("the rogue's attempts moved main to %s", h)
	}
	// The policy, and the guard asked before an edit.
	write(t, filepath.Join(rogue, ".lockgate.yaml"), "version: 1\nlocks:\n  store: git\n")
	write(t, filepath.Join(rogue, "DESIGN.md"), "rogue design\n")
	if out, code := run(rogue, "rogue", "", "git", "commit", "-qam", "rogue: relax the policy"); code == 0 || !strings.Contains(out, "policy_file") || !strings.Contains(out, "DESIGN.md: user_owned") {
		t.Errorf("rogue policy edit: exit %d\n%s", code, out)
	}
	must(rogue, "rogue", "git", "reset", "-q", "--hard")
	payload, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "cwd": rogue, "tool_name": "Write",
		"tool_input": map[string]any{"file_path": filepath.Join(rogue, "src/owned.go"), "content": "x"}})
	if out, code := run(rogue, "rogue", string(payload), bin, "guard", "claude-code"); code != 2 || !strings.Contains(out, "locked by owner") {
		t.Errorf("rogue's guard: exit %d\n%s", code, out)
	}

	// The waiter is killed; the honest agents finish; the owner commits
	// and pushes its work and releases.
	_ = waiter.Process.Signal(syscall.SIGKILL)
	_ = waiter.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	total := <-pushed + <-pushed
	must(owner, "owner", "git", "pull", "-q", "--rebase", "origin", "main")
	write(t, filepath.Join(owner, "src/owned.go"), "package src\n// owner's refactor\n")
	must(owner, "owner", "git", "commit", "-qam", "owner's refactor")
	must(owner, "owner", "git", "push", "-q", "origin", "HEAD:main")
	must(owner, "owner", bin, "lock", "release", "src/owned.go")
	total++

	verifier := filepath.Join(root, "verifier")
	must(root, "ci", "git", "clone", "-q", origin, verifier)
	if got := strings.TrimSpace(must(verifier, "ci", "git", "rev-list", "--count", base+"..origin/main")); got != fmt.Sprint(total) {
		t.Errorf("origin's main has %s commits since the base, the team pushed %d", got, total)
	}
	cmd := exec.Command(bin, "verify", "--fetch", "--range", base+"..origin/main", "--format", "json")
	cmd.Dir = verifier
	cmd.Env = append(append([]string(nil), env...), "LOCKGATE_WORKER=ci", "LOCKGATE_WORKER_TYPE=agent")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("verify: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if strings.Contains(stdout.String(), "rogue") {
		t.Errorf("a rogue commit reached origin:\n%s", stdout.String())
	}
}
