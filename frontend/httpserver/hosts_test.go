package httpserver

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// hostDo sends one request naming host in its Host header, with a bearer
// token when given and the headers given, and returns its status, its
// content type and its body.
func hostDo(t *testing.T, srv *httptest.Server, method, path, host, token, body string, headers map[string]string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
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
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// TestHostCheck: a request whose Host header names no host the server
// answers to (a page under a name rebound to the server's address sends
// that name) is 421 on every route but /healthz, in the route's own
// error form, before any token is looked at; the listen address and the
// loopback names at its port are answered.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(f.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(port)
	other := strconv.Itoa(n + 1)
	for _, host := range []string{"evil.example", "evil.example:" + port, "127.0.0.1:" + other, "localhost", "127.0.0.1.evil.example:" + port, "[::1]:" + other} {
		for _, rq := range []struct{ method, path, body, want string }{
			{"GET", "/", "", "text/plain"},
			{"GET", "/board.json", "", apiType},
			{"GET", "/board/session", "", apiType},
			{"GET", "/api/v1/locks", "", apiType},
			{"GET", "/api/v1/events", "", apiType},
			{"POST", "/api/v1/locks", `{"keys":["b.bin"]}`, apiType},
			{"GET", "/lfs/locks", "", lfsType},
			{"POST", "/lfs/locks", `{"path":"b.bin"}`, lfsType},
		} {
			status, ct, body := hostDo(t, f.srv, rq.method, rq.path, host, f.alice, rq.body, nil)
			if status != http.StatusMisdirectedRequest || !strings.HasPrefix(ct, rq.want) || !strings.Contains(body, "--public-url") {
				t.Errorf("%s %s for host %q: %d %s %s, want 421 as %s", rq.method, rq.path, host, status, ct, body, rq.want)
			}
			if rq.want == apiType && !strings.Contains(body, `"class":"misdirected"`) {
				t.Errorf("%s %s for host %q: %s, want class misdirected", rq.method, rq.path, host, body)
			}
		}
		if status, _, body := hostDo(t, f.srv, "GET", "/healthz", host, "", "", nil); status != 200 {
			t.Errorf("GET /healthz for host %q: %d %s", host, status, body)
		}
	}
	if locked(t, f.srv, f.alice, "b.bin") {
		t.Fatal("a misdirected request took a lock")
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "[::1]:" + port} {
		if status, _, body := hostDo(t, f.srv, "GET", "/api/v1/locks", host, f.alice, "", nil); status != 200 {
			t.Errorf("GET /api/v1/locks for host %q: %d %s", host, status, body)
		}
	}
}

// TestPublicURLs: the hosts of the public URLs are answered too, at
// their port (the scheme's when a Host header names none); a write's
// Origin must be one of the server's hosts, not merely the request's
// Host; and under --public-read a rebound name reads nothing.
func TestPublicURLs(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var public []PublicURL
	for _, s := range []string{"https://Locks.Example.com", "http://10.0.0.5:8080/"} {
		u, err := ParsePublicURL(s)
		if err != nil {
			t.Fatalf("ParsePublicURL(%q): %v", s, err)
		}
		public = append(public, u)
	}
	srv := startServer(t, f.e, Options{PublicURLs: public})
	for host, want := range map[string]int{"locks.example.com": 200, "LOCKS.example.COM": 200, "locks.example.com:443": 200, "locks.example.com:80": 421,
		"10.0.0.5:8080": 200, "10.0.0.5": 421, "example.com": 421} {
		if status, _, body := hostDo(t, srv, "GET", "/api/v1/locks", host, f.alice, "", nil); status != want {
			t.Errorf("GET /api/v1/locks for host %q: %d %s, want %d", host, status, body, want)
		}
	}
	// Writes: the Origin names one of the server's hosts.
	for origin, want := range map[string]int{"https://locks.example.com": 200, "https://locks.example.com:443": 200, "http://locks.example.com": 403,
		"https://locks.example.com:8443": 403, "http://10.0.0.5:8080": 200, "http://evil.example": 403, "https://locks.example.com.evil.example": 403} {
		status, _, body := hostDo(t, srv, "POST", "/api/v1/locks/refresh", "locks.example.com", f.alice, `{"keys":["a.bin"]}`, map[string]string{"Origin": origin})
		if status == 409 || status == 200 {
			status = 200 // past the origin check: a.bin is not alice's to refresh, which is no matter here
		}
		if status != want {
			t.Errorf("a write from %s: %d %s, want %d", origin, status, body, want)
		}
	}
	// The board's clear, from the page under the public URL.
	if status, _, body := hostDo(t, srv, "POST", "/api/v1/locks", "locks.example.com", f.alice, `{"keys":["a.bin"]}`, nil); status != 200 {
		t.Fatalf("acquire: %d %s", status, body)
	}
	status, _, body := hostDo(t, srv, "GET", "/board/session", "locks.example.com", f.root, "", nil)
	var session struct{ CSRF string }
	if status != 200 || json.Unmarshal([]byte(body), &session) != nil {
		t.Fatalf("GET /board/session: %d %s", status, body)
	}
	clear := func(origin string) int {
		status, _, _ := hostDo(t, srv, "POST", "/board/clear", "locks.example.com", f.root, `{"key":"a.bin"}`, map[string]string{"Origin": origin, csrfHeader: session.CSRF})
		return status
	}
	if got := clear("http://evil.example"); got != 403 {
		t.Errorf("a clear from another origin: %d, want 403", got)
	}
	if got := clear("https://locks.example.com"); got != 200 {
		t.Errorf("a clear from the board under the public URL: %d, want 200", got)
	}

	// Under --public-read, a page under a rebound name reads nothing.
	public1 := startServer(t, f.e, Options{PublicRead: true, PublicURLs: public})
	for _, path := range []string{"/board.json", "/api/v1/locks", "/lfs/locks"} {
		if status, _, body := hostDo(t, public1, "GET", path, "evil.example", "", "", nil); status != http.StatusMisdirectedRequest {
			t.Errorf("a public read of %s for a rebound name: %d %s, want 421", path, status, body)
		}
		if status, _, body := hostDo(t, public1, "GET", path, "locks.example.com", "", "", nil); status != 200 {
			t.Errorf("a public read of %s for the public URL: %d %s", path, status, body)
		}
	}
}

