//go:build agents

package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/fakemodel"
	"github.com/lockgate/lockgate/internal/gittest"
)

// TestCapture drives every harness, for real, through the tool calls
// lockgate's hooks must see: writing a new file, editing one, appending to
// one from the shell, and (Codex) apply_patch adding, updating and moving
// files. Each case runs twice against a pre-tool hook written into the
// repository the way the harness reads it: once capturing the hook's input
// and allowing the call (the file must change), once denying it by the
// harness's deny convention (the file must not change, and the deny reason
// must reach the model in its next request).
//
// With LOCKGATE_CAPTURE_OUT=DIR the allowed payloads are written to
// DIR/<harness>-<case>.json (model/pretool/testdata/captured holds the
// last ones).
//
// Run: scripts/test-agents-deps.sh && go test -tags agents ./internal/agenttest/
func TestCapture(t *testing.T) {
	for _, h := range Harnesses {
		t.Run(string(h), func(t *testing.T) {
			t.Parallel()
			Require(t, h)
			for _, c := range captureCases(h) {
				t.Run(c.name, func(t *testing.T) {
					payload := runCase(t, h, c, allow)
					for _, d := range denyModes[h] {
						runCase(t, h, c, d)
					}
					if out := os.Getenv("LOCKGATE_CAPTURE_OUT"); out != "" {
						name := filepath.Join(out, string(h)+"-"+c.name+".json")
						if err := os.WriteFile(name, payload, 0o644); err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// captureCase is one tool call to drive.
type captureCase struct {
	name string
	// tool is the tool name the hook is asked about.
	tool string
	// setup writes the repository's files before the run.
	setup map[string]string
	// calls builds the script from the repository's path.
	calls func(repo string) []fakemodel.Call
	// after is the files' contents when the call ran; a missing key
	// with value "" means the file must not exist.
	after map[string]string
}

func captureCases(h Harness) []captureCase {
	_, write, edit, shell := fakemodel.ToolNames(h)
	// path is the path the model names: absolute (most harnesses require
	// it), relative for Codex's patches as its model writes them.
	path := func(repo, rel string) string {
		if h == Codex {
			return rel
		}
		return filepath.Join(repo, rel)
	}
	cases := []captureCase{
		{
			name: caseName(h, write, "add"),
			tool: write,
			calls: func(repo string) []fakemodel.Call {
				return fakemodel.WriteFile(h, path(repo, "new.txt"), "hello from the model\n")
			},
			after: map[string]string{"new.txt": "hello from the model\n"},
		},
		{
			name:  caseName(h, edit, "update"),
			tool:  edit,
			setup: map[string]string{"edit.txt": "first line\nbefore\n"},
			calls: func(repo string) []fakemodel.Call {
				return fakemodel.EditFile(h, path(repo, "edit.txt"), "before\n", "after\n")
			},
			after: map[string]string{"edit.txt": "first line\nafter\n"},
		},
		{
			name:  caseName(h, shell, ""),
			tool:  shell,
			setup: map[string]string{"f.txt": "start\n"},
			calls: func(repo string) []fakemodel.Call {
				// Relative: the shell runs in the repository.
				return fakemodel.Shell(h, "echo x >> f.txt")
			},
			after: map[string]string{"f.txt": "start\nx\n"},
		},
	}
	if h == Codex {
		cases = append(cases, captureCase{
			name:  "apply_patch",
			tool:  "apply_patch",
			setup: map[string]string{"old.txt": "one\ntwo\n"},
			calls: func(repo string) []fakemodel.Call {
				patch := "*** Begin Patch\n" +
					"*** Add File: added.txt\n+added line\n" +
					"*** Update File: old.txt\n*** Move to: moved/renamed.txt\n@@\n one\n-two\n+TWO\n" +
					"*** End Patch\n"
				return fakemodel.ApplyPatch(patch)
			},
			after: map[string]string{"added.txt": "added line\n", "old.txt": "", "moved/renamed.txt": "one\nTWO\n"},
		})
	}
	return cases
}

// caseName is the captured file's name: the tool's name, and for Codex's
// apply_patch what the patch does.
func caseName(h Harness, tool, patchKind string) string {
	if h == Codex && tool == "apply_patch" {
		return "apply_patch_" + patchKind
	}
	return strings.ToLower(tool)
}

// hookMode is how the hook answers.
type hookMode string

const (
	allow hookMode = "allow"
	// exit2 denies by exiting 2 with the reason on stderr (Claude Code,
	// Codex, Gemini CLI, Copilot CLI).
	exit2 hookMode = "deny-exit2"
	// jsonDeny denies by printing the harness's JSON decision on stdout
	// and exiting 0 (Gemini CLI, Copilot CLI).
	jsonDeny hookMode = "deny-json"
	// throwDeny denies by throwing an Error from the plugin (opencode).
	throwDeny hookMode = "deny-throw"
)

// denyModes are the deny conventions tried on each harness.
var denyModes = map[Harness][]hookMode{
	Claude:   {exit2},
	Codex:    {exit2},
	Gemini:   {exit2, jsonDeny},
	Copilot:  {exit2, jsonDeny},
	OpenCode: {throwDeny},
}

// reasonLost is the deny conventions that block the call but do not pass
// the hook's reason to the model: Copilot CLI's camelCase hooks tell it
// only "Denied by preToolUse hook: hook exited with code 2".
var reasonLost = map[Harness]hookMode{Copilot: exit2}

// runCase runs one case, allowing or denying, and returns the hook's input
// for the case's tool.
func runCase(t *testing.T, h Harness, c captureCase, mode hookMode) []byte {
	t.Helper()
	deny := mode != allow
	repo := gittest.New(t)
	for name, content := range c.setup {
		writeFile(t, filepath.Join(repo.Dir, name), content)
	}
	if len(c.setup) > 0 {
		repo.Git("add", "-A")
		repo.Git("commit", "-q", "-m", "setup")
	}
	capDir := t.TempDir()
	reason := fmt.Sprintf("lockgate-capture: %s of this file is blocked (%s-%s)", c.tool, h, c.name)
	writeHook(t, h, repo.Dir, capDir, mode, reason)

	calls := c.calls(repo.Dir)
	srv := fakemodel.Start(t, fakemodel.Script{Calls: calls})
	home := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Options{Harness: h, RepoDir: repo.Dir, Prompt: "Make the change the task needs.", ModelURL: srv.URL, Home: home}.Run(ctx)
	if err != nil {
		t.Fatalf("%s: %v\nmodel requests:\n%s", mode, err, srv.Describe())
	}
	t.Logf("%s %s (%s): exit %d in %s", h, c.name, mode, res.ExitCode, res.Duration.Round(time.Millisecond))
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s: %s\n%s\nmodel requests:\n%s", mode, fmt.Sprintf(format, args...), res, srv.Describe())
	}
	if srv.CallsMade() != len(calls) {
		fail("the model sent %d of its %d tool calls: the harness did not offer the tool or stopped early", srv.CallsMade(), len(calls))
	}
	payloads := captured(t, capDir)
	var mine []byte
	hookTool := c.tool
	if h == Codex && c.tool == "exec_command" {
		hookTool = "Bash" // Codex tells hooks its shell tool is Bash
	}
	for _, p := range payloads {
		if toolOf(p) == hookTool {
			mine = p
			break
		}
	}
	if mine == nil {
		var tools []string
		for _, p := range payloads {
			tools = append(tools, toolOf(p))
		}
		fail("the hook was not asked about %s (it saw %d calls: %v)", hookTool, len(payloads), tools)
	}
	for name, want := range c.after {
		got, err := os.ReadFile(filepath.Join(repo.Dir, name))
		before, had := c.setup[name]
		switch {
		case !deny && want == "" && err == nil:
			fail("%s still exists after the call", name)
		case !deny && want != "" && string(got) != want:
			fail("%s = %q after the call, want %q (err %v)", name, got, want, err)
		case deny && had && string(got) != before:
			fail("%s = %q after the denied call, want it unchanged %q (err %v)", name, got, before, err)
		case deny && !had && err == nil:
			fail("%s exists after the denied call", name)
		}
	}
	if deny {
		switch reached := srv.SawAfterCalls(reason); {
		case !reached && reasonLost[h] != mode:
			fail("the deny reason %q did not reach the model after the call", reason)
		case reasonLost[h] == mode:
			t.Logf("%s %s: the deny reason reached the model: %v", h, mode, reached)
		}
		t.Logf("%s %s: the model was told: %s", h, mode, toolResult(srv, c.tool))
	}
	return mine
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readTools are the tools the deny hook lets through: a harness reads a
// file before it may edit it.
var readTools = []string{"Read", "read_file", "read", "view"}

// writeHook writes the harness's pre-tool hook configuration into repo: a
// command (a plugin for opencode) that saves its input in capDir, one file
// per call, and allows the call, or denies it with reason.
func writeHook(t *testing.T, h Harness, repo, capDir string, mode hookMode, reason string) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "hook.sh")
	var answer string
	switch mode {
	case exit2:
		answer = "printf '%s\\n' " + fakemodel.ShellQuote(reason) + " >&2\n  exit 2"
	case jsonDeny:
		var v any
		switch h {
		case Gemini:
			v = map[string]any{"decision": "deny", "reason": reason}
		case Copilot:
			v = map[string]any{"permissionDecision": "deny", "permissionDecisionReason": reason}
		default:
			t.Fatalf("no JSON deny for %s", h)
		}
		b, _ := json.Marshal(v)
		answer = "printf '%s\\n' " + fakemodel.ShellQuote(string(b)) + "\n  exit 0"
	}
	denyPart := ""
	if answer != "" {
		denyPart = fmt.Sprintf("if ! grep -qE '\"(tool_name|toolName)\" *: *\"(%s)\"' \"$f\"; then\n  %s\nfi\n",
			strings.Join(readTools, "|"), answer)
	}
	writeFile(t, script, fmt.Sprintf("#!/bin/sh\nf=%s/$(date +%%s%%N)-$$.json\ncat > \"$f\"\n%sexit 0\n", fakemodel.ShellQuote(capDir), denyPart))
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	claudeStyle := func(event string, extra map[string]any) string {
		hook := map[string]any{"type": "command", "command": script}
		for k, v := range extra {
			hook[k] = v
		}
		b, err := json.MarshalIndent(map[string]any{"hooks": map[string]any{
			event: []any{map[string]any{"hooks": []any{hook}}},
		}}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	switch h {
	case Claude:
		writeFile(t, filepath.Join(repo, ".claude", "settings.json"), claudeStyle("PreToolUse", nil))
	case Codex:
		writeFile(t, filepath.Join(repo, ".codex", "hooks.json"), claudeStyle("PreToolUse", nil))
	case Gemini:
		writeFile(t, filepath.Join(repo, ".gemini", "settings.json"), claudeStyle("BeforeTool", map[string]any{"name": "capture"}))
	case Copilot:
		b, err := json.MarshalIndent(map[string]any{"version": 1, "hooks": map[string]any{
			"preToolUse": []any{map[string]any{"type": "command", "bash": script, "timeoutSec": 30}},
		}}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(repo, ".github", "hooks", "capture.json"), string(b)+"\n")
	case OpenCode:
		capJS, _ := json.Marshal(capDir)
		reasonJS, _ := json.Marshal(reason)
		readJS, _ := json.Marshal(readTools)
		js := fmt.Sprintf(`// Captures tool.execute.before's arguments; denies by throwing.
import { writeFileSync } from "node:fs"
import { join } from "node:path"

let n = 0
export const Capture = async () => ({
  "tool.execute.before": async (input, output) => {
    n++
    writeFileSync(join(%s, Date.now() + "-" + process.pid + "-" + n + ".json"), JSON.stringify({ input, output }))
    if (%t && !%s.includes(input.tool)) throw new Error(%s)
  },
})
`, capJS, mode == throwDeny, readJS, reasonJS)
		writeFile(t, filepath.Join(repo, ".opencode", "plugin", "capture.js"), js)
	default:
		t.Fatalf("no hook for %s", h)
	}
}

// captured is the hook inputs saved in dir, oldest first.
func captured(t *testing.T, dir string) [][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bytes.TrimSpace(b))
	}
	return out
}

// toolOf is the tool a hook input is about, in any harness's shape.
func toolOf(payload []byte) string {
	var p struct {
		ToolName  string `json:"tool_name"`
		ToolName2 string `json:"toolName"`
		Input     struct {
			Tool string `json:"tool"`
		} `json:"input"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return ""
	}
	switch {
	case p.ToolName != "":
		return p.ToolName
	case p.ToolName2 != "":
		return p.ToolName2
	}
	return p.Input.Tool
}

// toolResult is the part of the first request after the last scripted
// call that answers it, for the log: where the request mentions the
// denial, or its tail.
func toolResult(srv *fakemodel.Server, tool string) string {
	after := srv.AfterCall(srv.CallsMade() - 1)
	if len(after) == 0 {
		return "(no request after the call)"
	}
	body := string(after[0].Body)
	i := strings.LastIndex(body, "lockgate-capture")
	if i < 0 {
		i = strings.LastIndex(body, "enied")
	}
	if i < 0 {
		i = len(body) - 200
	}
	lo, hi := max(0, i-200), min(len(body), i+200)
	return body[lo:hi]
}
