package httpserver

import (
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
		if err == nil {
			return
		}
		w := httptest.NewRecorder()
		(&Server{opts: Options{Log: func(string, ...any) {}}}).apiFail(w, r, err)
		if w.Code != 400 && w.Code != 413 {
			t.Fatalf("body %q: %v, answered %d; want a client's error", body, err, w.Code)
		}
		if !strings.Contains(w.Body.String(), `"error":{`) {
			t.Fatalf("body %q: answered %s, not the error object", body, w.Body)
		}
	})
}
