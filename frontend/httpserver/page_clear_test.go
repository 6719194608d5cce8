package httpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// boardDo sends one request of the board page, with Basic credentials
// when user is set and the headers given, and returns its status and body.
func boardDo(t *testing.T, srv *httptest.Server, method, path, user, token, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// The board page clears a lock as its signed-in user, and only from its
// own origin with the server's CSRF token: a browser sends the user's
// credentials with any site's request.
func TestBoardClear(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if status, _, body := apiDo(t, f.srv, "POST", "/api/v1/locks", f.alice, `{"keys":["a.bin"]}`); status != 200 {
		t.Fatalf("acquire: %d %v", status, body)
	}
	status, body := boardDo(t, f.srv, "GET", "/board/session", "bob", f.bob, "", nil)
	var session struct{ User, CSRF string }
	if status != 200 || json.Unmarshal([]byte(body), &session) != nil || session.User != "bob" || len(session.CSRF) != 64 {
		t.Fatalf("GET /board/session = %d %s, want bob and a token", status, body)
	}
	if status, body := boardDo(t, f.publicServer, "GET", "/board/session", "", "", "", nil); status != 401 || strings.Contains(body, session.CSRF) {
		t.Errorf("GET /board/session without credentials = %d %s, want 401", status, body)
	}
	same := map[string]string{"Origin": f.srv.URL, "Sec-Fetch-Site": "same-origin", csrfHeader: session.CSRF}
	// but is same with the headers named changed, "" dropping one.
	but := func(kv ...string) map[string]string {
		h := map[string]string{}
		for k, v := range same {
			h[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(h, kv[i])
			} else {
				h[kv[i]] = kv[i+1]
			}
		}
		return h
	}
	key := `{"key":"a.bin"}`
	for _, tc := range []struct {
		name, user, token, body string
		headers                 map[string]string
		status                  int
		has                     string
	}{
		{name: "no token", body: key, headers: same, status: 401},
		{name: "wrong token", user: "bob", token: "lgs_00_x", body: key, headers: same, status: 401},
		{name: "cross-site", user: "bob", token: f.bob, body: key, headers: but("Sec-Fetch-Site", "cross-site"), status: 403},
		{name: "another origin", user: "bob", token: f.bob, body: key, headers: but("Sec-Fetch-Site", "", "Origin", "http://evil.example"), status: 403},
		{name: "no origin", user: "bob", token: f.bob, body: key, headers: but("Sec-Fetch-Site", "", "Origin", ""), status: 403},
		{name: "no CSRF token", user: "bob", token: f.bob, body: key, headers: but(csrfHeader, ""), status: 403},
		{name: "wrong CSRF token", user: "bob", token: f.bob, body: key, headers: but(csrfHeader, strings.Repeat("0", 64)), status: 403},
		{name: "no key", user: "bob", token: f.bob, body: `{}`, headers: same, status: 400},
		{name: "no admin", user: "bob", token: f.bob, body: key, headers: same, status: 403, has: "only an admin"},
		{name: "clear", user: "root", token: f.root, body: key, headers: but("Sec-Fetch-Site", ""), status: 200, has: `"holder":"alice"`},
	} {
		status, body := boardDo(t, f.srv, "POST", "/board/clear", tc.user, tc.token, tc.body, tc.headers)
		if status != tc.status || !strings.Contains(body, tc.has) {
			t.Errorf("%s: POST /board/clear = %d %s, want %d with %q", tc.name, status, body, tc.status, tc.has)
		}
	}
	if _, _, body := apiDo(t, f.srv, "GET", "/api/v1/locks", f.bob, ""); strings.Contains(mustJSON(t, body), "a.bin") {
		t.Errorf("a.bin is still locked: %v", body)
	}
	_, _, events := apiDo(t, f.srv, "GET", "/api/v1/events?since=1h&limit=1", f.bob, "")
	if got := mustJSON(t, events); !strings.Contains(got, `"action":"lock_clear"`) || !strings.Contains(got, `"root"`) {
		t.Errorf("the last event is not root's lock_clear: %s", got)
	}
}

// mustJSON is v as JSON.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
