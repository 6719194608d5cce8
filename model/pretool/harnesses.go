package pretool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// harness is how one harness's payload is read.
type harness struct {
	format string // what its payload is, for errors
	parse  func(d fields, c *Call) error
}

var harnesses = map[string]harness{
	"claude-code": {"Claude Code's PreToolUse JSON", parseClaude},
	"codex":       {"Codex's PreToolUse JSON", parseCodex},
	"gemini":      {"Gemini CLI's BeforeTool JSON", parseGemini},
	"opencode":    {"the JSON of lockgate's opencode plugin", parseOpencode},
	"cursor":      {"Cursor's preToolUse or beforeShellExecution JSON", parseCursor},
	"copilot":     {"GitHub Copilot's preToolUse JSON", parseCopilot},
	"cline":       {"Cline's PreToolUse JSON", parseCline},
	"goose":       {"Goose's PreToolUse JSON", parseGoose},
}

// event refuses a payload of another hook event than want (one of them).
func (d fields) event(key string, want ...string) error {
	ev, _, err := d.str(key)
	if err != nil || ev == "" {
		return err
	}
	for _, w := range want {
		if ev == w {
			return nil
		}
	}
	return fmt.Errorf("%s %q: this guard answers %s", key, ev, strings.Join(want, " and "))
}

// head reads what most payloads share: the tool's name, its input and the
// working directory, under the names given.
func (d fields) head(c *Call, toolKey, inputKey, cwdKey string) (fields, error) {
	tool, _, err := d.str(toolKey)
	if err != nil {
		return nil, err
	}
	if tool == "" {
		return nil, fmt.Errorf("hook payload has no %s", toolKey)
	}
	c.Tool = tool
	if cwdKey != "" {
		if c.Cwd, _, err = d.str(cwdKey); err != nil {
			return nil, err
		}
	}
	switch v := d[inputKey].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	case string:
		// Copilot documents its arguments as JSON text.
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil {
			return nil, &typeError{inputKey, "a JSON object"}
		}
		return m, nil
	}
	return nil, &typeError{inputKey, "an object"}
}

// Claude Code: https://code.claude.com/docs/en/hooks — tool_input.file_path
// (absolute), NotebookEdit's notebook_path, Bash's command.
func parseClaude(d fields, c *Call) error {
	if err := d.event("hook_event_name", "PreToolUse"); err != nil {
		return err
	}
	in, err := d.head(c, "tool_name", "tool_input", "cwd")
	if err != nil {
		return err
	}
	return claudeTools(in, c)
}

// claudeTools reads the tool input of Claude Code's tool names, which
// Codex, Cursor and Copilot's Claude-style form reuse.
func claudeTools(in fields, c *Call) error {
	var err error
	var p string
	switch c.Tool {
	case "Write", "Edit", "MultiEdit":
		p, err = in.path(c.Tool, "tool_input.", "file_path", "path")
	case "NotebookEdit":
		p, err = in.path(c.Tool, "tool_input.", "notebook_path", "file_path")
	case "Bash", "PowerShell":
		c.Shell, err = in.command(c.Tool, "command")
		return err
	case "Monitor":
		if _, ok := in["command"]; ok {
			c.Shell, err = in.command(c.Tool, "command")
		}
		return err
	default:
		return nil // reads, searches, other tools write no file
	}
	if err != nil {
		return err
	}
	c.Writes = append(c.Writes, p)
	return nil
}

// Codex CLI: apply_patch carries the whole patch in tool_input.command;
// shell tools arrive as Bash with the command as one string.
func parseCodex(d fields, c *Call) error {
	if err := d.event("hook_event_name", "PreToolUse"); err != nil {
		return err
	}
	in, err := d.head(c, "tool_name", "tool_input", "cwd")
	if err != nil {
		return err
	}
	switch c.Tool {
	case "apply_patch":
		text, _, err := in.str("command")
		if err != nil {
			return err
		}
		if text == "" {
			if text, _, err = in.str("input"); err != nil {
				return err
			}
		}
		if text == "" {
			return fmt.Errorf("apply_patch payload has no tool_input.command: cannot tell what would be edited")
		}
		return c.patch(text)
	case "Bash", "shell", "shell_command", "exec_command", "local_shell":
		c.Tool = "Bash"
		c.Shell, err = in.command(c.Tool, "command")
		if err == nil {
			c.ShellDir, _, err = in.str("workdir")
		}
		return err
	}
	return claudeTools(in, c)
}

