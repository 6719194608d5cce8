package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// guard runs `lockgate guard claude-code` with payload on stdin, as Claude
// Code does, and returns its exit code and stderr.
func guard(t *testing.T, r *gittest.Repo, env []string, payload string) (int, string) {
	t.Helper()
	return runIn(t, r, payload, env, "guard", "claude-code")
}

func payload(t *testing.T, tool string, input map[string]any, cwd string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"session_id": "s-1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
		"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGuardClaudeCode(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nscope:\n  user_owned: [DESIGN.md]\n")
	r.Write("src/api/users.py", "x\n")
	r.Commit("init")
	bob := &cliRepo{t: t, repo: r}
	if code, out := bob.run("bob", "lock", "acquire", "src/api/users.py", "--reason", "refactor"); code != 0 {
		t.Fatalf("acquire: %s", out)
	}
	agent := []string{"LOCKGATE_WORKER=agent-1"} // worker type unset: the guard assumes an agent
	abs := func(p string) string { return filepath.Join(r.Dir, p) }

	cases := []struct {
		name    string
		payload string
		code    int
		stderr  string // a substring of stderr; "" means stderr is empty
	}{
		{name: "Edit of a free file", payload: payload(t, "Edit", map[string]any{"file_path": abs("src/free.py"), "old_string": "a", "new_string": "b"}, r.Dir)},
		{name: "Write of a new file", payload: payload(t, "Write", map[string]any{"file_path": abs("src/new/mod.py"), "content": "x"}, r.Dir)},
		{name: "MultiEdit of a free file", payload: payload(t, "MultiEdit", map[string]any{"file_path": abs("src/free.py"), "edits": []any{}}, r.Dir)},
		{name: "NotebookEdit by notebook_path", payload: payload(t, "NotebookEdit", map[string]any{"notebook_path": abs("nb/a.ipynb"), "new_source": "x"}, r.Dir)},
		{name: "relative path against cwd", payload: payload(t, "Edit", map[string]any{"file_path": "free.py"}, abs("src"))},
		{name: "not an edit tool", payload: payload(t, "Read", map[string]any{"file_path": "/etc/passwd"}, r.Dir)},
		{name: "Bash is not guarded", payload: payload(t, "Bash", map[string]any{"command": "ls"}, r.Dir)},

		{name: "Edit of a file locked by another", payload: payload(t, "Edit", map[string]any{"file_path": abs("src/api/users.py")}, r.Dir),
			code: 2, stderr: "src/api/users.py: locked: locked by bob"},
		{name: "Write of a locked file", payload: payload(t, "Write", map[string]any{"file_path": abs("src/api/users.py")}, r.Dir), code: 2, stderr: "refactor"},
		{name: "MultiEdit of a locked file", payload: payload(t, "MultiEdit", map[string]any{"file_path": abs("src/api/users.py")}, r.Dir), code: 2, stderr: "lockgate lock release"},
		{name: "NotebookEdit of a locked path", payload: payload(t, "NotebookEdit", map[string]any{"notebook_path": abs("src/api/users.py")}, r.Dir), code: 2, stderr: "locked"},
		{name: "user-owned file", payload: payload(t, "Edit", map[string]any{"file_path": abs("DESIGN.md")}, r.Dir), code: 2, stderr: "DESIGN.md: user_owned"},
		{name: "dot-dot into a locked file", payload: payload(t, "Edit", map[string]any{"file_path": abs("src/x/../api/users.py")}, r.Dir), code: 2, stderr: "src/api/users.py: locked"},
		{name: "dot-dot out of the repo", payload: payload(t, "Edit", map[string]any{"file_path": abs("../elsewhere.py")}, r.Dir), code: 2, stderr: "outside the worktree"},
		{name: "absolute outside the repo", payload: payload(t, "Write", map[string]any{"file_path": "/tmp/lockgate-guard-test.py"}, r.Dir), code: 2, stderr: "outside the worktree"},
		{name: "inside .git", payload: payload(t, "Write", map[string]any{"file_path": abs(".git/hooks/pre-commit")}, r.Dir), code: 2, stderr: "git directory"},
		{name: "missing file_path", payload: payload(t, "Edit", map[string]any{"old_string": "a"}, r.Dir), code: 2, stderr: "no tool_input.file_path"},
		{name: "empty file_path", payload: payload(t, "Write", map[string]any{"file_path": ""}, r.Dir), code: 2, stderr: "no tool_input.file_path"},
		{name: "no tool_input", payload: `{"hook_event_name":"PreToolUse","tool_name":"Edit"}`, code: 2, stderr: "no tool_input.file_path"},
		{name: "file_path not a string", payload: `{"tool_name":"Edit","tool_input":{"file_path":7}}`, code: 2, stderr: "not Claude Code's PreToolUse JSON"},
		{name: "garbage", payload: "rm -rf /\n", code: 2, stderr: "not Claude Code's PreToolUse JSON"},
		{name: "empty stdin", payload: "", code: 2, stderr: "empty hook payload"},
		{name: "JSON array", payload: `[1,2]`, code: 2, stderr: "not Claude Code's PreToolUse JSON"},
		{name: "null", payload: `null`, code: 2, stderr: "no tool_name"},
		{name: "two objects", payload: `{"tool_name":"Edit","tool_input":{"file_path":"a"}} {"x":1}`, code: 2, stderr: "trailing data"},
		{name: "another event", payload: `{"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"a"}}`, code: 2, stderr: "answers PreToolUse"},
		{name: "relative cwd", payload: payload(t, "Edit", map[string]any{"file_path": "a.py"}, "src"), code: 2, stderr: "not absolute"},
	}
	for _, tc := range cases {
		code, stderr := guard(t, r, agent, tc.payload)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr:\n%s", tc.name, code, tc.code, stderr)
			continue
		}
		if tc.stderr == "" && stderr != "" || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%s: stderr %q, want it to contain %q", tc.name, stderr, tc.stderr)
		}
		if strings.Contains(stderr, "LOCKGATE_SKIP") {
			t.Errorf("%s: the guard shows agents how to bypass it:\n%s", tc.name, stderr)
		}
	}

	// The holder edits its own file; a human may edit user-owned files.
	if code, stderr := guard(t, r, []string{"LOCKGATE_WORKER=bob"}, payload(t, "Edit", map[string]any{"file_path": abs("src/api/users.py")}, r.Dir)); code != 0 {
		t.Errorf("holder blocked: %d %s", code, stderr)
	}
	if code, stderr := guard(t, r, []string{"LOCKGATE_WORKER=ann", "LOCKGATE_WORKER_TYPE=human"}, payload(t, "Edit", map[string]any{"file_path": abs("DESIGN.md")}, r.Dir)); code != 0 {
		t.Errorf("human blocked on a user-owned file: %d %s", code, stderr)
	}

	// A pause by someone else stops every edit.
	if code, out := bob.run("lead", "pause", "FEAT-1", "--reason", "contract bump"); code != 0 {
		t.Fatalf("pause: %s", out)
	}
	if code, stderr := guard(t, r, agent, payload(t, "Edit", map[string]any{"file_path": abs("src/free.py")}, r.Dir)); code != 2 || !strings.Contains(stderr, "paused by lead") {
		t.Errorf("edit while paused: %d %s", code, stderr)
	}
}

// TestGuardStoreUnavailable: when the store cannot be read the guard
// blocks, with exit 2 — any other code would let Claude Code go ahead.
func TestGuardStoreUnavailable(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	code, stderr := guard(t, r, []string{"LOCKGATE_WORKER=a", "LOCKGATE_STORE=redis://127.0.0.1:1/0"},
		payload(t, "Edit", map[string]any{"file_path": filepath.Join(r.Dir, "a.py")}, r.Dir))
	if code != 2 || !strings.Contains(stderr, "unavailable") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	code, stderr = guard(t, r, []string{"LOCKGATE_WORKER=a", "LOCKGATE_STORE=nosuch"},
		payload(t, "Edit", map[string]any{"file_path": filepath.Join(r.Dir, "a.py")}, r.Dir))
	if code != 2 || !strings.Contains(stderr, "edit blocked") {
		t.Fatalf("bad store: exit %d, stderr %s", code, stderr)
	}
}
