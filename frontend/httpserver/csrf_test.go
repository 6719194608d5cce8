package httpserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sendAs sends one request with a bearer token, the content type and the
// headers given, and returns its status and body.
func sendAs(t *testing.T, srv *httptest.Server, method, path, token, contentType, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
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

// lockID takes the git-lfs lock on p as the token's user and returns its id.
func lockID(t *testing.T, srv *httptest.Server, token, p string) string {
	t.Helper()
	status, body := sendAs(t, srv, "POST", "/lfs/locks", token, lfsType, `{"path":"`+p+`"}`, nil)
	var created struct {
		Lock struct{ ID string } `json:"lock"`
	}
	if status != 201 || json.Unmarshal([]byte(body), &created) != nil || created.Lock.ID == "" {
		t.Fatalf("git lfs lock %s: %d %s", p, status, body)
	}
	return created.Lock.ID
}

// locked reports whether key is locked, as the JSON API lists the locks.
func locked(t *testing.T, srv *httptest.Server, token, key string) bool {
	t.Helper()
	status, body := sendAs(t, srv, "GET", "/api/v1/locks", token, "", "", nil)
	if status != 200 {
		t.Fatalf("GET /api/v1/locks: %d %s", status, body)
	}
	var rows []struct{ Key string }
	if err := json.Unmarshal([]byte(body), &rows); err != nil {
		t.Fatalf("GET /api/v1/locks: %v: %s", err, body)
	}
	for _, r := range rows {
		if r.Key == key {
			return true
		}
	}
	return false
}

// TestWritesRefuseFormPosts: a page of another site, in a browser that
// sends the user's credentials with every request to the server, can post
// a form (text/plain, urlencoded, multipart) whose body is JSON:
// `{"force":true,"x":"="}` from a field named `{"force":true,"x":"`. Every
// write under /lfs and /api/v1 refuses such a body (415): it takes a
// JSON content type, which no form can send.
func TestWritesRefuseFormPosts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := lockID(t, f.srv, f.alice, "a.bin")
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		for _, rq := range []struct{ path, body string }{
			{"/lfs/locks/" + id + "/unlock", `{"force":true,"x":"="}` + "\r\n"},
			{"/lfs/locks", `{"path":"b.bin","x":"="}` + "\r\n"},
			{"/lfs/locks/verify", `{"x":"="}` + "\r\n"},
			{"/api/v1/locks", `{"keys":["b.bin"],"x":"="}` + "\r\n"},
			{"/api/v1/locks/refresh", `{"keys":["a.bin"],"x":"="}` + "\r\n"},
		} {
			status, body := sendAs(t, f.srv, "POST", rq.path, f.alice, ct, rq.body, nil)
			if status != http.StatusUnsupportedMediaType || !strings.Contains(body, "Content-Type") {
				t.Errorf("POST %s as %q: %d %s, want 415 naming the content type", rq.path, ct, status, body)
			}
		}
	}
	if !locked(t, f.srv, f.alice, "a.bin") {
		t.Error("a form post unlocked a.bin")
	}
	if locked(t, f.srv, f.alice, "b.bin") {
		t.Error("a form post locked b.bin")
	}
}

