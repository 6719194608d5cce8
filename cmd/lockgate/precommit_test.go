package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// snapshotRepo copies this repository's files as they are now (tracked
// and untracked, minus ignored) into a fresh git repository and returns it
// with its commit: the pre-commit framework installs hooks from a commit.
func snapshotRepo(t *testing.T) (dir, rev string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("list files: %v", err)
	}
	snap := gittest.New(t)
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		snap.Write(f, string(data))
	}
	snap.Commit("snapshot")
	return snap.Dir, snap.Git("rev-parse", "HEAD")
}

// TestPreCommitFramework installs lockgate's hooks with the real pre-commit
// tool from a local clone of this repository and checks that they refuse a
// commit and a push touching a path locked by someone else.
func TestPreCommitFramework(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Fatal("pre-commit is not installed: `make test` installs it (apt-get install pre-commit)")
	}
	hookRepo, rev := snapshotRepo(t)

	r := gittest.New(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	r.Git("init", "-q", "--bare", remote)
	r.Git("remote", "add", "origin", remote)
	modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := lockgateBinary(t)
	env := append(append([]string(nil), r.Env...),
		"PRE_COMMIT_HOME="+filepath.Join(t.TempDir(), "pre-commit-home"),
		"GOMODCACHE="+strings.TrimSpace(string(modcache)), // reuse downloaded modules
		// Built as lockgateBinary builds it (static, -trimpath), so
		// that the framework's `go install` finds every package in the
		// build cache and only links.
		"GOFLAGS=-mod=mod -trimpath", "CGO_ENABLED=0",
		"LOCKGATE_WORKER=alice",
	)
	for _, k := range []string{"GOPROXY", "GOCACHE", "GOROOT"} {
		if v := os.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	if c, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		env = append(env, "GOCACHE="+strings.TrimSpace(string(c)))
	}
	r.Env = env
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = r.Dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(name string, args ...string) string {
		t.Helper()
		out, err := run(name, args...)
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return out
	}

	r.Write(".pre-commit-config.yaml", fmt.Sprintf(`repos:
  - repo: %s
    rev: %s
    hooks:
      - id: lockgate-pre-commit
      - id: lockgate-commit-msg
      - id: lockgate-pre-push
`, hookRepo, rev))
	r.Write("a.txt", "a\n")
	r.Commit("init")
	must("pre-commit", "install", "--hook-type", "pre-commit", "--hook-type", "commit-msg", "--hook-type", "pre-push")
	must("git", "push", "-q", "origin", "main")

	// A free path commits through the framework's hooks.
	r.Write("b.txt", "b\n")
	r.Git("add", "b.txt")
	if out := must("git", "commit", "-m", "add b"); !strings.Contains(out, "lockgate (locks and scope)") {
		t.Fatalf("the pre-commit framework did not run lockgate:\n%s", out)
	}
	// The framework's commit-msg hook writes the attestation trailers.
	must(bin, "lock", "acquire", "b.txt")
	r.Write("b.txt", "b2\n")
	r.Git("add", "b.txt")
	must("git", "commit", "-m", "change b")
	msg := r.Git("log", "-1", "--format=%(trailers:key=Lockgate-Worker,key=Lockgate-Lock)")
	if want := "Lockgate-Worker: alice\nLockgate-Lock: b.txt fence=1\n"; strings.TrimSpace(msg) != strings.TrimSpace(want) {
		t.Fatalf("trailers after a commit through the framework:\n%s\nwant\n%s", msg, want)
	}
	must(bin, "lock", "release", "b.txt")

	// bob locks a.txt; alice's commit of it is refused.
	must(bin, "--as", "bob", "lock", "acquire", "a.txt")
	r.Write("a.txt", "changed\n")
	r.Git("add", "a.txt")
	out, err := run("git", "commit", "-m", "touch a")
	if err == nil {
		t.Fatalf("commit of a path locked by bob went through:\n%s", out)
	}
	if !strings.Contains(out, "a.txt: locked: locked by bob") {
		t.Fatalf("refusal does not name the lock:\n%s", out)
	}

	// The commit lands once bob releases; the push is refused while bob
	// holds the path again.
	must(bin, "--as", "bob", "lock", "release", "a.txt")
	must("git", "commit", "-m", "touch a")
	must(bin, "--as", "bob", "lock", "acquire", "a.txt")
	out, err = run("git", "push", "origin", "main")
	if err == nil {
		t.Fatalf("push of a commit touching bob's path went through:\n%s", out)
	}
	if !strings.Contains(out, "a.txt: locked") {
		t.Fatalf("push refusal does not name the lock:\n%s", out)
	}
	must(bin, "--as", "bob", "lock", "release", "a.txt")
	must("git", "push", "-q", "origin", "main")
}

// TestPreCommitFrameworkSystem: the -system hook ids run the lockgate on
// PATH — nothing is built — and refuse as the others do; without lockgate
// on PATH the commit fails, never passes.
func TestPreCommitFrameworkSystem(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pre-commit"); err != nil {
		t.Fatal("pre-commit is not installed: `make test` installs it (apt-get install pre-commit)")
	}
	hookRepo, rev := snapshotRepo(t)
	r := gittest.New(t)
	home := filepath.Join(t.TempDir(), "pre-commit-home")
	binDir := filepath.Dir(lockgateBinary(t))
	base := append([]string(nil), r.Env...)
	withPath := func(path string) []string {
		env := []string{"PRE_COMMIT_HOME=" + home, "LOCKGATE_WORKER=alice"}
		for _, kv := range base {
			if !strings.HasPrefix(kv, "PATH=") {
				env = append(env, kv)
			}
		}
		return append(env, "PATH="+path)
	}
	env := withPath(binDir + string(os.PathListSeparator) + os.Getenv("PATH"))
	run := func(env []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = r.Dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	r.Write(".pre-commit-config.yaml", fmt.Sprintf(`repos:
  - repo: %s
    rev: %s
    hooks:
      - id: lockgate-pre-commit-system
      - id: lockgate-commit-msg-system
      - id: lockgate-pre-push-system
`, hookRepo, rev))
	r.Write("a.txt", "a\n")
	r.Commit("init")
	if out, err := run(env, "pre-commit", "install", "--hook-type", "pre-commit", "--hook-type", "commit-msg", "--hook-type", "pre-push"); err != nil {
		t.Fatalf("pre-commit install: %v\n%s", err, out)
	}
	if out, err := run(env, lockgateBinary(t), "--as", "bob", "lock", "acquire", "a.txt"); err != nil {
		t.Fatalf("lock: %v\n%s", err, out)
	}
	r.Write("a.txt", "changed\n")
	r.Git("add", "a.txt")
	out, err := run(env, "git", "commit", "-m", "touch a")
	if err == nil || !strings.Contains(out, "a.txt: locked: locked by bob") {
		t.Fatalf("commit of a path locked by bob: %v\n%s", err, out)
	}
	// Nothing was built: no Go environment in the framework's cache.
	if built, _ := filepath.Glob(filepath.Join(home, "*", "golangenv-*")); len(built) > 0 {
		t.Fatalf("the -system hooks built lockgate: %v", built)
	}
	// Without lockgate on PATH the hook cannot run: the commit fails.
	noLockgate := withPath("/usr/bin:/bin")
	r.Write("b.txt", "b\n")
	r.Git("add", "b.txt")
	if out, err := run(noLockgate, "git", "commit", "-m", "add b"); err == nil {
		t.Fatalf("commit without lockgate on PATH went through:\n%s", out)
	}
}
