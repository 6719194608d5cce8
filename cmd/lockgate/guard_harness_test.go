package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// harnessCase is one tool call of one harness, as its pre-tool hook
// receives it: the payload (built for the repository at dir), and whether
// the guard must deny it while bob holds src/held.py.
type harnessCase struct {
	name    string
	payload func(dir string) any
	deny    bool
}

// harnessCases are, per harness, payloads in the harness's documented (or
// captured) form: a write and an edit of the held file, a write of a free
// one, a shell command appending to the held file and one writing
// elsewhere, and the harness's patch tool.
var harnessCases = map[string][]harnessCase{
	"claude-code": {
		{"Write of the held file", func(d string) any {
			return claudePayload(d, "Write", map[string]any{"file_path": d + "/src/held.py", "content": "x"})
		}, true},
		{"Edit of a free file", func(d string) any {
			return claudePayload(d, "Edit", map[string]any{"file_path": d + "/src/free.py", "old_string": "a", "new_string": "b"})
		}, false},
		{"Bash appending to the held file", func(d string) any {
			return claudePayload(d, "Bash", map[string]any{"command": "echo x >> src/held.py"})
		}, true},
		{"Bash writing outside the repository", func(d string) any {
			return claudePayload(d, "Bash", map[string]any{"command": "echo x > /tmp/out.txt && ls"})
		}, false},
	},
	"codex": {
		{"apply_patch moving the held file", func(d string) any {
			return codexPayload(d, "apply_patch", "*** Begin Patch\n*** Update File: src/held.py\n*** Move to: src/moved.py\n@@\n-x\n+y\n*** End Patch\n")
		}, true},
		{"apply_patch adding a free file", func(d string) any {
			return codexPayload(d, "apply_patch", "*** Begin Patch\n*** Add File: src/new.py\n+x\n*** End Patch\n")
		}, false},
		{"shell sed -i on the held file", func(d string) any { return codexPayload(d, "Bash", "bash -lc 'sed -i s/x/y/ src/held.py'") }, true},
		{"shell reading", func(d string) any { return codexPayload(d, "Bash", "cat src/held.py") }, false},
	},
	"gemini": {
		{"write_file of the held file, relative", func(d string) any {
			return map[string]any{"hook_event_name": "BeforeTool", "cwd": d, "tool_name": "write_file", "tool_input": map[string]any{"file_path": "src/held.py", "content": "x"}}
		}, true},
		{"replace in a free file", func(d string) any {
			return map[string]any{"hook_event_name": "BeforeTool", "cwd": d, "tool_name": "replace", "tool_input": map[string]any{"file_path": d + "/src/free.py", "old_string": "a", "new_string": "b"}}
		}, false},
		{"run_shell_command in a directory", func(d string) any {
			return map[string]any{"hook_event_name": "BeforeTool", "cwd": d, "tool_name": "run_shell_command", "tool_input": map[string]any{"command": "echo x | tee -a held.py", "dir_path": "src"}}
		}, true},
	},
	"opencode": {
		{"write of the held file", func(d string) any {
			return map[string]any{"tool": "write", "args": map[string]any{"filePath": d + "/src/held.py", "content": "x"}}
		}, true},
		{"edit of a free file", func(d string) any {
			return map[string]any{"tool": "edit", "args": map[string]any{"filePath": d + "/src/free.py", "oldString": "a", "newString": "b"}}
		}, false},
		{"bash moving the held file", func(d string) any {
			return map[string]any{"tool": "bash", "args": map[string]any{"command": "mv src/held.py src/other.py", "description": "move"}}
		}, true},
	},
	"cursor": {
		{"preToolUse Write of the held file", func(d string) any {
			return map[string]any{"hook_event_name": "preToolUse", "workspace_roots": []any{d}, "cwd": "", "tool_name": "Write", "tool_input": map[string]any{"file_path": d + "/src/held.py", "content": "x"}}
		}, true},
		{"preToolUse Read", func(d string) any {
			return map[string]any{"hook_event_name": "preToolUse", "workspace_roots": []any{d}, "tool_name": "Read", "tool_input": map[string]any{"file_path": d + "/src/held.py"}}
		}, false},
		{"beforeShellExecution rm of the held file", func(d string) any {
			return map[string]any{"hook_event_name": "beforeShellExecution", "cwd": d, "command": "rm -f src/held.py"}
		}, true},
		{"a write without a tool name", func(d string) any {
			return map[string]any{"hook_event_name": "preToolUse", "workspace_roots": []any{d}, "tool_input": map[string]any{"file_path": d + "/src/held.py", "contents": "x"}}
		}, true},
	},
	"copilot": {
		{"create of the held file", func(d string) any {
			return map[string]any{"cwd": d, "toolName": "create", "toolArgs": map[string]any{"path": d + "/src/held.py", "file_text": "x"}}
		}, true},
		{"edit with args as JSON text", func(d string) any {
			return map[string]any{"cwd": d, "toolName": "edit", "toolArgs": `{"path":"` + d + `/src/free.py","old_str":"a","new_str":"b"}`}
		}, false},
		{"bash appending to the held file", func(d string) any {
			return map[string]any{"cwd": d, "toolName": "bash", "toolArgs": map[string]any{"command": "printf x >> src/held.py"}}
		}, true},
	},
	"cline": {
		{"write_to_file of the held file", func(d string) any {
			return clinePayload(d, "write_to_file", map[string]any{"path": "src/held.py", "content": "x"})
		}, true},
		{"editor on a free file", func(d string) any {
			return clinePayload(d, "editor", map[string]any{"path": d + "/src/free.py", "old_text": "a", "new_text": "b"})
		}, false},
		{"run_commands touching the held file", func(d string) any {
			return clinePayload(d, "run_commands", map[string]any{"commands": `["npm test","truncate -s 0 src/held.py"]`})
		}, true},
	},
	"goose": {
		{"developer__write of the held file", func(d string) any {
			return map[string]any{"event": "PreToolUse", "working_dir": d, "tool_name": "developer__write", "tool_input": map[string]any{"path": d + "/src/held.py", "content": "x"}}
		}, true},
		{"developer__edit of a free file", func(d string) any {
			return map[string]any{"event": "PreToolUse", "working_dir": d, "tool_name": "developer__edit", "tool_input": map[string]any{"path": d + "/src/free.py", "before": "a", "after": "b"}}
		}, false},
		{"developer__shell writing the held file", func(d string) any {
			return map[string]any{"event": "PreToolUse", "working_dir": d, "tool_name": "developer__shell", "tool_input": map[string]any{"command": "cat > src/held.py <<EOF\nx\nEOF"}}
		}, true},
	},
}

