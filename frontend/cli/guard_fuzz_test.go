package cli

import (
	"strings"
	"testing"
)

// FuzzClaudePayload: any input either fails with an error or yields a
// PreToolUse payload naming a tool; it never panics.
func FuzzClaudePayload(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/r/a.py","old_string":"a","new_string":"b"}}`,
		`{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"nb.ipynb"}}`,
		`{"tool_name":"Write","tool_input":{"file_path":7}}`,
		`{"hook_event_name":"PostToolUse","tool_name":"Edit"}`,
		`null`, `[]`, ``, `{} {}`, "\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, err := readClaudePayload(strings.NewReader(s))
		if err != nil {
			return
		}
		if in.ToolName == "" || in.HookEventName != "" && in.HookEventName != "PreToolUse" {
			t.Fatalf("accepted %q as %+v", s, in)
		}
	})
}
