package agentsetup

import (
	"fmt"
	"strings"
)

// The commands the harnesses run. Each must deny when lockgate cannot be
// started or fails, in the harness's own convention: most harnesses let
// a tool call go ahead when its hook fails (docs/agents.md).

// claudeGuardCommand: Claude Code blocks only on exit 2; `|| exit 2`
// blocks when lockgate cannot be started (exit 127) too.
func claudeGuardCommand(bin string) string {
	return shellBin(bin) + " guard claude-code || exit 2"
}

// exit2Command is for harnesses that block on exit 2 with a reason on
// stderr (Codex and Gemini CLI ignore an exit 2 without one): lockgate's
// own exit 2 carries its reason; any other failure says why.
func exit2Command(bin, harness string) string {
	return fmt.Sprintf(`%s guard %s || { rc=$?; [ "$rc" -eq 2 ] || echo "lockgate: the guard failed (exit $rc): tool call blocked" >&2; exit 2; }`, shellBin(bin), harness)
}

// jsonDenyCommand is for harnesses that read the decision as JSON on
// stdout: lockgate always answers there and exits 0; a lockgate that
// cannot run prints the denial instead.
func jsonDenyCommand(bin, harness, deny string) string {
	return fmt.Sprintf(`%s guard %s || printf '%%s\n' '%s'`, shellBin(bin), harness, deny)
}

// The tools each harness's entry asks the guard about: those that write a
// file or run a shell command.
const (
	claudeMatcher = "Edit|MultiEdit|Write|NotebookEdit|Bash|PowerShell|Monitor"
	codexMatcher  = "^(apply_patch|Bash|shell|shell_command|exec_command|local_shell|Write|Edit)$"
	geminiMatcher = "write_file|replace|run_shell_command"
	gooseMatcher  = "^developer__(write|edit|shell|text_editor)$"
)