// Gemini CLI: write_file and replace name tool_input.file_path (relative
// to cwd, or absolute); run_shell_command its command and dir_path.
func parseGemini(d fields, c *Call) error {
	if err := d.event("hook_event_name", "BeforeTool"); err != nil {
		return err
	}
	in, err := d.head(c, "tool_name", "tool_input", "cwd")
	if err != nil {
		return err
	}
	switch c.Tool {
	case "write_file", "replace", "edit":
		p, err := in.path(c.Tool, "tool_input.", "file_path", "path")
		if err != nil {
			return err
		}
		c.Writes = append(c.Writes, p)
	case "run_shell_command":
		if c.Shell, err = in.command(c.Tool, "command"); err == nil {
			c.ShellDir, _, err = in.str("dir_path")
		}
		return err
	}
	return nil
}

// opencode has no command hooks: lockgate's plugin pipes
// {"input": {tool, …}, "output": {"args": …}, "directory": …} — the
// arguments of tool.execute.before, and the project's directory.
func parseOpencode(d fields, c *Call) error {
	input, ok := d.obj("input")
	if !ok {
		return fmt.Errorf("hook payload has no input object (the plugin's tool.execute.before input)")
	}
	if _, err := input.head(c, "tool", "", ""); err != nil {
		return err
	}
	var err error
	if c.Cwd, _, err = d.str("directory"); err != nil {
		return err
	}
	output, _ := d.obj("output")
	args, _ := output.obj("args")
	switch c.Tool {
	case "write", "edit", "multiedit":
		p, err := args.path(c.Tool, "output.args.", "filePath", "file_path", "path")
		if err != nil {
			return err
		}
		c.Writes = append(c.Writes, p)
	case "patch", "apply_patch":
		text, _, err := args.str("patchText")
		if err != nil {
			return err
		}
		if text == "" {
			return fmt.Errorf("%s payload has no output.args.patchText: cannot tell what would be edited", c.Tool)
		}
		return c.patch(text)
	case "bash":
		if c.Shell, err = args.command(c.Tool, "command"); err == nil {
			c.ShellDir, _, err = args.str("workdir")
		}
		return err
	}
	return nil
}

// cursorReads are Cursor's tools that write nothing.
var cursorReads = map[string]bool{"Read": true, "Grep": true, "Glob": true, "LS": true, "Task": true, "WebFetch": true, "WebSearch": true, "Search": true, "CodebaseSearch": true, "ReadLints": true}

// Cursor: beforeShellExecution has a flat command and cwd; preToolUse
// names the tool (Shell, Write, Edit, StrReplace, Delete, ApplyPatch, …)
// and its tool_input. Writes have been seen without a tool_name: a
// payload whose input names a file and carries content to write is
// judged as a write.
func parseCursor(d fields, c *Call) error {
	ev, _, err := d.str("hook_event_name")
	if err != nil {
		return err
	}
	switch ev {
	case "beforeShellExecution":
		c.Tool = "Shell"
		if c.Cwd, _, err = d.str("cwd"); err != nil {
			return err
		}
		c.Shell, err = d.command(c.Tool, "command")
		return err
	case "preToolUse", "":
	default:
		return fmt.Errorf("hook_event_name %q: this guard answers preToolUse and beforeShellExecution", ev)
	}
	if c.Cwd, _, err = d.str("cwd"); err != nil {
		return err
	}
	if c.Cwd == "" {
		if roots, ok := d["workspace_roots"].([]any); ok && len(roots) > 0 {
			c.Cwd, _ = roots[0].(string)
		}
	}
	in, _ := d.obj("tool_input")
	if c.Tool, _, err = d.str("tool_name"); err != nil {
		return err
	}
	switch {
	case c.Tool == "Shell" || c.Tool == "Bash":
		c.Shell, err = in.command(c.Tool, "command")
		if err == nil {
			c.ShellDir, _, err = in.str("cwd")
		}
		return err
	case c.Tool == "ApplyPatch":
		for _, k := range []string{"patch", "input", "diff"} {
			if text, _, err := in.str(k); err != nil || text != "" {
				if err != nil {
					return err
				}
				return c.patch(text)
			}
		}
		return fmt.Errorf("ApplyPatch payload has no tool_input.patch: cannot tell what would be edited")
	case cursorReads[c.Tool] || strings.HasPrefix(c.Tool, "MCP:"):
		return nil
	case c.Tool == "":
		if in == nil {
			return fmt.Errorf("hook payload has no tool_name")
		}
		c.Tool = "(unnamed tool)"
	}
	// Write, Edit, StrReplace, MultiEdit, Delete, TabWrite and tools not
	// known to write nothing: the file they name.
	p, err := in.path(c.Tool, "tool_input.", "file_path", "path", "target_file", "filePath")
	if err != nil {
		return err
	}
	c.Writes = append(c.Writes, p)
	return nil
}