func claudePayload(dir, tool string, input map[string]any) any {
	return map[string]any{"session_id": "s", "cwd": dir, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input}
}

func codexPayload(dir, tool, command string) any {
	return map[string]any{"session_id": "s", "turn_id": "t", "cwd": dir, "hook_event_name": "PreToolUse", "model": "m",
		"tool_name": tool, "tool_input": map[string]any{"command": command}, "tool_use_id": "c"}
}

func clinePayload(dir, tool string, params map[string]any) any {
	return map[string]any{"clineVersion": "3.82.0", "hookName": "PreToolUse", "workspaceRoots": []any{dir},
		"preToolUse": map[string]any{"toolName": tool, "parameters": params}}
}

// verdict is how a harness reads a hook's answer: denied, and the text
// the model is told.
type verdict struct {
	denied bool
	reason string
}

// readVerdict reads the hook's answer in harness's convention. It fails
// the test on an answer the harness would not understand.
func readVerdict(t *testing.T, harness string, code int, stdout, stderr string) verdict {
	t.Helper()
	js := func() map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(stdout), &m); err != nil {
			t.Fatalf("%s: stdout is not JSON (%v): %q; stderr %q", harness, err, stdout, stderr)
		}
		return m
	}
	switch harness {
	case "cursor":
		m := js()
		if code != 0 {
			t.Fatalf("cursor: exit %d", code)
		}
		switch m["permission"] {
		case "allow":
			return verdict{}
		case "deny":
			um, am := m["user_message"].(string), m["agent_message"].(string)
			if um != am {
				t.Fatalf("cursor: user_message and agent_message differ")
			}
			return verdict{true, um}
		}
		t.Fatalf("cursor: permission %v (failClosed blocks anything but allow)", m["permission"])
	case "copilot":
		if stdout == "" && code == 0 {
			return verdict{}
		}
		m := js()
		if m["permissionDecision"] != "deny" || code != 0 {
			t.Fatalf("copilot: %v, exit %d", m, code)
		}
		return verdict{true, m["permissionDecisionReason"].(string)}
	case "cline":
		m := js()
		if m["cancel"] == true {
			return verdict{true, m["errorMessage"].(string)}
		}
		return verdict{}
	case "gemini":
		if code == 0 && stdout == "" {
			return verdict{}
		}
		if code == 2 && stdout == "" && strings.TrimSpace(stderr) != "" {
			return verdict{true, stderr} // Gemini reads stderr when stdout is empty
		}
		m := js()
		if code != 2 || m["decision"] != "deny" {
			t.Fatalf("gemini: %v exit %d", m, code)
		}
		return verdict{true, m["reason"].(string)}
	case "opencode":
		if code == 0 {
			return verdict{}
		}
		if code != 3 {
			t.Fatalf("opencode driver: exit %d: %s", code, stderr)
		}
		return verdict{true, stdout}
	}
	// claude-code, codex, goose: exit 2 with the reason on stderr.
	switch code {
	case 0:
		return verdict{}
	case 2:
		if strings.TrimSpace(stderr) == "" {
			t.Fatalf("%s: exit 2 without a reason (Codex lets that through)", harness)
		}
		return verdict{true, stderr}
	}
	t.Fatalf("%s: exit %d lets the tool call go ahead: %s", harness, code, stderr)
	return verdict{}
}

