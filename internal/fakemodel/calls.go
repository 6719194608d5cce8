package fakemodel

import (
	"fmt"
	"strings"
)

// Harness names a coding-agent CLI, for picking its tool names.
type Harness string

// The harnesses whose tools the call helpers know.
const (
	Claude   Harness = "claude"
	Codex    Harness = "codex"
	Gemini   Harness = "gemini"
	OpenCode Harness = "opencode"
	Copilot  Harness = "copilot"
)

// Harnesses is every known harness, in a fixed order.
var Harnesses = []Harness{Claude, Codex, Gemini, OpenCode, Copilot}

// The tool names each harness declares to the model (as seen in their
// requests: Claude Code 2.1, Codex 0.171, Gemini CLI 0.61, opencode 1.18,
// Copilot CLI 1.0 with a Claude model).
var toolNames = map[Harness]struct{ read, write, edit, shell string }{
	Claude:   {"Read", "Write", "Edit", "Bash"},
	Codex:    {"", "apply_patch", "apply_patch", "exec_command"},
	Gemini:   {"read_file", "write_file", "replace", "run_shell_command"},
	OpenCode: {"read", "write", "edit", "bash"},
	Copilot:  {"view", "create", "edit", "bash"},
}

// ToolNames is the harness's tool names for reading, writing, editing a
// file and running a shell command. Codex writes and edits with
// apply_patch and has no read tool.
func ToolNames(h Harness) (read, write, edit, shell string) {
	n, ok := toolNames[h]
	if !ok {
		panic(fmt.Sprintf("fakemodel: unknown harness %q", h))
	}
	return n.read, n.write, n.edit, n.shell
}

// ReadFile is the call that reads path; Codex has no such tool and gets a
// shell `cat`.
func ReadFile(h Harness, path string) []Call {
	switch h {
	case Claude, Gemini:
		return []Call{{Name: toolNames[h].read, Args: map[string]any{"file_path": path}}}
	case OpenCode:
		return []Call{{Name: "read", Args: map[string]any{"filePath": path}}}
	case Copilot:
		return []Call{{Name: "view", Args: map[string]any{"path": path}}}
	case Codex:
		return []Call{{Name: "exec_command", Args: map[string]any{"cmd": "cat " + ShellQuote(path)}}}
	}
	panic(fmt.Sprintf("fakemodel: unknown harness %q", h))
}

// WriteFile is the call that creates path with content. For Codex it is an
// apply_patch adding the file (content should end in a newline).
func WriteFile(h Harness, path, content string) []Call {
	switch h {
	case Claude, Gemini:
		return []Call{{Name: toolNames[h].write, Args: map[string]any{"file_path": path, "content": content}}}
	case OpenCode:
		return []Call{{Name: "write", Args: map[string]any{"filePath": path, "content": content}}}
	case Copilot:
		return []Call{{Name: "create", Args: map[string]any{"path": path, "file_text": content}}}
	case Codex:
		return ApplyPatch(AddFilePatch(path, content))
	}
	panic(fmt.Sprintf("fakemodel: unknown harness %q", h))
}

// EditFile is the calls that replace old with new in the existing file at
// path. Claude Code and opencode refuse to edit a file the session has not
// read (before any hook runs), so for them a read comes first. For Codex it
// is an apply_patch updating the file; old and new must be whole lines.
func EditFile(h Harness, path, old, new string) []Call {
	switch h {
	case Claude:
		return append(ReadFile(h, path), Call{Name: "Edit", Args: map[string]any{"file_path": path, "old_string": old, "new_string": new}})
	case Gemini:
		return []Call{{Name: "replace", Args: map[string]any{"file_path": path, "old_string": old, "new_string": new,
			"instruction": "Replace the text as the user asked."}}}
	case OpenCode:
		return append(ReadFile(h, path), Call{Name: "edit", Args: map[string]any{"filePath": path, "oldString": old, "newString": new}})
	case Copilot:
		return []Call{{Name: "edit", Args: map[string]any{"path": path, "old_str": old, "new_str": new}}}
	case Codex:
		return ApplyPatch(UpdateFilePatch(path, "", old, new))
	}
	panic(fmt.Sprintf("fakemodel: unknown harness %q", h))
}

// ShellAppend is the shell call `echo LINE >> PATH`.
func ShellAppend(h Harness, path, line string) []Call {
	return Shell(h, "echo "+ShellQuote(line)+" >> "+ShellQuote(path))
}

// Shell is the call that runs command with the harness's shell tool.
func Shell(h Harness, command string) []Call {
	switch h {
	case Claude, Gemini, OpenCode, Copilot:
		return []Call{{Name: toolNames[h].shell, Args: map[string]any{"command": command, "description": "Run a shell command"}}}
	case Codex:
		return []Call{{Name: "exec_command", Args: map[string]any{"cmd": command}}}
	}
	panic(fmt.Sprintf("fakemodel: unknown harness %q", h))
}

// ApplyPatch is Codex's freeform apply_patch call with the whole patch as
// its input (see AddFilePatch, UpdateFilePatch).
func ApplyPatch(patch string) []Call {
	return []Call{{Name: "apply_patch", Custom: true, Input: patch}}
}

// AddFilePatch is an apply_patch patch that adds path with content.
func AddFilePatch(path, content string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Add File: " + path + "\n")
	for _, l := range lines(content) {
		b.WriteString("+" + l + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

// UpdateFilePatch is an apply_patch patch that replaces the lines old with
// the lines new in path, moving the file to moveTo when that is not empty.
func UpdateFilePatch(path, moveTo, old, new string) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Update File: " + path + "\n")
	if moveTo != "" {
		b.WriteString("*** Move to: " + moveTo + "\n")
	}
	b.WriteString("@@\n")
	for _, l := range lines(old) {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range lines(new) {
		b.WriteString("+" + l + "\n")
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=+,:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
