package agenttest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPinsMatchScript holds Packages to the versions
// scripts/test-agents-deps.sh installs.
func TestPinsMatchScript(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "scripts", "test-agents-deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	vars := map[Harness]string{Claude: "CLAUDE_VERSION", Codex: "CODEX_VERSION", Gemini: "GEMINI_VERSION",
		OpenCode: "OPENCODE_VERSION", Copilot: "COPILOT_VERSION"}
	for _, h := range Harnesses {
		m := regexp.MustCompile(`(?m)^` + vars[h] + `=(\S+)$`).FindStringSubmatch(script)
		if m == nil {
			t.Fatalf("scripts/test-agents-deps.sh sets no %s", vars[h])
		}
		if p := Packages[h]; m[1] != p.Version {
			t.Errorf("%s: the script pins %s, Packages %s", h, m[1], p.Version)
		}
		if !strings.Contains(script, "install "+Packages[h].Name+" ") {
			t.Errorf("%s: the script does not install %s", h, Packages[h].Name)
		}
	}
	if OpenCodePlugin.Version != Packages[OpenCode].Version {
		t.Errorf("the opencode plugin is pinned at %s, opencode at %s", OpenCodePlugin.Version, Packages[OpenCode].Version)
	}
}

// TestMissingBinaryNamesScript checks that a missing harness is an error
// that tells how to install it.
func TestMissingBinaryNamesScript(t *testing.T) {
	t.Setenv("LOCKGATE_AGENTS_DIR", t.TempDir())
	for _, h := range Harnesses {
		_, err := Binary(h)
		if err == nil || !strings.Contains(err.Error(), "scripts/test-agents-deps.sh") {
			t.Errorf("%s: Binary error %v, want one naming scripts/test-agents-deps.sh", h, err)
		}
	}
}

func TestDirDefaults(t *testing.T) {
	t.Setenv("LOCKGATE_AGENTS_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got := Dir(); got != "/x/cache/lockgate/agents" {
		t.Fatalf("Dir() = %s", got)
	}
	t.Setenv("LOCKGATE_AGENTS_DIR", "/y")
	if got := Dir(); got != "/y" {
		t.Fatalf("Dir() = %s", got)
	}
}
