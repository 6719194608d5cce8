package httpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzHandlersAnswerClients sends hostile paths and keys through the
// handlers and the service to a server on a real repository: git-lfs's
// lock, list and unlock and the JSON API's acquire, release and refresh
// each answer a client's error or success, never a 5xx (the server's own
// failure).
func FuzzHandlersAnswerClients(f *testing.F) {
	for _, s := range []string{"a.bin", "db:dump.psd", "queue:x", "api:get /v1", "workflow", ".git/config", "x[1].bin", "a{b", "feature:x:pause",
		"task:WP-1", "**", "../x", "/abs", "C:/x", " x", "a\x00b", "é\u0301", strings.Repeat("a/", 3000)} {
		f.Add(s)
	}
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, rq := range []struct{ method, path, body string }{
			{"POST", "/lfs/locks", jsonOf(t, map[string]any{"path": s})},
			{"GET", "/lfs/locks?path=" + url.QueryEscape(s), ""},
			{"POST", "/lfs/locks/" + url.PathEscape(s) + "/unlock", `{"force":true}`},
			{"POST", "/api/v1/locks", jsonOf(t, map[string]any{"keys": []string{s}})},
			{"POST", "/api/v1/locks/refresh", jsonOf(t, map[string]any{"keys": []string{s}})},
			{"DELETE", "/api/v1/locks/" + url.PathEscape(s), ""},
			{"DELETE", "/api/v1/locks/" + url.PathEscape(s) + "?force=true", ""},
		} {
			req, err := http.NewRequest(rq.method, fx.srv.URL+rq.path, strings.NewReader(rq.body))
			if err != nil {
				continue // no request a client could send
			}
			req.SetBasicAuth("alice", fx.alice)
			if rq.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res, err := fx.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body) // the status is what is checked
			res.Body.Close()
			if res.StatusCode >= 500 {
				t.Fatalf("%s %s: %d %s", rq.method, rq.path, res.StatusCode, body)
			}
		}
	})
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
