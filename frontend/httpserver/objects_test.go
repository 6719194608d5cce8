package httpserver

import (
	"net/http"
	"strings"
	"testing"
)

// TestObjectsAnswered: git-lfs's transfer requests, with a token or
// without, get the git-lfs error that says the server stores no files and
// what to set up, as 501, never the mux's bare 404.
func TestObjectsAnswered(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct{ method, path, user, token string }{
		{http.MethodPost, "/lfs/objects/batch", "alice", f.alice},
		{http.MethodPost, "/lfs/objects/batch", "", ""},
		{http.MethodGet, "/lfs/objects/0123abcd", "alice", f.alice},
		{http.MethodPut, "/lfs/objects/0123abcd/verify", "", ""},
	} {
		status, h, body := do(t, f.srv, tt.method, tt.path, tt.user, tt.token, `{"operation":"upload","objects":[]}`)
		msg, _ := body["message"].(string)
		rid, _ := body["request_id"].(string)
		if status != http.StatusNotImplemented || h.Get("Content-Type") != lfsType ||
			!strings.Contains(msg, "stores no files") || !strings.Contains(msg, "--remote locks") || rid == "" {
			t.Errorf("%s %s: %d %q %v; want 501, the git-lfs type and the setup", tt.method, tt.path, status, h.Get("Content-Type"), body)
		}
	}
}