// TestWritesRefuseOtherSites: a write whose browser says it comes from
// another site (Sec-Fetch-Site cross-site or same-site), or whose Origin
// is not this server's, is refused (403) whatever its content type; a
// browser's own page (same-origin), a URL typed by its user (none) and a
// client that is no browser (git-lfs, curl: no such header) are served.
func TestWritesRefuseOtherSites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := lockID(t, f.srv, f.alice, "a.bin")
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "http://evil.example"},
		{"Origin": "null"},
		{"Origin": f.srv.URL + ".evil.example"},
		{"Sec-Fetch-Site": "same-origin", "Origin": "http://evil.example"},
	} {
		for _, rq := range []struct{ method, path, body string }{
			{"POST", "/lfs/locks/" + id + "/unlock", `{"force":true}`},
			{"POST", "/lfs/locks", `{"path":"b.bin"}`},
			{"POST", "/api/v1/locks", `{"keys":["b.bin"]}`},
			{"POST", "/api/v1/locks/refresh", `{"keys":["a.bin"]}`},
			{"DELETE", "/api/v1/locks/a.bin", ""},
			{"DELETE", "/api/v1/locks/a.bin?force=true", ""},
		} {
			status, body := sendAs(t, f.srv, rq.method, rq.path, f.alice, "application/json", rq.body, h)
			if status != http.StatusForbidden || !strings.Contains(body, "another site") {
				t.Errorf("%s %s with %v: %d %s, want 403", rq.method, rq.path, h, status, body)
			}
		}
	}
	if !locked(t, f.srv, f.alice, "a.bin") || locked(t, f.srv, f.alice, "b.bin") {
		t.Fatal("a request of another site changed the locks")
	}
	for _, h := range []map[string]string{{"Sec-Fetch-Site": "same-origin", "Origin": f.srv.URL}, {"Sec-Fetch-Site": "none"}, nil} {
		if status, body := sendAs(t, f.srv, "POST", "/api/v1/locks", f.alice, "application/json", `{"keys":["b.bin"]}`, h); status != 200 {
			t.Errorf("acquire with %v: %d %s", h, status, body)
		}
		if status, body := sendAs(t, f.srv, "DELETE", "/api/v1/locks/b.bin", f.alice, "", "", h); status != 200 {
			t.Errorf("release with %v: %d %s", h, status, body)
		}
	}
}

// TestWritesTakeJSON: git-lfs's content type and application/json, with
// parameters and in any case, are JSON; the body is one JSON object and
// nothing else: a field the request does not take, a second value or
// trailing bytes are refused (422 on /lfs, 400 on /api/v1).
func TestWritesTakeJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, ct := range []string{lfsType, lfsType + "; charset=utf-8", "application/json", "application/json; charset=utf-8", "Application/JSON ; charset=UTF-8"} {
		if status, body := sendAs(t, f.srv, "POST", "/lfs/locks/verify", f.alice, ct, `{}`, nil); status != 200 {
			t.Errorf("verify as %q: %d %s", ct, status, body)
		}
	}
	for _, ct := range []string{"application/json+evil", "application/jsonp", "text/json", "application/x-json", "json", "application/json; charset", "*/*"} {
		if status, body := sendAs(t, f.srv, "POST", "/lfs/locks/verify", f.alice, ct, `{}`, nil); status != http.StatusUnsupportedMediaType {
			t.Errorf("verify as %q: %d %s, want 415", ct, status, body)
		}
	}
	for _, rq := range []struct {
		path, body string
		status     int
	}{
		{"/lfs/locks", `{"path":"a.bin","x":1}`, 422},
		{"/lfs/locks", `{"path":"a.bin"}{"path":"b.bin"}`, 422},
		{"/lfs/locks", `{"path":"a.bin"} x`, 422},
		{"/lfs/locks", `{"path":"a.bin","ref":{"name":"refs/heads/main","x":1}}`, 422},
		{"/lfs/locks", `null`, 422},
		{"/lfs/locks", `"a.bin"`, 422},
		{"/lfs/locks", ``, 422},
		{"/lfs/locks/verify", `{"limit":1} `, 200},
		{"/api/v1/locks", `{"keys":["a.bin"],"owner":"bob"}`, 400},
		{"/api/v1/locks", `{"keys":["a.bin"]}[]`, 400},
		{"/api/v1/locks/refresh", `{"keys":["a.bin"]}` + "\r\n{}", 400},
	} {
		if status, body := sendAs(t, f.srv, "POST", rq.path, f.alice, "application/json", rq.body, nil); status != rq.status {
			t.Errorf("POST %s %q: %d %s, want %d", rq.path, rq.body, status, body, rq.status)
		}
	}
	if locked(t, f.srv, f.alice, "a.bin") || locked(t, f.srv, f.alice, "b.bin") {
		t.Fatal("a body refused took a lock")
	}
}
