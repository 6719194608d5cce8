package service

import (
	"strings"
	"testing"
)

// FuzzEditPayload: any input either fails with an error or yields a
// payload naming a tool, and the file of an edit; it never panics.
func FuzzEditPayload(f *testing.F) {
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
		p, err := ReadEditPayload(strings.NewReader(s))
		if err != nil {
			return
		}
		if p.Tool == "" || claudeEditTools[p.Tool] && p.Path == "" {
			t.Fatalf("accepted %q as %+v", s, p)
		}
	})
}
