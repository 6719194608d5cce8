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
	"slices"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/config"
)

// Agents are the coding agents `init --agent` and `agent setup` set up.
var Agents = []string{"claude-code", "codex", "gemini", "opencode", "cursor", "copilot", "cline", "goose", "aider"}

// Error is an agent lockgate does not know, or a settings file it will
// not edit: invalid input, which the user fixes.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// InvalidArgument marks the error as the caller's argument (exit 2).
func (*Error) InvalidArgument() {}

// Check refuses an agent name lockgate cannot set up.
func Check(name string) error {
	if slices.Contains(Agents, name) {
		return nil
	}
	return &Error{Msg: fmt.Sprintf("unknown agent %q: want one of %s", name, strings.Join(Agents, ", "))}
}

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

// shellBin is bin as a shell command word.
func shellBin(bin string) string {
	if bin == "lockgate" {
		return bin
	}
	return hint.Quote(bin)
}

// maxAgentFileBytes bounds an agent's settings file; larger ones are not
// settings lockgate should edit.
const maxAgentFileBytes = 1 << 20

// Step is one settings entry Setup or Remove looked at: the file, what
// the entry is, whether it changed (added, updated or removed) or was
// already as wanted, and with a dry run the change it would make.
type Step struct {
	Path    string `json:"path"`
	What    string `json:"what"`
	Changed bool   `json:"changed"`
	// Diff is the change to Path, as lines prefixed "-" and "+" between
	// "--- PATH" and "+++ PATH"; set by a dry run only.
	Diff string `json:"diff,omitempty"`
}

// entry is one piece of an agent's set-up in one file: merge returns the
// file's new content from its current one (nil when it does not exist),
// remove the content without lockgate's piece; nil content removes the
// file.
type entry struct {
	path   string // relative to the worktree
	what   string
	exec   bool // a script: written executable
	merge  func(old []byte) ([]byte, error)
	remove func(old []byte) ([]byte, error)
}

// readFile reads a settings file, nil when there is none.
func readFile(path string) ([]byte, error) {
	data, err := config.ReadFile(path, maxAgentFileBytes)
	var ce *config.Error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.As(err, &ce):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// Setup writes agent's settings in the worktree at root, each entry
// merged beside the user's own; with dryRun it writes nothing and each
// step carries the diff it would apply.
func Setup(root, agent string, dryRun bool) ([]Step, error) {
	if err := Check(agent); err != nil {
		return nil, err
	}
	return apply(root, entries(agent, lockgateBin()), dryRun, func(e entry, old []byte) ([]byte, error) { return e.merge(old) })
}

// Remove takes lockgate's entries out of agent's settings; the steps name
// the entries it removed.
func Remove(root, agent string) ([]Step, error) {
	if err := Check(agent); err != nil {
		return nil, err
	}
	steps, err := apply(root, entries(agent, lockgateBin()), false, func(e entry, old []byte) ([]byte, error) {
		if old == nil {
			return nil, nil
		}
		return e.remove(old)
	})
	changed := steps[:0]
	for _, s := range steps {
		if s.Changed {
			changed = append(changed, s)
		}
	}
	return changed, err
}

func apply(root string, es []entry, dryRun bool, change func(entry, []byte) ([]byte, error)) ([]Step, error) {
	var steps []Step
	// A dry run writes nothing: the next entry of the same file starts
	// from what the last one would have written.
	pending := map[string][]byte{}
	for _, e := range es {
		path := filepath.Join(root, filepath.FromSlash(e.path))
		old, seen := pending[path]
		if !seen {
			var err error
			if old, err = readFile(path); err != nil {
				return steps, err
			}
		}
		data, err := change(e, old)
		if err != nil {
			var ae *Error
			if errors.As(err, &ae) {
				return steps, &Error{Msg: path + ": " + ae.Msg}
			}
			return steps, fmt.Errorf("%s: %w", path, err)
		}
		step := Step{Path: path, What: e.what, Changed: !bytes.Equal(old, data) || (old == nil) != (data == nil)}
		pending[path] = data
		switch {
		case !step.Changed:
		case dryRun:
			step.Diff = lineDiff(path, string(old), string(data))
		case data == nil:
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return steps, fmt.Errorf("remove %s: %w", path, err)
			}
			removeEmptyDirs(root, filepath.Dir(path))
		default:
			if err := writeFile(path, data, e.exec); err != nil {
				return steps, err
			}
		}
		steps = append(steps, step)
	}
	return steps, nil
}

