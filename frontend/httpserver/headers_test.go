package httpserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
)

// TestSecurityHeadersOnEveryAnswer: the board's security headers are on
// every answer of the server, the refusals before any handler (401, 429)
// included, and /board/session's 401 is the JSON API's error object.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A server whose rate allows one request of each client address.
	r := gittest.New(t)
	r.Write("a.bin", "a\n")
	r.Commit("init")
	e, err := service.Load(t.Context(), service.Options{Dir: r.Dir, As: "server", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.Open(t.Context(), service.Purpose{TakesLocks: true, Server: true}); err != nil {
		t.Fatal(err)
	}
	limited := startServer(t, e, Options{RateLimit: RateLimit{PerSecond: 1.0 / 3600, Burst: 1}})

	check := func(srv *httptest.Server, method, path, user, token string, want int) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, token)
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		if res.StatusCode != want {
			t.Errorf("%s %s: %d, want %d", method, path, res.StatusCode, want)
		}
		for k, v := range map[string]string{"Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
			"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
			if got := res.Header.Get(k); got != v {
				t.Errorf("%s %s (%d): %s %q, want %q", method, path, res.StatusCode, k, got, v)
			}
		}
		return res
	}
	check(f.srv, "GET", "/", "", "", 401)
	check(f.srv, "GET", "/board.json", "alice", "lgs_00_x", 401)
	check(f.srv, "GET", "/", "alice", f.alice, 200)
	check(f.srv, "GET", "/lfs/locks", "", "", 401)
	check(f.srv, "GET", "/api/v1/locks", "", "", 401)
	check(f.srv, "GET", "/healthz", "", "", 200)
	check(limited, "GET", "/", "", "", 401)
	check(limited, "GET", "/", "", "", 429)
	check(limited, "GET", "/api/v1/locks", "", "", 429)

	res := check(f.publicServer, "GET", "/board/session", "", "", 401)
	var body struct {
		Error struct {
			Code      *int     `json:"code"`
			Class     string   `json:"class"`
			Message   string   `json:"message"`
			Hints     []string `json:"hints"`
			RequestID string   `json:"request_id"`
		} `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil || body.Error.Code == nil || *body.Error.Code != 6 ||
		body.Error.Class != classUnauthorized || body.Error.Message == "" || body.Error.Hints == nil || body.Error.RequestID == "" {
		t.Errorf("GET /board/session without credentials: %+v, %v; want the error object", body, err)
	}
}
