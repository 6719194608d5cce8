package agentsetup

import (
	"encoding/json"
	"testing"

	"go.yaml.in/yaml/v3"
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

func TestAiderKeepsTheUsers(t *testing.T) {
	t.Parallel()
	e := aiderEntry("lockgate")
	for _, tc := range []struct{ name, in, merged string }{
		{"nothing", "", "git-commit-verify: true # added by lockgate agent setup\nlint-cmd:\n  - lockgate --worker-type agent guard edit # added by lockgate agent setup\n"},
		{"the user's lint and verify", "# mine\ngit-commit-verify: true  # I want hooks\nlint-cmd: flake8\n", "# mine\ngit-commit-verify: true # I want hooks\nlint-cmd: flake8\n"},
		{"verify off", "git-commit-verify: false\nmodel: x\n", "git-commit-verify: true # added by lockgate agent setup (was false)\nmodel: x\nlint-cmd:\n  - lockgate --worker-type agent guard edit # added by lockgate agent setup\n"},
	} {
		var old []byte
		if tc.in != "" {
			old = []byte(tc.in)
		}
		got, err := e.merge(old)
		if err != nil || string(got) != tc.merged && !(tc.name == "the user's lint and verify" && string(got) == tc.in) {
			t.Errorf("%s: merge = %q, %v; want %q", tc.name, got, err, tc.merged)
			continue
		}
		again, err := e.merge(got)
		if err != nil || string(again) != string(got) {
			t.Errorf("%s: a second merge changed %q to %q (%v)", tc.name, got, again, err)
		}
		back, err := e.remove(got)
		if err != nil {
			t.Fatal(err)
		}
		if tc.in == "" && back != nil || tc.in != "" && !equalYAML(t, back, old) {
			t.Errorf("%s: remove = %q, want %q", tc.name, back, tc.in)
		}
	}
}

func equalYAML(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := yaml.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return jsonEqual(x, y)
}