// hookCommand runs the hook lockgate agent setup wrote for harness in
// dir, with payload on stdin, as the harness runs it.
func hookCommand(t *testing.T, harness, dir string) *exec.Cmd {
	t.Helper()
	read := func(file string) map[string]any {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	last := func(m map[string]any, event string) map[string]any {
		list := m["hooks"].(map[string]any)[event].([]any)
		return list[len(list)-1].(map[string]any)
	}
	group := func(file, event string) string {
		h := last(read(file), event)["hooks"].([]any)
		return h[0].(map[string]any)["command"].(string)
	}
	var command string
	switch harness {
	case "claude-code":
		command = group(".claude/settings.json", "PreToolUse")
	case "codex":
		command = group(".codex/hooks.json", "PreToolUse")
	case "gemini":
		command = group(".gemini/settings.json", "BeforeTool")
	case "goose":
		command = group(".agents/plugins/lockgate/hooks/hooks.json", "PreToolUse")
	case "cursor":
		m := read(".cursor/hooks.json")
		if last(m, "preToolUse")["failClosed"] != true {
			t.Fatal("cursor: the hook does not fail closed")
		}
		command = last(m, "preToolUse")["command"].(string)
	case "copilot":
		command = last(read(".github/hooks/lockgate.json"), "preToolUse")["bash"].(string)
	case "cline":
		return exec.Command(filepath.Join(dir, ".clinerules", "hooks", "PreToolUse"))
	case "opencode":
		// The plugin itself, loaded by node as opencode loads it: exit 3
		// and the error's message on stdout when it throws.
		driver := `const { Lockgate } = await import(process.argv[1]);
const call = JSON.parse(require("fs").readFileSync(0, "utf8"));
const hooks = await Lockgate({ directory: process.argv[2] });
try { await hooks["tool.execute.before"]({ tool: call.tool, sessionID: "s", callID: "c" }, { args: call.args }); }
catch (e) { process.stdout.write(e.message); process.exit(3); }`
		return exec.Command("node", "--input-type=module", "-e", strings.Replace(driver, `require("fs")`, `(await import("node:fs"))`, 1),
			filepath.Join(dir, ".opencode", "plugin", "lockgate.js"), dir)
	default:
		t.Fatalf("no hook for %s", harness)
	}
	return exec.Command("sh", "-c", command)
}

// TestGuardHarnesses sets each harness up with `lockgate init --agent`,
// then runs the hook command it wrote, as the harness runs it, on that
// harness's payloads: edits of what bob holds are denied in the harness's
// convention with bob named, the rest allowed; and with no lockgate to
// run, the hook still denies.
func TestGuardHarnesses(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is needed to load the opencode plugin: install Node.js")
	}
	bin := filepath.Dir(lockgateBinary(t))
	for harness, cases := range harnessCases {
		t.Run(harness, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Write("src/held.py", "x\n")
			r.Write("src/free.py", "a\n")
			r.Commit("init")
			path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
			env := append(append([]string(nil), r.Env...), path)
			run := func(stdin string, env []string, args ...string) (int, string, string) {
				t.Helper()
				cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
				cmd.Dir, cmd.Env, cmd.Stdin = r.Dir, env, strings.NewReader(stdin)
				return runCmd(t, cmd)
			}
			if code, _, errs := run("", env, "lockgate", "init", "--agent", harness); code != 0 {
				t.Fatalf("init --agent %s: %s", harness, errs)
			}
			if code, _, errs := run("", append(env, "LOCKGATE_WORKER=bob"), "lockgate", "lock", "acquire", "src/held.py", "--reason", "schema change"); code != 0 {
				t.Fatal(errs)
			}
			agentEnv := append(env, "LOCKGATE_WORKER=agent-1")
			for _, c := range cases {
				payload, err := json.Marshal(c.payload(r.Dir))
				if err != nil {
					t.Fatal(err)
				}
				cmd := hookCommand(t, harness, r.Dir)
				cmd.Dir, cmd.Env, cmd.Stdin = r.Dir, agentEnv, bytes.NewReader(payload)
				code, stdout, stderr := runCmd(t, cmd)
				v := readVerdict(t, harness, code, stdout, stderr)
				if v.denied != c.deny {
					t.Errorf("%s: denied %v, want %v\nstdout %s\nstderr %s", c.name, v.denied, c.deny, stdout, stderr)
					continue
				}
				if c.deny && (!strings.Contains(v.reason, "bob") || !strings.Contains(v.reason, "src/held.py") || !strings.Contains(v.reason, "lockgate lock")) {
					t.Errorf("%s: the reason does not name the holder, the file and the command that resolves it: %q", c.name, v.reason)
				}
				if strings.Contains(v.reason, "LOCKGATE_SKIP") {
					t.Errorf("%s: the guard shows the agent how to bypass it: %q", c.name, v.reason)
				}
			}
			// No lockgate to run: the hook still denies, saying why.
			noLockgate := append(append([]string(nil), r.Env...), "PATH=/usr/bin:/bin", "LOCKGATE_WORKER=agent-1")
			payload, _ := json.Marshal(cases[1].payload(r.Dir)) // one the guard allows
			cmd := hookCommand(t, harness, r.Dir)
			cmd.Dir, cmd.Env, cmd.Stdin = r.Dir, noLockgate, bytes.NewReader(payload)
			if harness == "opencode" {
				cmd.Env = append(cmd.Env, "PATH=/usr/bin:/bin:"+filepath.Dir(nodePath(t)))
			}
			code, stdout, stderr := runCmd(t, cmd)
			if v := readVerdict(t, harness, code, stdout, stderr); !v.denied || !strings.Contains(v.reason+stderr, "lockgate") {
				t.Errorf("without lockgate: %+v (exit %d, stdout %q, stderr %q)", v, code, stdout, stderr)
			}
		})
	}
}

