package httpserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
)

// The web board at "/" is a read: a token (Basic or Bearer) or
// --public-read; a browser without one is asked for it.
func TestPageAuth(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	get := func(base, path, user, token string) (int, http.Header, string) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.SetBasicAuth(user, token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(body)
	}
	tests := []struct {
		name, path, user, token string
		public                  bool
		status                  int
		body                    string
	}{
		{name: "no token", path: "/", status: 401, body: "a token is needed"},
		// The JSON routes refuse with the JSON API's error object.
		{name: "wrong token", path: "/board.json", user: "alice", token: "lgs_x_y", status: 401, body: `{"error":{"code":6,"class":"unauthorized"`},
		{name: "session, no token", path: "/board/session", status: 401, body: `{"error":{"code":6,"class":"unauthorized"`},
		{name: "stream, no token", path: "/board/stream", status: 401, body: `"class":"unauthorized"`},
		{name: "the page", path: "/", user: "alice", token: f.alice, status: 200, body: "<html"},
		{name: "the snapshot", path: "/board.json", user: "bob", token: f.bob, status: 200, body: `"locks"`},
		{name: "public read", path: "/board.json", public: true, status: 200, body: `"locks"`},
		{name: "public page", path: "/", public: true, status: 200, body: "<html"},
	}
	for _, tt := range tests {
		base := f.srv.URL
		if tt.public {
			base = f.publicServer.URL
		}
		status, h, body := get(base, tt.path, tt.user, tt.token)
		if status != tt.status || !strings.Contains(body, tt.body) {
			t.Errorf("%s: GET %s = %d %q, want %d with %q", tt.name, tt.path, status, body, tt.status, tt.body)
		}
		if status == 401 && h.Get("WWW-Authenticate") != `Basic realm="lockgate"` {
			t.Errorf("%s: WWW-Authenticate %q, want a Basic challenge", tt.name, h.Get("WWW-Authenticate"))
		}
	}
}

// An open board stream does not hold the server's stop: Serve returns
// long before its drain deadline.
func TestPageStreamEndsOnStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("a.bin", "a\n")
	r.Commit("init")
	e, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "server", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.Open(ctx, service.Purpose{TakesLocks: true, Server: true}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- New(e, Options{PublicRead: true}).Serve(sctx, ln, time.Minute) }()
	res, err := http.Get("http://" + ln.Addr().String() + "/board/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 64)
	if _, err := res.Body.Read(buf); err != nil { // the first snapshot: the stream is open
		t.Fatal(err)
	}
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second): // the drain deadline is a minute
		t.Fatal("Serve still waits for the open stream")
	}
}
