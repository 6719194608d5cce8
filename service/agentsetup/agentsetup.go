package agentsetup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/config"
)

// Agents whose setup `init --agent` writes.
var knownAgents = []string{"claude-code"}

// Error is an agent lockgate does not know, or a settings file it will
// not edit: invalid input, which the user fixes.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Check refuses an agent name lockgate cannot set up.
func Check(name string) error {
	for _, a := range knownAgents {
		if a == name {
			return nil
		}
	}
	return &Error{Msg: fmt.Sprintf("unknown agent %q: want one of %s", name, strings.Join(knownAgents, ", "))}
}

// claudeGuardMatcher is the Claude Code tools the pre-edit guard answers.
const claudeGuardMatcher = "Edit|MultiEdit|Write|NotebookEdit"

// claudeGuardMark identifies lockgate's own hook entry in a settings file.
const claudeGuardMark = "guard claude-code"

// lockgateBin is how agent settings start lockgate: by name when it is on
// PATH (the settings files are shared), else by this binary's path.
func lockgateBin() string {
	if _, err := exec.LookPath("lockgate"); err == nil {
		return "lockgate"
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return "lockgate"
}

// claudeGuardCommand is the hook command. Claude Code lets a tool call go
// ahead on any exit code but 2, so a lockgate that cannot be started
// (exit 127) must still block.
func claudeGuardCommand(bin string) string {
	if bin != "lockgate" {
		bin = hint.Quote(bin)
	}
	return bin + " " + claudeGuardMark + " || exit 2"
}

// agentFile is one JSON settings file lockgate merges an entry into.
type agentFile struct {
	path string
	doc  map[string]any
}

// maxAgentFileBytes bounds an agent's settings file; larger ones are not
// settings lockgate should edit.
const maxAgentFileBytes = 1 << 20

func readAgentFile(path string) (*agentFile, error) {
	f := &agentFile{path: path, doc: map[string]any{}}
	data, err := config.ReadFile(path, maxAgentFileBytes)
	var ce *config.Error
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	if err := json.Unmarshal(data, &f.doc); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("%s is not a JSON object (%v): fix it by hand; lockgate does not overwrite it", path, err)}
	}
	if f.doc == nil {
		f.doc = map[string]any{}
	}
	return f, nil
}

// write replaces the file atomically; an empty document removes it.
func (f *agentFile) write() error {
	if len(f.doc) == 0 {
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", f.path, err)
		}
		return nil
	}
	data, err := json.MarshalIndent(f.doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", f.path, err)
	}
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(f.path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".lockgate-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(f.path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// object returns doc[key] as an object, creating it; an existing value of
// another type is an error, never overwritten.
func object(doc map[string]any, key, file string) (map[string]any, error) {
	v, ok := doc[key]
	if !ok || v == nil {
		m := map[string]any{}
		doc[key] = m
		return m, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("%s: %q is not an object; fix it by hand", file, key)}
	}
	return m, nil
}

// isOurHook reports whether a Claude Code hook entry runs lockgate's guard.
func isOurHook(h any) bool {
	m, ok := h.(map[string]any)
	if !ok {
		return false
	}
	cmd, _ := m["command"].(string)
	return strings.Contains(cmd, claudeGuardMark) && strings.Contains(cmd, "lockgate")
}

// mergeClaudeSettings adds (or updates) the PreToolUse guard entry as a
// group of its own; the user's other hooks stay as they are. It reports
// whether it changed the document.
func mergeClaudeSettings(f *agentFile, command string) (bool, error) {
	hooksObj, err := object(f.doc, "hooks", f.path)
	if err != nil {
		return false, err
	}
	var groups []any
	switch v := hooksObj["PreToolUse"].(type) {
	case nil:
	case []any:
		groups = v
	default:
		return false, &Error{Msg: fmt.Sprintf("%s: hooks.PreToolUse is not a list; fix it by hand", f.path)}
	}
	want := map[string]any{"matcher": claudeGuardMatcher, "hooks": []any{map[string]any{"type": "command", "command": command}}}
	ours := 0
	current := false
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		hs, _ := gm["hooks"].([]any)
		for _, h := range hs {
			if isOurHook(h) {
				ours++
				current = current || jsonEqual(g, want)
			}
		}
	}
	if ours == 1 && current {
		return false, nil
	}
	if ours > 0 {
		removeClaudeSettings(f)
		hooksObj, _ = object(f.doc, "hooks", f.path)
		groups, _ = hooksObj["PreToolUse"].([]any)
	}
	hooksObj["PreToolUse"] = append(groups, want)
	return true, nil
}

