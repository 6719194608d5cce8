//go:build agents

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/agenttest"
	"github.com/lockgate/lockgate/internal/fakemodel"
	"github.com/lockgate/lockgate/internal/gittest"
)

// agentName is lockgate's name of each harness the rig drives.
var agentName = map[fakemodel.Harness]string{
	fakemodel.Claude: "claude-code", fakemodel.Codex: "codex", fakemodel.Gemini: "gemini",
	fakemodel.OpenCode: "opencode", fakemodel.Copilot: "copilot",
}

// realCase is a tool call the scripted model makes on the held file.
type realCase struct {
	name  string
	calls func(h fakemodel.Harness, path string) []fakemodel.Call
}

var realCases = []realCase{
	{"write", func(h fakemodel.Harness, p string) []fakemodel.Call {
		if h == fakemodel.Codex {
			return fakemodel.ApplyPatch(fakemodel.UpdateFilePatch(p, "", "two", "TWO"))
		}
		// Claude Code and opencode write an existing file only once
		// the session has read it (before any hook runs), and Copilot's
		// create makes new files only: a write replaces the held file
		// after a read, or creates it for Copilot.
		calls := fakemodel.WriteFile(h, p, "rewritten by the model\n")
		if h == fakemodel.Claude || h == fakemodel.OpenCode {
			calls = append(fakemodel.ReadFile(h, p), calls...)
		}
		return calls
	}},
	{"edit", func(h fakemodel.Harness, p string) []fakemodel.Call {
		if h == fakemodel.Codex {
			return fakemodel.ApplyPatch(fakemodel.UpdateFilePatch(p, "src/moved.txt", "one", "ONE"))
		}
		return fakemodel.EditFile(h, p, "two", "TWO")
	}},
	{"shell append", func(h fakemodel.Harness, p string) []fakemodel.Call {
		return fakemodel.ShellAppend(h, p, "appended by the model")
	}},
}

// TestRealHarnesses runs each real coding harness headless against the
// scripted model, in a repository set up only by `lockgate init --agent
// NAME`: while bob holds src/held.txt, the model's write, edit and shell
// append leave it unchanged and the model is told that bob holds it
// (which also proves the harness asked lockgate); once bob releases it,
// the same run changes it. `make test-agents` runs it
// (scripts/test-agents-deps.sh installs the harnesses).
func TestRealHarnesses(t *testing.T) {
	t.Parallel()
	bin := filepath.Dir(lockgateBinary(t))
	// Two harnesses at a time: each is a node process of a few hundred MB.
	slots := make(chan struct{}, 2)
	var mu sync.Mutex
	table := map[string][3]bool{}
	for _, h := range agenttest.Harnesses {
		agenttest.Require(t, h)
		t.Run(string(h), func(t *testing.T) {
			t.Parallel()
			for _, c := range realCases {
				t.Run(c.name, func(t *testing.T) {
					slots <- struct{}{}
					defer func() { <-slots }()
					wired, told, allowed := realRun(t, bin, h, c)
					mu.Lock()
					table[string(h)+" "+c.name] = [3]bool{wired, told, allowed}
					mu.Unlock()
				})
			}
		})
	}
	t.Cleanup(func() {
		for k, v := range table {
			t.Logf("%-24s guard wired %v, denial seen by the model %v, allowed after release %v", k, v[0], v[1], v[2])
		}
	})
}

// gitEnv is the repository's git settings of env, without its HOME: the
// harness keeps the home the rig gave it (its logins and settings).
func gitEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_") {
			out = append(out, kv)
		}
	}
	return out
}

// realRun runs one case, denied then allowed, and reports what it saw.
func realRun(t *testing.T, bin string, h fakemodel.Harness, c realCase) (wired, told, allowed bool) {
	r := gittest.New(t)
	r.Write("src/held.txt", "one\ntwo\n")
	r.Commit("init")
	path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	lockgate := func(worker string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "lockgate"), args...)
		cmd.Dir, cmd.Env = r.Dir, append(append([]string(nil), r.Env...), path, "LOCKGATE_WORKER="+worker)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("lockgate %v: %v\n%s", args, err, out)
		}
	}
	lockgate("root", "init", "--agent", agentName[h])
	lockgate("bob", "lock", "acquire", "src/held.txt", "--reason", "schema change")
	held := filepath.Join(r.Dir, "src", "held.txt")
	if h == fakemodel.Copilot && c.name == "write" {
		// create makes new files only: bob holds a file not yet written.
		if err := os.Remove(held); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadFile(held)
	run := func() (*fakemodel.Server, agenttest.Result) {
		t.Helper()
		target := "src/held.txt"
		if h != fakemodel.Codex {
			target = held // the write tools take absolute paths
		}
		calls := c.calls(h, target)
		srv := fakemodel.Start(t, fakemodel.Script{Calls: calls})
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		res, err := agenttest.Options{Harness: h, RepoDir: r.Dir, ModelURL: srv.URL,
			Prompt: "Make the change the task needs.",
			Env:    append(gitEnv(r.Env), path, "LOCKGATE_WORKER=agent-1")}.Run(ctx)
		if err != nil {
			t.Fatalf("%v\nmodel requests:\n%s", err, srv.Describe())
		}
		if srv.CallsMade() != len(calls) {
			t.Fatalf("the model made %d of its %d calls: the harness did not offer the tool\n%s\n%s", srv.CallsMade(), len(calls), res, srv.Describe())
		}
		return srv, res
	}

	srv, res := run()
	after, _ := os.ReadFile(held)
	if string(after) != string(before) {
		t.Errorf("denied: the held file changed to %q\n%s", after, res)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "src", "moved.txt")); err == nil {
		t.Errorf("denied: the held file was moved")
	}
	// The reason reaching the model proves the harness ran the guard:
	// only lockgate's refusal names the holder and the lock's reason.
	told = srv.SawAfterCalls("locked by bob") && srv.SawAfterCalls("schema change")
	wired = told
	if !told {
		t.Errorf("the model was not told why: no request after the call names bob's lock\n%s\nmodel requests:\n%s", res, srv.Describe())
	}

	lockgate("bob", "lock", "release", "src/held.txt")
	_, res = run()
	after, _ = os.ReadFile(held)
	moved, _ := os.ReadFile(filepath.Join(r.Dir, "src", "moved.txt"))
	allowed = string(after) != string(before) || len(moved) > 0
	if !allowed {
		t.Errorf("allowed: the same run left the file as it was\n%s", res)
	}
	if strings.Contains(res.Stdout+res.Stderr, "locked by") {
		t.Errorf("allowed: a refusal after the release\n%s", res)
	}
	return wired, told, allowed
}