func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr       string
		want, not  []string
		publicURLs []PublicURL
	}{
		{addr: "127.0.0.1:7480", want: []string{"127.0.0.1:7480", "localhost:7480", "[::1]:7480"}, not: []string{"127.0.0.1", "0.0.0.0:7480"}},
		{addr: "[::1]:7480", want: []string{"[::1]:7480", "localhost:7480", "127.0.0.1:7480"}},
		{addr: "0.0.0.0:7480", want: []string{"0.0.0.0:7480", "localhost:7480", "127.0.0.1:7480"}, not: []string{"10.0.0.5:7480"}},
		{addr: "[::]:7480", want: []string{"0.0.0.0:7480", "[::]:7480", "localhost:7480", "[::1]:7480"}},
		{addr: "10.0.0.5:80", want: []string{"10.0.0.5:80", "10.0.0.5"}, not: []string{"localhost:80", "localhost"}},
		{addr: "10.0.0.5:7480", publicURLs: []PublicURL{{Scheme: "http", Host: "locks"}, {Scheme: "https", Host: "::2", Port: "8443"}},
			want: []string{"10.0.0.5:7480", "locks", "locks:80", "[::2]:8443"}, not: []string{"locks:443", "[::2]"}},
	} {
		var got []string
		for _, h := range allowedHosts(serverOrigins(tc.addr, tc.publicURLs)) {
			got = append(got, h.String())
		}
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s %v: hosts %v lack %s", tc.addr, tc.publicURLs, got, w)
			}
		}
		for _, n := range tc.not {
			if slices.Contains(got, n) {
				t.Errorf("%s %v: hosts %v hold %s", tc.addr, tc.publicURLs, got, n)
			}
		}
	}
}

func TestParsePublicURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]PublicURL{
		"https://locks.example.com":      {Scheme: "https", Host: "locks.example.com"},
		"HTTP://Locks.Example.com:8080/": {Scheme: "http", Host: "locks.example.com", Port: "8080"},
		"http://[::1]:7480":              {Scheme: "http", Host: "::1", Port: "7480"},
		"http://10.0.0.5":                {Scheme: "http", Host: "10.0.0.5"},
	} {
		if got, err := ParsePublicURL(in); err != nil || got != want {
			t.Errorf("ParsePublicURL(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "locks.example.com", "ftp://locks", "http://", "http://:80", "http://user:pw@locks", "http://locks/lfs", "http://locks?x=1",
		"http://locks#x", "http://locks:0", "http://locks:99999", "http://locks:x", "mailto:a@b", "http://lo cks", "//locks"} {
		if got, err := ParsePublicURL(in); err == nil {
			t.Errorf("ParsePublicURL(%q) = %+v, want an error", in, got)
		}
	}
}
