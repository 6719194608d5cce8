package httpserver

import (
	"strings"
	"testing"
)

// TestAPIHintsAsTheCLIs: a 409 of POST /api/v1/locks hints as `lockgate
// lock acquire` does, "wait for it" first; a 403 of DELETE names the
// API's own force, not the CLI's.
func TestAPIHintsAsTheCLIs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if status, _, body := apiDo(t, f.srv, "POST", "/api/v1/locks", f.alice, `{"keys":["a.bin"]}`); status != 200 {
		t.Fatalf("acquire: %d %v", status, body)
	}
	status, _, body := apiDo(t, f.srv, "POST", "/api/v1/locks", f.bob, `{"keys":["a.bin"]}`)
	hints := hintsOf(t, body)
	if status != 409 || len(hints) < 2 || !strings.HasPrefix(hints[0], "wait for it: `lockgate lock acquire --wait ") || !strings.HasSuffix(hints[0], " a.bin`") ||
		!strings.Contains(strings.Join(hints, "\n"), "ask alice to run `lockgate lock release a.bin`") {
		t.Errorf("bob's acquire of alice's lock: %d, hints %q; want the CLI's, wait for it first", status, hints)
	}
	status, _, body = apiDo(t, f.srv, "DELETE", "/api/v1/locks/a.bin", f.bob, "")
	hints = hintsOf(t, body)
	if status != 403 || len(hints) != 1 || !strings.Contains(hints[0], "`DELETE /api/v1/locks/a.bin?force=true`") || strings.Contains(hints[0], "lockgate lock release") {
		t.Errorf("bob's release of alice's lock: %d, hints %q; want the API's force", status, hints)
	}
}

// hintsOf is the hints of an API error body.
func hintsOf(t *testing.T, body any) []string {
	t.Helper()
	m, _ := body.(map[string]any)
	e, _ := m["error"].(map[string]any)
	raw, _ := e["hints"].([]any)
	var out []string
	for _, h := range raw {
		s, _ := h.(string)
		out = append(out, s)
	}
	return out
}