// GitHub Copilot: the camelCase form (toolName create, edit, bash;
// toolArgs, an object or JSON text) or the Claude-style one (tool_name
// Write, Edit, Bash; tool_input with Copilot's own keys).
func parseCopilot(d fields, c *Call) error {
	if _, ok := d["toolName"]; !ok {
		if err := d.event("hook_event_name", "PreToolUse", "preToolUse"); err != nil {
			return err
		}
		in, err := d.head(c, "tool_name", "tool_input", "cwd")
		if err != nil {
			return err
		}
		return claudeTools(in, c)
	}
	in, err := d.head(c, "toolName", "toolArgs", "cwd")
	if err != nil {
		return err
	}
	switch c.Tool {
	case "create", "edit", "write", "str_replace", "str_replace_editor":
		p, err := in.path(c.Tool, "toolArgs.", "path", "file_path")
		if err != nil {
			return err
		}
		c.Writes = append(c.Writes, p)
	case "bash", "powershell", "shell":
		c.Shell, err = in.command(c.Tool, "command")
		return err
	case "apply_patch":
		text, _, err := in.str("input")
		if err != nil {
			return err
		}
		if text == "" {
			return fmt.Errorf("apply_patch payload has no toolArgs.input: cannot tell what would be edited")
		}
		return c.patch(text)
	}
	return nil
}

// Cline: preToolUse.toolName and parameters (every value a string; lists
// as JSON text), the workspace root first in workspaceRoots. The CLI also
// sends tool_call.{name, input}.
func parseCline(d fields, c *Call) error {
	if err := d.event("hookName", "PreToolUse", "tool_call"); err != nil {
		return err
	}
	if roots, ok := d["workspaceRoots"].([]any); ok && len(roots) > 0 {
		c.Cwd, _ = roots[0].(string)
	}
	pre, ok := d.obj("preToolUse")
	if !ok {
		return fmt.Errorf("hook payload has no preToolUse object")
	}
	in, err := pre.head(c, "toolName", "parameters", "")
	if err != nil {
		return err
	}
	switch c.Tool {
	case "write_to_file", "replace_in_file", "new_rule", "editor", "insert_content", "search_and_replace":
		p, err := in.path(c.Tool, "preToolUse.parameters.", "path", "file_path")
		if err != nil {
			return err
		}
		c.Writes = append(c.Writes, p)
	case "apply_patch", "apply_diff":
		text, _, err := in.str("input")
		if err != nil {
			return err
		}
		if text == "" {
			if p, _, _ := in.str("path"); p != "" {
				c.Writes = append(c.Writes, p)
				return nil
			}
			return fmt.Errorf("%s payload has no preToolUse.parameters.input: cannot tell what would be edited", c.Tool)
		}
		return c.patch(text)
	case "execute_command":
		c.Shell, err = in.command(c.Tool, "command")
		return err
	case "run_commands":
		return clineCommands(in, c)
	}
	return nil
}

// clineCommands reads run_commands' commands: JSON text of a list of
// command strings or {command, args} objects, joined as one script.
func clineCommands(in fields, c *Call) error {
	raw, _, err := in.str("commands")
	if err != nil {
		return err
	}
	var list []any
	if err := json.Unmarshal([]byte(raw), &list); err != nil || len(list) == 0 {
		return fmt.Errorf("run_commands payload: parameters.commands is not a list of commands")
	}
	var script []string
	for _, item := range list {
		switch v := item.(type) {
		case string:
			script = append(script, v)
		case map[string]any:
			cmd, err := fields(v).command(c.Tool, "command")
			if err != nil {
				return err
			}
			if args, ok := v["args"].([]any); ok {
				words, err := fields{"args": args}.command(c.Tool, "args")
				if err != nil {
					return err
				}
				cmd += " " + words
			}
			script = append(script, cmd)
		default:
			return fmt.Errorf("run_commands payload: a command is neither text nor an object")
		}
	}
	c.Shell = strings.Join(script, "\n")
	return nil
}

// Goose: developer__write, developer__edit (tool_input.path),
// developer__shell (command), the older developer__text_editor (a
// command other than view), working_dir.
func parseGoose(d fields, c *Call) error {
	if err := d.event("event", "PreToolUse"); err != nil {
		return err
	}
	in, err := d.head(c, "tool_name", "tool_input", "working_dir")
	if err != nil {
		return err
	}
	_, name, _ := strings.Cut(c.Tool, "__")
	if name == "" {
		name = c.Tool
	}
	switch name {
	case "write", "edit":
	case "text_editor":
		if cmd, _, _ := in.str("command"); cmd == "view" {
			return nil
		}
	case "shell":
		c.Shell, err = in.command(c.Tool, "command")
		return err
	default:
		return nil
	}
	p, err := in.path(c.Tool, "tool_input.", "path", "file_path")
	if err != nil {
		return err
	}
	c.Writes = append(c.Writes, p)
	return nil
}
