package httpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzDecode feeds hostile bodies to the decoder of every request body
// the git-lfs API takes: each is decoded or refused, never a panic, and a
// refusal is one fail answers as a client's error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"path":"a.bin","ref":{"name":"refs/heads/main"}}`, `{"cursor":"1","limit":2}`, `{"force":true}`, ``, `{`, `[]`, `{"path":1}`, `{"limit":-1e400}`, strings.Repeat("[", 10000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for _, v := range []any{&createBody{}, &verifyBody{}, &unlockBody{}} {
			r := httptest.NewRequest("POST", "/lfs/locks", strings.NewReader(body))
			err := decode(r, v)
			if err == nil {
				continue
			}
			w := httptest.NewRecorder()
			(&Server{opts: Options{Log: func(string, ...any) {}}}).fail(w, r, "rid", err)
			if w.Code != 413 && w.Code != 422 {
				t.Fatalf("decode(%q) = %v, answered %d; want a client's error", body, err, w.Code)
			}
		}
	})
}

// FuzzAPIDecode feeds hostile bodies to POST /api/v1/locks's decoder and
// its durations: each is decoded or refused as a client's error (400 or
// 413, with the error object), never a panic.
func FuzzAPIDecode(f *testing.F) {
	for _, s := range []string{`{"keys":["a.bin"],"ttl":"2h","reason":"r","wait":"5s"}`, `{"keys":[]}`, `{"ttl":"-1h"}`, `{"wait":"9999999999999999d"}`, ``, `{`, `{"keys":"a"}`, strings.Repeat("[", 10000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/api/v1/locks", strings.NewReader(body))
		var b acquireBody
		err := decode(r, &b)
		if err == nil {
			if _, err = durationOf("ttl", b.TTL); err == nil {
				_, err = durationOf("wait", b.Wait)
			}
		}
		refuse(t, r, body, err)
		// The same body as a refresh.
		r = httptest.NewRequest("POST", "/api/v1/locks/refresh", strings.NewReader(body))
		var rb refreshBody
		if err = decode(r, &rb); err == nil {
			_, err = durationOf("ttl", rb.TTL)
		}
		refuse(t, r, body, err)
	})
}

// refuse checks that err, when there is one, is answered as a client's
// error (400 or 413) with the error object.
func refuse(t *testing.T, r *http.Request, input string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	w := httptest.NewRecorder()
	(&Server{opts: Options{Log: func(string, ...any) {}}}).apiFail(w, r, err)
	if w.Code != 400 && w.Code != 413 {
		t.Fatalf("%q: %v, answered %d; want a client's error", input, err, w.Code)
	}
	if !strings.Contains(w.Body.String(), `"error":{`) {
		t.Fatalf("%q: answered %s, not the error object", input, w.Body)
	}
}

// FuzzEventsQuery feeds hostile queries and Accept headers to GET
// /api/v1/events's parsers: each is a stream or not, its filters read or
// refused as a client's error, never a panic.
func FuzzEventsQuery(f *testing.F) {
	for _, s := range [][2]string{{"since=1h&key=a.bin", "text/event-stream"}, {"stream=true&until=2026-01-01T00:00:00Z", ""},
		{"stream=maybe", "text/html, text/event-stream;q=0.9"}, {"since=-1h&limit=-1", "*/*"}, {"limit=99999999999999999999", ",,;"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, query, accept string) {
		r := httptest.NewRequest("GET", "/api/v1/events", nil)
		r.URL.RawQuery = query
		r.Header.Set("Accept", accept)
		_, err := wantsStream(r)
		if err == nil {
			_, err = logRequestOf(r)
		}
		refuse(t, r, query, err)
	})
}

// FuzzPublicURL feeds hostile --public-url values to its parser: each is
// refused or is an http(s) URL of a host, never a panic; a server given
// one answers to its host at its port, and the origin of its pages.
func FuzzPublicURL(f *testing.F) {
	for _, s := range []string{"https://locks.example.com", "http://[::1]:7480/", "HTTP://X:80", "http://a@b", "http://x/y", "http://%zz", "http://[::1%25eth0]:1",
		"http://x:65536", "https://xn--bcher-kva.example", "http:///x", "http://1.2.3.4:080"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		u, err := ParsePublicURL(in)
		if err != nil {
			return
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Host != strings.ToLower(u.Host) {
			t.Fatalf("ParsePublicURL(%q) = %+v", in, u)
		}
		s := &Server{}
		s.opts.PublicURLs = []PublicURL{u}
		s.knowHosts()
		h := hostPort{host: u.Host, port: u.Port}
		if h.port == "" {
			h.port = defaultPort(u.Scheme)
		}
		if !s.ownHost(h.String()) {
			t.Fatalf("a server of %q does not answer to %q (it answers to %v)", in, h.String(), s.Hosts())
		}
		if !s.ownOrigin(u.Scheme + "://" + h.String()) {
			t.Fatalf("a server of %q does not take the origin %s://%s", in, u.Scheme, h.String())
		}
	})
}