// removeEmptyDirs removes dir and its parents up to root while they are
// empty: the directories an agent's set-up created for its files.
func removeEmptyDirs(root, dir string) {
	for dir != root && strings.HasPrefix(dir, root+string(filepath.Separator)) {
		if err := os.Remove(dir); err != nil {
			return // not empty, or not ours to remove
		}
		dir = filepath.Dir(dir)
	}
}

// writeFile replaces path atomically, keeping its mode.
func writeFile(path string, data []byte, executable bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".lockgate-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	mode := fs.FileMode(0o644)
	if executable {
		mode = 0o755
	}
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// lineDiff shows the change from a to b line by line.
func lineDiff(path, a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", path, path)
	for _, d := range diffs {
		prefix := " "
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			prefix = "-"
		case diffmatchpatch.DiffInsert:
			prefix = "+"
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l == "" {
				continue
			}
			out.WriteString(prefix + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	return out.String()
}

// jsonEntry is an entry merged into a JSON object file.
func jsonEntry(path, what string, merge func(doc map[string]any) (bool, error), remove func(doc map[string]any) bool) entry {
	decode := func(old []byte) (map[string]any, error) {
		doc := map[string]any{}
		if len(bytes.TrimSpace(old)) == 0 {
			return doc, nil
		}
		if err := json.Unmarshal(old, &doc); err != nil {
			return nil, &Error{Msg: fmt.Sprintf("%s is not a JSON object (%v): fix it by hand; lockgate does not overwrite it", filepath.Base(path), err)}
		}
		if doc == nil {
			doc = map[string]any{}
		}
		return doc, nil
	}
	encode := func(doc map[string]any) ([]byte, error) {
		if len(doc) == 0 {
			return nil, nil
		}
		// As people write JSON: `>` and `&` in commands stay as they are.
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		return b.Bytes(), nil
	}
	return entry{path: path, what: what,
		merge: func(old []byte) ([]byte, error) {
			doc, err := decode(old)
			if err != nil {
				return nil, err
			}
			changed, err := merge(doc)
			if err != nil || !changed {
				return old, err
			}
			return encode(doc)
		},
		remove: func(old []byte) ([]byte, error) {
			doc, err := decode(old)
			if err != nil {
				return nil, err
			}
			if !remove(doc) {
				return old, nil
			}
			return encode(doc)
		}}
}

// ownedEntry is a file lockgate writes whole (a plugin, a hook script),
// known by mark; a file there without it is the user's, and left alone.
func ownedEntry(path, what, mark, content string, executable bool) entry {
	return entry{path: path, what: what, exec: executable,
		merge: func(old []byte) ([]byte, error) {
			if old != nil && !bytes.Contains(old, []byte(mark)) {
				return nil, &Error{Msg: "exists and is not lockgate's: merge lockgate's by hand (lockgate agent setup --dry-run shows it)"}
			}
			return []byte(content), nil
		},
		remove: func(old []byte) ([]byte, error) {
			if !bytes.Contains(old, []byte(mark)) {
				return old, nil
			}
			return nil, nil
		}}
}

// object returns doc[key] as an object, creating it; an existing value of
// another type is an error, never overwritten.
func object(doc map[string]any, key string) (map[string]any, error) {
	v, ok := doc[key]
	if !ok || v == nil {
		m := map[string]any{}
		doc[key] = m
		return m, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("%q is not an object; fix it by hand", key)}
	}
	return m, nil
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// mentions reports whether any string in v contains mark and "lockgate".
func mentions(v any, mark string) bool {
	switch t := v.(type) {
	case string:
		return strings.Contains(t, mark) && strings.Contains(t, "lockgate")
	case map[string]any:
		for _, x := range t {
			if mentions(x, mark) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if mentions(x, mark) {
				return true
			}
		}
	}
	return false
}

// hookList is a list of hook entries at doc[section][event]: groups
// {matcher, hooks: [...]} (Claude Code, Codex, Gemini CLI, Goose) or flat
// entries (Cursor, Copilot). lockgate's own entry is the one whose
// command holds mark.
type hookList struct {
	section, event, mark string
}

// merge puts want in the list as lockgate's one entry, replacing older
// ones of lockgate's; the user's stay as they are.
func (l hookList) merge(doc map[string]any, want map[string]any) (bool, error) {
	sec, err := object(doc, l.section)
	if err != nil {
		return false, err
	}
	var list []any
	switch v := sec[l.event].(type) {
	case nil:
	case []any:
		list = v
	default:
		return false, &Error{Msg: fmt.Sprintf("%s.%s is not a list; fix it by hand", l.section, l.event)}
	}
	ours, current := 0, false
	for _, g := range list {
		if mentions(g, l.mark) {
			ours++
			current = current || jsonEqual(g, want)
		}
	}
	if ours == 1 && current {
		return false, nil
	}
	if ours > 0 {
		l.remove(doc)
		sec, _ = object(doc, l.section)
		list, _ = sec[l.event].([]any)
	}
	sec[l.event] = append(list, want)
	return true, nil
}

// remove takes lockgate's entries out of the list, and the list and
// section when that leaves them empty.
func (l hookList) remove(doc map[string]any) bool {
	sec, ok := doc[l.section].(map[string]any)
	if !ok {
		return false
	}
	list, ok := sec[l.event].([]any)
	if !ok {
		return false
	}
	changed := false
	kept := []any{}
	for _, g := range list {
		if !mentions(g, l.mark) {
			kept = append(kept, g)
			continue
		}
		changed = true
		gm, isObj := g.(map[string]any)
		hs, isGroup := gm["hooks"].([]any)
		if !isObj || !isGroup {
			continue // a flat entry of lockgate's
		}
		rest := []any{}
		for _, h := range hs {
			if !mentions(h, l.mark) {
				rest = append(rest, h)
			}
		}
		if len(rest) > 0 {
			gm["hooks"] = rest
			kept = append(kept, gm)
		}
	}
	if !changed {
		return false
	}
	sec[l.event] = kept
	if len(kept) == 0 {
		delete(sec, l.event)
	}
	if len(sec) == 0 {
		delete(doc, l.section)
	}
	return true
}

// mcpServer registers `lockgate mcp` as the server "lockgate" under key
// (mcpServers for most agents).
func mcpServer(key string, want map[string]any) (func(map[string]any) (bool, error), func(map[string]any) bool) {
	merge := func(doc map[string]any) (bool, error) {
		servers, err := object(doc, key)
		if err != nil {
			return false, err
		}
		if cur, ok := servers["lockgate"]; ok && jsonEqual(cur, want) {
			return false, nil
		}
		servers["lockgate"] = want
		return true, nil
	}
	remove := func(doc map[string]any) bool {
		servers, ok := doc[key].(map[string]any)
		if !ok {
			return false
		}
		cur, ok := servers["lockgate"]
		if b, err := json.Marshal(cur); !ok || err != nil || !bytes.Contains(b, []byte(`"mcp"`)) || !bytes.Contains(b, []byte("lockgate")) {
			return false // not the server lockgate registers
		}
		delete(servers, "lockgate")
		if len(servers) == 0 {
			delete(doc, key)
		}
		return true
	}
	return merge, remove
}

// versioned keeps a top-level "version": 1 that a hooks file needs
// (Cursor, Copilot), and drops it once nothing else is left.
func versioned(merge func(map[string]any) (bool, error), remove func(map[string]any) bool) (func(map[string]any) (bool, error), func(map[string]any) bool) {
	return func(doc map[string]any) (bool, error) {
			changed, err := merge(doc)
			if _, ok := doc["version"]; !ok && err == nil {
				doc["version"] = 1
				changed = true
			}
			return changed, err
		}, func(doc map[string]any) bool {
			if !remove(doc) {
				return false
			}
			if len(doc) == 1 {
				delete(doc, "version")
			}
			return true
		}
}
