package pretool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/diffpath"
)

// Harnesses are the harness names lockgate answers, as `lockgate guard
// NAME` and `lockgate agent setup NAME` take them.
var Harnesses = []string{"claude-code", "codex", "gemini", "opencode", "cursor", "copilot", "cline", "goose"}

// MaxPayload bounds a payload: a write carries the whole new file.
const MaxPayload = 64 << 20

// Call is what a tool call would do, as far as the guard judges it.
type Call struct {
	Harness string
	// Tool is the tool's name as the harness gave it.
	Tool string
	// Cwd is the directory relative paths are relative to: the agent's
	// working directory (or the workspace root the payload names), "" when
	// the payload gives none.
	Cwd string
	// Writes are the files the tool would create, change, delete or move
	// (both sides of a move), as the payload names them: absolute, or
	// relative to Cwd.
	Writes []string
	// Shell is the shell command the tool would run, "" when it runs none.
	Shell string
	// ShellDir is where the shell command starts, when the payload names a
	// directory of its own for it (relative to Cwd); "" is Cwd.
	ShellDir string
}

// Guards reports whether the call writes or runs anything the guard
// judges.
func (c *Call) Guards() bool { return len(c.Writes) > 0 || c.Shell != "" }

// Error is a payload the guard cannot read.
type Error struct {
	Harness string
	Msg     string
}

func (e *Error) Error() string { return e.Msg }

// typeError is a field of the wrong JSON type: the payload is not the
// harness's.
type typeError struct{ field, want string }

func (e *typeError) Error() string { return e.field + " is not " + e.want }

// Parse reads harness's pre-tool payload.
func Parse(harness string, data []byte) (*Call, error) {
	fail := func(format string, a ...any) (*Call, error) {
		return nil, &Error{Harness: harness, Msg: fmt.Sprintf(format, a...)}
	}
	h, ok := harnesses[harness]
	if !ok {
		return fail("unknown harness %q: want one of %s", harness, strings.Join(Harnesses, ", "))
	}
	if len(data) > MaxPayload {
		return fail("hook payload larger than %d bytes", MaxPayload)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return fail("empty hook payload on stdin: want %s", h.format)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return fail("hook payload is not %s: %v", h.format, err)
	}
	if dec.More() {
		return fail("hook payload has trailing data after the JSON object")
	}
	c := &Call{Harness: harness}
	if err := h.parse(doc, c); err != nil {
		var te *typeError
		if errors.As(err, &te) {
			return fail("hook payload is not %s: %v", h.format, err)
		}
		return fail("%v", err)
	}
	if strings.Contains(c.Shell, applyPatchBegin) {
		// Codex's model also runs apply_patch as a command (`apply_patch
		// <<'EOF'`, or its argv): the patch in it is what it writes.
		if err := c.shellPatch(); err != nil {
			return fail("%v", err)
		}
	}
	for _, w := range c.Writes {
		if w == "" || strings.IndexByte(w, 0) >= 0 {
			return fail("%s payload names an empty file path or one with a NUL byte", c.Tool)
		}
	}
	return c, nil
}

// fields is a JSON object of a payload.
type fields map[string]any

func (f fields) obj(key string) (fields, bool) {
	m, ok := f[key].(map[string]any)
	return m, ok
}

// str is f[key] when it is a string; present reports the key was there
// at all, whatever its type.
func (f fields) str(key string) (s string, present bool, err error) {
	v, present := f[key]
	if !present || v == nil {
		return "", present, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", true, &typeError{key, "a string"}
	}
	return s, true, nil
}

// path is the file path of f's first key that holds one; a writing tool
// without one is an error. where names f in the payload
// ("tool_input.").
func (f fields) path(tool, where string, keys ...string) (string, error) {
	for _, k := range keys {
		s, _, err := f.str(k)
		if err != nil {
			return "", &typeError{where + k, "a string"}
		}
		if s != "" {
			return s, nil
		}
	}
	return "", fmt.Errorf("%s payload has no %s%s: cannot tell what would be edited", tool, where, keys[0])
}

// command is f[key] as a shell command: a string, or an argv list joined
// as a shell would read it.
func (f fields) command(tool, key string) (string, error) {
	if f == nil {
		return "", fmt.Errorf("%s payload has no %s: cannot tell what it would run", tool, key)
	}
	switch v := f[key].(type) {
	case string:
		if strings.TrimSpace(v) == "" {
			return "", fmt.Errorf("%s: empty %s", tool, key)
		}
		return v, nil
	case []any:
		words := make([]string, 0, len(v))
		for _, w := range v {
			s, ok := w.(string)
			if !ok {
				return "", fmt.Errorf("%s: %s holds a non-string word", tool, key)
			}
			words = append(words, shellQuote(s))
		}
		if len(words) == 0 {
			return "", fmt.Errorf("%s: empty %s", tool, key)
		}
		return strings.Join(words, " "), nil
	case nil:
		return "", fmt.Errorf("%s has no %s: cannot tell what it would run", tool, key)
	}
	return "", fmt.Errorf("%s: %s is neither a string nor a list of words", tool, key)
}

// patch adds the files of an apply_patch patch to c.
func (c *Call) patch(text string) error {
	changes, err := diffpath.ParseApplyPatch(text)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Tool, err)
	}
	for _, ch := range changes {
		c.Writes = append(c.Writes, ch.Touched()...)
	}
	return nil
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

const (
	applyPatchBegin = "*** Begin Patch"
	applyPatchEnd   = "*** End Patch"
)

// shellPatch adds the files of every apply_patch patch written out in the
// shell command: from "*** Begin Patch" to "*** End Patch", as a heredoc
// or a quoted argument carries it.
func (c *Call) shellPatch() error {
	rest := c.Shell
	for {
		i := strings.Index(rest, applyPatchBegin)
		if i < 0 {
			return nil
		}
		j := strings.Index(rest[i:], applyPatchEnd)
		if j < 0 {
			return fmt.Errorf("%s: the command holds an apply_patch patch without %q: cannot tell what it writes", c.Tool, applyPatchEnd)
		}
		patch := rest[i : i+j+len(applyPatchEnd)]
		// A quoted argument escapes the quote it is in.
		patch = strings.ReplaceAll(patch, `'\''`, "'")
		if err := c.patch(patch + "\n"); err != nil {
			return err
		}
		rest = rest[i+j+len(applyPatchEnd):]
	}
}