func nodePath(t *testing.T) string {
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runCmd runs cmd and returns its exit code, stdout and stderr.
func runCmd(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("run %v: %v", cmd.Args, err)
	return -1, "", ""
}

// TestGuardResolvesAsTheHarness: what a payload names is found where the
// harness means it, not where the hook happens to run: a patch file
// outside the worktree given to `git apply`, Cline's paths relative to its
// workspace root with the hook started elsewhere.
func TestGuardResolvesAsTheHarness(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("src/held.py", "x\n")
	r.Commit("init")
	bob := &cliRepo{t: t, repo: r}
	if code, out := bob.run("bob", "lock", "acquire", "src/held.py"); code != 0 {
		t.Fatal(out)
	}
	patch := filepath.Join(t.TempDir(), "fix.patch")
	if err := os.WriteFile(patch, []byte("--- a/src/held.py\n+++ b/src/held.py\n@@ -1 +1 @@\n-x\n+y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name, harness, dir string
		payload            any
	}{
		{"git apply of a patch in /tmp", "claude-code", r.Dir, claudePayload(r.Dir, "Bash", map[string]any{"command": "git apply " + patch})},
		{"git apply from a subdirectory", "claude-code", r.Dir, claudePayload(filepath.Join(r.Dir, "src"), "Bash", map[string]any{"command": "cd .. && git apply " + patch})},
		{"Cline, the hook started outside the workspace", "cline", elsewhere, clinePayload(r.Dir, "write_to_file", map[string]any{"path": "src/held.py", "content": "y"})},
		{"Codex's apply_patch as a shell command", "codex", r.Dir, codexPayload(r.Dir, "Bash", "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/held.py\n@@\n-x\n+y\n*** End Patch\nEOF\n")},
	} {
		payload, err := json.Marshal(tc.payload)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(lockgateBinary(t), "guard", tc.harness)
		cmd.Dir, cmd.Env, cmd.Stdin = tc.dir, append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=agent-1"), bytes.NewReader(payload)
		code, stdout, stderr := runCmd(t, cmd)
		v := readVerdict(t, tc.harness, code, stdout, stderr)
		if !v.denied || !strings.Contains(v.reason, "locked by bob") {
			t.Errorf("%s: %+v (exit %d, %s%s)", tc.name, v, code, stdout, stderr)
		}
	}
}
