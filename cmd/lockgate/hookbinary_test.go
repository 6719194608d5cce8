package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// hookRig is a repository where bob holds src/locked.go, with a bare
// origin, and a lockgate for the hook binary to hand over to that records
// every call.
type hookRig struct {
	r      *gittest.Repo
	remote string
	log    string // what the recording lockgate was asked, one call a line
	env    []string
}

func newHookRig(t *testing.T, store string) *hookRig {
	t.Helper()
	bin := lockgateBinary(t)
	r := gittest.New(t)
	h := &hookRig{r: r, remote: filepath.Join(t.TempDir(), "remote.git"), log: filepath.Join(t.TempDir(), "handed-over.log")}
	r.Git("init", "-q", "--bare", h.remote)
	r.Git("remote", "add", "origin", h.remote)
	r.Write("src/free.go", "package src\n")
	r.Write("src/locked.go", "package src\n")
	r.Commit("init")
	r.Git("push", "-q", "origin", "HEAD")
	recorder := filepath.Join(t.TempDir(), "lockgate")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " + h.log + "\nexec " + bin + " \"$@\"\n"
	if err := os.WriteFile(recorder, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h.env = append(append([]string(nil), r.Env...), "LOCKGATE_FULL_BIN="+recorder)
	h.lockgate(t, "bob", "init")
	if store != "" {
		// The policy names the store, as a team on it commits it.
		policy, err := os.ReadFile(filepath.Join(r.Dir, ".lockgate.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		r.Write(".lockgate.yaml", strings.Replace(string(policy), "store: file", "store: "+store, 1))
		r.Git("add", ".lockgate.yaml")
		r.Git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "lock on the "+store+" store")
		r.Git("push", "-q", "origin", "HEAD")
	}
	h.lockgate(t, "bob", "lock", "acquire", "--ttl", "24h", "src/locked.go")
	return h
}

// lockgate runs the full binary as worker in the rig.
func (h *hookRig) lockgate(t *testing.T, worker string, args ...string) string {
	t.Helper()
	cmd := exec.Command(lockgateBinary(t), args...)
	cmd.Dir, cmd.Env = h.r.Dir, append(append([]string(nil), h.env...), "LOCKGATE_WORKER="+worker)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lockgate %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// commitNoHooks commits path changed, running no hook.
func (h *hookRig) commitNoHooks(t *testing.T, path string) string {
	t.Helper()
	h.r.Write(path, "package src // changed\n")
	h.r.Git("add", path)
	h.r.Git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "change "+path)
	return h.r.Git("rev-parse", "HEAD")
}

type hookResult struct {
	exit           int
	stdout, stderr string
}

// run runs argv in the rig as alice, on stdin.
func (h *hookRig) run(t *testing.T, stdin string, extraEnv []string, argv ...string) hookResult {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = h.r.Dir
	cmd.Env = append(append(append([]string(nil), h.env...), "LOCKGATE_WORKER=alice"), extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := hookResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return res
}

// handedOver is what the recording lockgate was asked since the rig was
// set up, one call a line.
func (h *hookRig) handedOver(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(h.log)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two rigs differ in their directories and in when bob took his lock
// ("until 2026-12-08T14:14:13Z", "in 23h59m"): the comparison reads those
// as one.
var (
	durations = regexp.MustCompile(`\b(\d+[dhms])+\b`)
	stamps    = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
)

func sameAnswer(t *testing.T, what string, lean, full hookResult, leanDir, fullDir string) {
	t.Helper()
	norm := func(s, dir string) string {
		s = strings.ReplaceAll(s, dir, "REPO")
		return durations.ReplaceAllString(stamps.ReplaceAllString(s, "T"), "D")
	}
	lean.stdout, lean.stderr = norm(lean.stdout, leanDir), norm(lean.stderr, leanDir)
	full.stdout, full.stderr = norm(full.stdout, fullDir), norm(full.stderr, fullDir)
	if lean != full {

		t.Errorf("%s: lockgate-hook answered\n  exit %d\n  stdout %q\n  stderr %q\nlockgate hook answered\n  exit %d\n  stdout %q\n  stderr %q",
			what, lean.exit, lean.stdout, lean.stderr, full.exit, full.stdout, full.stderr)
	}
}

// TestHookBinaryAnswersAsLockgate runs each hook the hook binary runs
// itself and `lockgate hook` on the same state, each in a rig of its own,
// and wants the same exit code, stdout and stderr — and the hook binary to
// have run it itself: the lockgate it hands over to records every call,
// and recorded none.
func TestHookBinaryAnswersAsLockgate(t *testing.T) {
	t.Parallel()
	zeros := strings.Repeat("0", 40)
	tests := []struct {
		name     string
		args     []string
		env      []string
		prepare  func(t *testing.T, h *hookRig) (stdin string)
		wantExit int
	}{
		{name: "pre-commit lets a free file through", args: []string{"pre-commit"}, wantExit: 0,
			prepare: func(t *testing.T, h *hookRig) string {
				h.r.Write("src/free.go", "package src // changed\n")
				h.r.Git("add", "src/free.go")
				return ""
			}},
		{name: "pre-commit refuses another's locked file", args: []string{"pre-commit"}, wantExit: 1,
			prepare: func(t *testing.T, h *hookRig) string {
				h.r.Write("src/locked.go", "package src // changed\n")
				h.r.Git("add", "src/locked.go")
				return ""
			}},
		{name: "LOCKGATE_SKIP skips pre-commit, logged", args: []string{"pre-commit"}, env: []string{"LOCKGATE_SKIP=1"}, wantExit: 0,
			prepare: func(t *testing.T, h *hookRig) string {
				h.r.Write("src/locked.go", "package src // changed\n")
				h.r.Git("add", "src/locked.go")
				return ""
			}},
		{name: "LOCKGATE_SKIP of another value runs the checks", args: []string{"pre-commit"}, env: []string{"LOCKGATE_SKIP=maybe"}, wantExit: 1,
			prepare: func(t *testing.T, h *hookRig) string {
				h.r.Write("src/locked.go", "package src // changed\n")
				h.r.Git("add", "src/locked.go")
				return ""
			}},
		{name: "pre-commit refuses arguments", args: []string{"pre-commit", "extra"}, wantExit: 2,
			prepare: func(*testing.T, *hookRig) string { return "" }},
		{name: "commit-msg wants the message file", args: []string{"commit-msg"}, wantExit: 2,
			prepare: func(*testing.T, *hookRig) string { return "" }},
		{name: "commit-msg passes a message", args: []string{"commit-msg", ".git/COMMIT_EDITMSG"}, wantExit: 0,
			prepare: func(t *testing.T, h *hookRig) string {
				h.r.Write(".git/COMMIT_EDITMSG", "change free.go\n")
				h.r.Write("src/free.go", "package src // changed\n")
				h.r.Git("add", "src/free.go")
				return ""
			}},
		{name: "pre-push refuses a commit made with --no-verify", args: []string{"pre-push", "origin", "remote"}, wantExit: 1,
			prepare: func(t *testing.T, h *hookRig) string {
				sha := h.commitNoHooks(t, "src/locked.go")
				return "refs/heads/main " + sha + " refs/heads/main " + zeros + "\n"
			}},
		{name: "pre-push lets a free commit out", args: []string{"pre-push", "origin", "remote"}, wantExit: 0,
			prepare: func(t *testing.T, h *hookRig) string {
				sha := h.commitNoHooks(t, "src/free.go")
				return "refs/heads/main " + sha + " refs/heads/main " + zeros + "\n"
			}},
		{name: "reference-transaction refuses a branch moving onto a locked change", args: []string{"reference-transaction", "prepared"}, wantExit: 1,
			prepare: func(t *testing.T, h *hookRig) string {
				old := h.r.Git("rev-parse", "HEAD")
				sha := h.commitNoHooks(t, "src/locked.go")
				h.r.Git("update-ref", "refs/heads/main", old) // as before the commit
				return old + " " + sha + " refs/heads/main\n"
			}},
		{name: "reference-transaction lets a tag through", args: []string{"reference-transaction", "prepared"}, wantExit: 0,
			prepare: func(t *testing.T, h *hookRig) string {
				return zeros + " " + h.r.Git("rev-parse", "HEAD") + " refs/tags/v1\n"
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var answers [2]hookResult
			var dirs [2]string
			for i, argv := range [][]string{append([]string{hookBinary(t)}, tt.args...), append([]string{lockgateBinary(t), "hook"}, tt.args...)} {
				h := newHookRig(t, "")
				dirs[i] = h.r.Dir
				stdin := tt.prepare(t, h)
				answers[i] = h.run(t, stdin, tt.env, argv...)
				if got := h.handedOver(t); got != "" {
					t.Fatalf("%s handed over: %q", filepath.Base(argv[0]), got)
				}
			}
			if answers[0].exit != tt.wantExit {
				t.Errorf("exit %d, want %d (stderr %q)", answers[0].exit, tt.wantExit, answers[0].stderr)
			}
			sameAnswer(t, tt.name, answers[0], answers[1], dirs[0], dirs[1])
		})
	}
}

// TestHookBinaryHandsOver: what the hook binary does not link it hands to
// lockgate, with the same arguments and stdin — a clone on the git store,
// the post-* and server hooks, and flags (help, a mistyped one), which git
// never gives a hook — and the answer is lockgate's. Without a
// lockgate to hand to, the hook fails closed.
func TestHookBinaryHandsOver(t *testing.T) {
	t.Parallel()
	zeros := strings.Repeat("0", 40)
	tests := []struct {
		name, store string
		args        []string
		prepare     func(t *testing.T, h *hookRig) string
		wantExit    int
	}{
		{name: "pre-commit on the git store", store: "git", args: []string{"pre-commit"}, wantExit: 1,
			prepare: func(t *testing.T, h *hookRig) string {
				h.r.Write("src/locked.go", "package src // changed\n")
				h.r.Git("add", "src/locked.go")
				return ""
			}},
		{name: "pre-push on the git store", store: "git", args: []string{"pre-push", "origin", "remote"}, wantExit: 1,
			prepare: func(t *testing.T, h *hookRig) string {
				sha := h.commitNoHooks(t, "src/locked.go")
				return "refs/heads/main " + sha + " refs/heads/main " + zeros + "\n"
			}},
		{name: "pre-push of a commit whose trailers name another worker", args: []string{"pre-push", "origin", "remote"}, wantExit: 0,
			prepare: func(t *testing.T, h *hookRig) string {
				// Only that worker's signature could vouch for it: the
				// check of signatures is lockgate's.
				h.r.Write("src/free.go", "package src // bob's\n")
				h.r.Git("add", "src/free.go")
				h.r.Git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "change free.go\n\nLockgate-Worker: bob\nLockgate-Worker-Type: human\nLockgate-Session: bob")
				return "refs/heads/main " + h.r.Git("rev-parse", "HEAD") + " refs/heads/main " + zeros + "\n"
			}},
		{name: "post-merge", args: []string{"post-merge", "0"}, wantExit: 0,
			prepare: func(*testing.T, *hookRig) string { return "" }},
		{name: "help", args: []string{"pre-commit", "--help"}, wantExit: 0,
			prepare: func(*testing.T, *hookRig) string { return "" }},
		{name: "a mistyped flag", args: []string{"pre-push", "--bogus"}, wantExit: 2,
			prepare: func(*testing.T, *hookRig) string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var answers [2]hookResult
			var dirs [2]string
			for i, argv := range [][]string{append([]string{hookBinary(t)}, tt.args...), append([]string{lockgateBinary(t), "hook"}, tt.args...)} {
				h := newHookRig(t, tt.store)
				dirs[i] = h.r.Dir
				stdin := tt.prepare(t, h)
				answers[i] = h.run(t, stdin, nil, argv...)
				want := ""
				if i == 0 {
					want = "hook " + strings.Join(tt.args, " ") + "\n"
				}
				if got := h.handedOver(t); got != want {
					t.Fatalf("%s: handed over %q, want %q", filepath.Base(argv[0]), got, want)
				}
			}
			if answers[0].exit != tt.wantExit {
				t.Errorf("exit %d, want %d (stderr %q)", answers[0].exit, tt.wantExit, answers[0].stderr)
			}
			sameAnswer(t, tt.name, answers[0], answers[1], dirs[0], dirs[1])
		})
	}

	t.Run("no lockgate to hand over to", func(t *testing.T) {
		t.Parallel()
		h := newHookRig(t, "git")
		h.r.Write("src/free.go", "package src // changed\n")
		h.r.Git("add", "src/free.go")
		alone := filepath.Join(t.TempDir(), "lockgate-hook")
		data, err := os.ReadFile(hookBinary(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(alone, data, 0o755); err != nil {
			t.Fatal(err)
		}
		git, err := exec.LookPath("git")
		if err != nil {
			t.Fatal(err)
		}
		env := []string{"LOCKGATE_FULL_BIN=", "PATH=" + filepath.Dir(git)}
		res := h.run(t, "", env, alone, "pre-commit")
		if res.exit != 3 || !strings.Contains(res.stderr, "needs lockgate") {
			t.Fatalf("exit %d, stderr %q: want exit 3 and a lockgate to install", res.exit, res.stderr)
		}
	})
}

// TestShimsRunTheHookBinary: the shims `lockgate install` writes run the
// lockgate-hook next to lockgate for the hooks of a commit — a recording
// lockgate-hook there is asked, and refuses as lockgate would — and a
// shim of an earlier version, which runs `lockgate hook`, keeps refusing
// what it refused.
func TestShimsRunTheHookBinary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "lockgate")
	data, err := os.ReadFile(lockgateBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "asked.log")
	recorder := "#!/bin/sh\nprintf '%s %s\\n' \"$1\" \"$LOCKGATE_FULL_BIN\" >> " + log + "\nexec " + hookBinary(t) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "lockgate-hook"), []byte(recorder), 0o755); err != nil {
		t.Fatal(err)
	}
	r := gittest.New(t)
	r.Write("a.go", "package a\n")
	r.Write("b.go", "package b\n")
	r.Commit("init")
	as := func(worker string, args ...string) (string, error) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir, cmd.Env = r.Dir, append(append([]string(nil), r.Env...), "LOCKGATE_WORKER="+worker)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := as("bob", bin, "init"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if out, err := as("bob", bin, "lock", "acquire", "a.go"); err != nil {
		t.Fatalf("lock: %v\n%s", err, out)
	}

	r.Write("b.go", "package b // alice\n")
	r.Git("add", "b.go")
	if out, err := as("alice", "git", "commit", "-q", "-m", "change b"); err != nil {
		t.Fatalf("a free file: %v\n%s", err, out)
	}
	r.Write("a.go", "package a // alice\n")
	r.Git("add", "a.go")
	out, err := as("alice", "git", "commit", "-q", "-m", "change a")
	if err == nil || !strings.Contains(out, "a.go: locked: locked by bob") {
		t.Fatalf("a commit of bob's file: %v\n%s", err, out)
	}
	// --no-verify skips pre-commit: the reference-transaction hook judges.
	out, err = as("alice", "git", "commit", "-q", "--no-verify", "-m", "change a")
	if err == nil || !strings.Contains(out, "a.go: locked: locked by bob") {
		t.Fatalf("a --no-verify commit of bob's file: %v\n%s", err, out)
	}
	asked, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the shims never ran lockgate-hook: %v", err)
	}
	for _, want := range []string{"pre-commit " + bin, "commit-msg " + bin, "reference-transaction " + bin} {
		if !strings.Contains(string(asked), want+"\n") {
			t.Errorf("lockgate-hook was not asked %q; it was asked:\n%s", want, asked)
		}
	}

	// A shim as an earlier version wrote it: lockgate hook, no hook binary.
	hooksDir := strings.TrimSpace(r.Git("rev-parse", "--git-path", "hooks"))
	if !filepath.IsAbs(hooksDir) {
		hooksDir = filepath.Join(r.Dir, hooksDir)
	}
	v1 := "#!/bin/sh\n# lockgate-shim v1: installed by `lockgate install`; `lockgate uninstall` removes it and restores any previous hook.\n" +
		"lockgate=${LOCKGATE_BIN:-'" + bin + "'}\nexec \"$lockgate\" hook pre-commit \"$@\"\n"
	if err := os.WriteFile(filepath.Join(hooksDir, "pre-commit"), []byte(v1), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	out, err = as("alice", "git", "commit", "-q", "-m", "change a")
	if err == nil || !strings.Contains(out, "a.go: locked: locked by bob") {
		t.Fatalf("a commit of bob's file through a v1 shim: %v\n%s", err, out)
	}
	if asked, _ := os.ReadFile(log); strings.Contains(string(asked), "pre-commit") {
		t.Errorf("the v1 pre-commit shim ran lockgate-hook: %s", asked)
	}
}