// entries are the pieces of agent's set-up, its commands starting bin.
func entries(agent, bin string) []entry {
	mark := "guard " + agent
	mcp := map[string]any{"type": "stdio", "command": bin, "args": []any{"mcp"}}
	claudeStyle := func(event, matcher, command string, extra map[string]any) map[string]any {
		h := map[string]any{"type": "command", "command": command}
		for k, v := range extra {
			h[k] = v
		}
		return map[string]any{"matcher": matcher, "hooks": []any{h}}
	}
	hooks := func(path, what, event string, want map[string]any) entry {
		l := hookList{section: "hooks", event: event, mark: mark}
		return jsonEntry(path, what, func(doc map[string]any) (bool, error) { return l.merge(doc, want) }, l.remove)
	}
	server := func(path, key string, want map[string]any) entry {
		m, r := mcpServer(key, want)
		return jsonEntry(path, `MCP server "lockgate"`, m, r)
	}
	switch agent {
	case "claude-code":
		return []entry{
			hooks(".claude/settings.json", "PreToolUse guard for "+claudeMatcher, "PreToolUse",
				claudeStyle("PreToolUse", claudeMatcher, claudeGuardCommand(bin), nil)),
			server(".mcp.json", "mcpServers", mcp),
		}
	case "codex":
		return []entry{hooks(".codex/hooks.json", "PreToolUse guard for apply_patch and shell", "PreToolUse",
			claudeStyle("PreToolUse", codexMatcher, exit2Command(bin, agent), map[string]any{"timeout": 60}))}
	case "gemini":
		return []entry{
			hooks(".gemini/settings.json", "BeforeTool guard for "+geminiMatcher, "BeforeTool",
				claudeStyle("BeforeTool", geminiMatcher, exit2Command(bin, agent), map[string]any{"name": "lockgate", "timeout": 60000})),
			server(".gemini/settings.json", "mcpServers", map[string]any{"command": bin, "args": []any{"mcp"}}),
		}
	case "opencode":
		return []entry{
			ownedEntry(".opencode/plugin/lockgate.js", "tool.execute.before guard plugin", pluginMark, opencodePlugin(bin), false),
			server("opencode.json", "mcp", map[string]any{"type": "local", "command": []any{bin, "mcp"}, "enabled": true}),
		}
	case "cursor":
		deny := `{"permission":"deny","user_message":"lockgate: the guard could not run: tool call blocked","agent_message":"lockgate: the guard could not run: tool call blocked"}`
		cmd := jsonDenyCommand(bin, agent, deny)
		pre := hookList{section: "hooks", event: "preToolUse", mark: mark}
		shell := hookList{section: "hooks", event: "beforeShellExecution", mark: mark}
		m, r := versioned(func(doc map[string]any) (bool, error) {
			a, err := pre.merge(doc, map[string]any{"command": cmd, "failClosed": true, "timeout": 60})
			if err != nil {
				return false, err
			}
			b, err := shell.merge(doc, map[string]any{"command": cmd, "failClosed": true, "timeout": 60})
			return a || b, err
		}, func(doc map[string]any) bool {
			a := pre.remove(doc)
			return shell.remove(doc) || a
		})
		return []entry{
			jsonEntry(".cursor/hooks.json", "preToolUse and beforeShellExecution guard (failClosed)", m, r),
			server(".cursor/mcp.json", "mcpServers", map[string]any{"command": bin, "args": []any{"mcp"}}),
		}
	case "copilot":
		deny := `{"permissionDecision":"deny","permissionDecisionReason":"lockgate: the guard could not run: tool call blocked"}`
		l := hookList{section: "hooks", event: "preToolUse", mark: mark}
		m, r := versioned(func(doc map[string]any) (bool, error) {
			return l.merge(doc, map[string]any{"type": "command", "bash": jsonDenyCommand(bin, agent, deny), "timeoutSec": 60})
		}, l.remove)
		return []entry{jsonEntry(".github/hooks/lockgate.json", "preToolUse guard", m, r)}
	case "cline":
		return []entry{ownedEntry(".clinerules/hooks/PreToolUse", "PreToolUse hook script", pluginMark, clineScript(bin), true)}
	case "goose":
		return []entry{
			ownedEntry(".agents/plugins/lockgate/plugin.json", "Goose plugin", `"lockgate"`,
				"{\n  \"name\": \"lockgate\",\n  \"version\": \"1.0.0\",\n  \"description\": \"lockgate's pre-edit guard: refuses edits of files another worker holds\"\n}\n", false),
			hooks(".agents/plugins/lockgate/hooks/hooks.json", "PreToolUse guard (on_failure: block)", "PreToolUse",
				claudeStyle("PreToolUse", gooseMatcher, exit2Command(bin, agent), map[string]any{"timeout": 60, "on_failure": "block"})),
		}
	case "aider":
		return []entry{aiderEntry(bin)}
	}
	return nil
}

// pluginMark identifies a file lockgate writes whole.
const pluginMark = "lockgate-agent-setup"

// opencodePlugin pipes tool.execute.before's arguments to `lockgate guard
// opencode` and throws its reason when it denies — and when it cannot be
// run, times out or answers nothing: opencode runs the tool unless the
// plugin throws.
func opencodePlugin(bin string) string {
	return fmt.Sprintf(`// %s: lockgate's pre-edit guard for opencode. lockgate agent setup opencode
// writes this file and lockgate uninstall --agent opencode removes it.
import { spawnSync } from "node:child_process"

export const Lockgate = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const r = spawnSync(%q, ["guard", "opencode"], {
      input: JSON.stringify({ input, output, directory }),
      cwd: directory,
      encoding: "utf8",
      timeout: 60000,
      maxBuffer: 16 << 20,
    })
    if (r.error || r.status !== 0) {
      const why = (r.stderr || "").trim() || "lockgate: the guard could not run (" + (r.error ? r.error.message : "exit " + r.status) + "): tool call blocked"
      throw new Error(why)
    }
  },
})
`, pluginMark, bin)
}

// clineScript is Cline's PreToolUse hook: Cline reads {"cancel": …} on
// stdout and runs the tool when the hook fails, so a lockgate that cannot
// run prints a cancel itself.
func clineScript(bin string) string {
	return fmt.Sprintf(`#!/bin/sh
# %s: lockgate's pre-edit guard for Cline. lockgate agent setup cline
# writes this file and lockgate uninstall --agent cline removes it.
%s || printf '%%s\n' '{"cancel":true,"errorMessage":"lockgate: the guard could not run: tool call blocked"}'
`, pluginMark, jsonGuard(bin))
}

func jsonGuard(bin string) string { return strings.TrimSpace(shellBin(bin) + " guard cline") }
