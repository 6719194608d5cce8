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
