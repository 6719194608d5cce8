package agentsetup

import (
	"encoding/json"
	"testing"
)

// FuzzClaudeSettings: merging the guard into any settings object and
// removing it again leaves every hook of the user in place, and exactly
// one guard entry while merged.
func FuzzClaudeSettings(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x.sh"}]}]}}`,
		`{"hooks":{"PreToolUse":[{"matcher":"Edit","hooks":[]},{"hooks":"nope"},3]}}`,
		`{"hooks":{"PreToolUse":{}}}`,
		`{"hooks":[]}`,
		`{"hooks":{"PreToolUse":[{"matcher":"Edit|MultiEdit|Write|NotebookEdit","hooks":[{"type":"command","command":"lockgate guard claude-code || exit 2"}]}]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var doc map[string]any
		if json.Unmarshal([]byte(s), &doc) != nil || doc == nil {
			return
		}
		before := userCommands(doc)
		l := hookList{section: "hooks", event: "PreToolUse", mark: "guard claude-code"}
		want := map[string]any{"matcher": claudeMatcher, "hooks": []any{map[string]any{"type": "command", "command": claudeGuardCommand("lockgate")}}}
		if _, err := l.merge(doc, want); err != nil {
			return // a shape lockgate refuses to touch
		}
		if n := ourCommands(doc); n != 1 {
			t.Fatalf("%d guard entries after merge of %s", n, s)
		}
		if got := userCommands(doc); !equalCounts(got, before) {
			t.Fatalf("merge changed the user's hooks of %s: %v -> %v", s, before, got)
		}
		l.remove(doc)
		if n := ourCommands(doc); n != 0 {
			t.Fatalf("%d guard entries left after remove of %s", n, s)
		}
		if got := userCommands(doc); !equalCounts(got, before) {
			t.Fatalf("remove changed the user's hooks of %s: %v -> %v", s, before, got)
		}
	})
}

// preToolCommands counts the hook commands under hooks.PreToolUse.
func preToolCommands(doc map[string]any, ours bool) map[string]int {
	out := map[string]int{}
	hooksObj, _ := doc["hooks"].(map[string]any)
	groups, _ := hooksObj["PreToolUse"].([]any)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		hs, _ := gm["hooks"].([]any)
		for _, h := range hs {
			if mentions(h, "guard claude-code") == ours {
				b, _ := json.Marshal(h)
				out[string(b)]++
			}
		}
	}
	return out
}

func userCommands(doc map[string]any) map[string]int { return preToolCommands(doc, false) }

func ourCommands(doc map[string]any) int {
	n := 0
	for _, c := range preToolCommands(doc, true) {
		n += c
	}
	return n
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