// removeClaudeSettings takes out lockgate's guard entries only, and groups
// and sections left empty by that. It reports whether it changed.
func removeClaudeSettings(f *agentFile) bool {
	hooksObj, ok := f.doc["hooks"].(map[string]any)
	if !ok {
		return false
	}
	groups, ok := hooksObj["PreToolUse"].([]any)
	if !ok {
		return false
	}
	changed := false
	kept := []any{}
	for _, g := range groups {
		gm, ok := g.(map[string]any)
		hs, isList := gm["hooks"].([]any)
		if !ok || !isList {
			kept = append(kept, g)
			continue
		}
		rest := []any{}
		for _, h := range hs {
			if !isOurHook(h) {
				rest = append(rest, h)
			}
		}
		if len(rest) == len(hs) {
			kept = append(kept, g)
			continue
		}
		changed = true
		if len(rest) > 0 {
			gm["hooks"] = rest
			kept = append(kept, gm)
		}
	}
	if !changed {
		return false
	}
	hooksObj["PreToolUse"] = kept
	if len(kept) == 0 {
		delete(hooksObj, "PreToolUse")
	}
	if len(hooksObj) == 0 {
		delete(f.doc, "hooks")
	}
	return true
}

// mergeMCPConfig registers `lockgate mcp` as the project's "lockgate" MCP
// server.
func mergeMCPConfig(f *agentFile, bin string) (bool, error) {
	servers, err := object(f.doc, "mcpServers", f.path)
	if err != nil {
		return false, err
	}
	want := map[string]any{"type": "stdio", "command": bin, "args": []any{"mcp"}}
	if cur, ok := servers["lockgate"]; ok && jsonEqual(cur, want) {
		return false, nil
	}
	servers["lockgate"] = want
	return true, nil
}

func removeMCPConfig(f *agentFile) bool {
	servers, ok := f.doc["mcpServers"].(map[string]any)
	if !ok {
		return false
	}
	cur, ok := servers["lockgate"].(map[string]any)
	if !ok || cur["args"] == nil || !strings.Contains(fmt.Sprint(cur["command"]), "lockgate") {
		return false
	}
	delete(servers, "lockgate")
	if len(servers) == 0 {
		delete(f.doc, "mcpServers")
	}
	return true
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// Step is one settings entry Setup or Remove looked at: the file, what
// the entry is, and whether it changed (added or removed) or was already
// as wanted.
type Step struct {
	Path    string
	What    string
	Changed bool
}

// Setup writes agent's settings in the worktree at root: for Claude Code,
// the pre-edit guard in .claude/settings.json and the MCP server in
// .mcp.json. Each entry is merged beside the user's own.
func Setup(root, agent string) ([]Step, error) {
	if err := Check(agent); err != nil {
		return nil, err
	}
	bin := lockgateBin()
	var steps []Step
	for _, step := range []struct {
		path  string
		merge func(*agentFile) (bool, error)
		what  string
	}{
		{filepath.Join(root, ".claude", "settings.json"), func(f *agentFile) (bool, error) { return mergeClaudeSettings(f, claudeGuardCommand(bin)) }, "PreToolUse guard for " + claudeGuardMatcher},
		{filepath.Join(root, ".mcp.json"), func(f *agentFile) (bool, error) { return mergeMCPConfig(f, bin) }, `MCP server "lockgate"`},
	} {
		f, err := readAgentFile(step.path)
		if err != nil {
			return steps, err
		}
		changed, err := step.merge(f)
		if err != nil {
			return steps, err
		}
		if changed {
			if err := f.write(); err != nil {
				return steps, err
			}
		}
		steps = append(steps, Step{Path: step.path, What: step.what, Changed: changed})
	}
	return steps, nil
}

// Remove takes lockgate's entries out of agent's settings; the steps name
// the entries it removed.
func Remove(root, agent string) ([]Step, error) {
	if err := Check(agent); err != nil {
		return nil, err
	}
	var steps []Step
	for _, step := range []struct {
		path   string
		remove func(*agentFile) bool
		what   string
	}{
		{filepath.Join(root, ".claude", "settings.json"), removeClaudeSettings, "PreToolUse guard"},
		{filepath.Join(root, ".mcp.json"), removeMCPConfig, `MCP server "lockgate"`},
	} {
		f, err := readAgentFile(step.path)
		if err != nil {
			return steps, err
		}
		if !step.remove(f) {
			continue
		}
		if err := f.write(); err != nil {
			return steps, err
		}
		steps = append(steps, Step{Path: step.path, What: step.what, Changed: true})
	}
	return steps, nil
}
