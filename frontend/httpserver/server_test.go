package httpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/serveusers"
)

// fixture is a server on a fresh repository with users alice and bob,
// people, the admin root, and the agent admin bot.
type fixture struct {
	e                     *service.Workspace
	srv                   *httptest.Server
	alice, bob, root, bot string // tokens
	publicServer          *httptest.Server
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("a.bin", "a\n")
	r.Write("work-packages.yaml", "packages:\n  - id: WP-1\n    title: one\n    locks: {files: [a.bin]}\n")
	r.Commit("init")
	e, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "server", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.Open(ctx, service.Purpose{TakesLocks: true, Server: true}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{e: e, srv: startServer(t, e, Options{}), publicServer: startServer(t, e, Options{PublicRead: true})}
	for _, u := range []struct {
		name string
		tok  *string
		req  serveusers.AddRequest
	}{{"alice", &f.alice, serveusers.AddRequest{}}, {"bob", &f.bob, serveusers.AddRequest{}},
		{"root", &f.root, serveusers.AddRequest{Admin: true}}, {"bot", &f.bot, serveusers.AddRequest{Type: "agent", Admin: true}}} {
		u.req.Name = u.name
		res, err := e.Users().Add(u.req)
		if err != nil {
			t.Fatal(err)
		}
		*u.tok = res.Token
	}
	return f
}

// startServer serves e with opts on a test server of its own, closed
// when the test ends.
func startServer(t testing.TB, e *service.Workspace, opts Options) *httptest.Server {
	t.Helper()
	srv, _ := startServerOf(t, e, opts)
	return srv
}

// startServerOf is startServer, and the Server: one that knows the
// address it listens on (Options.Addr), as Serve tells it, so that it
// answers requests for that host.
func startServerOf(t testing.TB, e *service.Workspace, opts Options) (*httptest.Server, *Server) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	opts.Addr = srv.Listener.Addr().String()
	s := New(e, opts)
	srv.Config.Handler = s.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, s
}

// do sends one request and returns its status, headers and decoded body.
func do(t *testing.T, srv *httptest.Server, method, path, user, token, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case user != "":
		req.SetBasicAuth(user, token)
	case token != "":
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", lfsType)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: the body is not JSON: %v", method, path, err)
	}
	if ct := res.Header.Get("Content-Type"); ct != lfsType {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return res.StatusCode, res.Header, out
}

func TestLFSAPI(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, method, path, user, token, body string
		srv                                   *httptest.Server
		status                                int
		has                                   string // in the message or the body
	}{
		{name: "no token", method: "GET", path: "/lfs/locks", status: 401},
		{name: "wrong token", method: "GET", path: "/lfs/locks", user: "alice", token: "lgs_00_x", status: 401},
		{name: "bob's token as alice", method: "POST", path: "/lfs/locks", user: "alice", token: f.bob, body: `{"path":"a.bin"}`, status: 401},
		{name: "public read", srv: f.publicServer, method: "GET", path: "/lfs/locks", status: 200},
		{name: "public read, no write", srv: f.publicServer, method: "POST", path: "/lfs/locks", body: `{"path":"a.bin"}`, status: 401},
		{name: "lock", method: "POST", path: "/lfs/locks", user: "alice", token: f.alice, body: `{"path":"a.bin","ref":{"name":"refs/heads/main"}}`, status: 201, has: "alice"},
		{name: "held", method: "POST", path: "/lfs/locks", token: f.bob, body: `{"path":"a.bin"}`, status: 409, has: "alice"},
		{name: "outside the repository", method: "POST", path: "/lfs/locks", token: f.bob, body: `{"path":"../../etc/passwd"}`, status: 422},
		{name: "not JSON", method: "POST", path: "/lfs/locks", token: f.bob, body: `{"path":`, status: 422},
		{name: "too big", method: "POST", path: "/lfs/locks", token: f.bob, body: `{"path":"` + strings.Repeat("a", maxBody) + `"}`, status: 413},
		{name: "bad limit", method: "GET", path: "/lfs/locks?limit=x", token: f.bob, status: 422},
		{name: "verify", method: "POST", path: "/lfs/locks/verify", token: f.bob, body: `{}`, status: 200, has: "theirs"},
		{name: "unlock unknown", method: "POST", path: "/lfs/locks/00/unlock", token: f.bob, body: `{}`, status: 404},
		{name: "unlock no id", method: "POST", path: "/lfs/locks/%21%21%2E" + strings.Repeat("z", 32) + "/unlock", token: f.bob, body: `{"force":true}`, status: 404},
		{name: "unlock a key's id of no lock", method: "POST", path: "/lfs/locks/Yi5iaW4." + strings.Repeat("0", 32) + "/unlock", token: f.bob, body: `{"force":true}`, status: 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.srv
			if srv == nil {
				srv = f.srv
			}
			status, h, body := do(t, srv, tc.method, tc.path, tc.user, tc.token, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %v", status, tc.status, body)
			}
			if status >= 400 {
				if body["message"] == "" || body["request_id"] == "" {
					t.Errorf("error body %v lacks message or request_id", body)
				}
			}
			if status == 401 && h.Get("LFS-Authenticate") != `Basic realm="lockgate"` {
				t.Errorf("LFS-Authenticate %q", h.Get("LFS-Authenticate"))
			}
			if raw, _ := json.Marshal(body); tc.has != "" && !strings.Contains(string(raw), tc.has) {
				t.Errorf("body %s lacks %q", raw, tc.has)
			}
		})
	}

	// The held answer carries the lock in the way, with the id to unlock it by.
	_, _, held := do(t, f.srv, "POST", "/lfs/locks", "", f.bob, `{"path":"a.bin"}`)
	id := held["lock"].(map[string]any)["id"].(string)
	if status, _, body := do(t, f.srv, "POST", "/lfs/locks/"+id+"/unlock", "", f.bob, `{}`); status != 403 {
		t.Fatalf("bob's unlock of alice's lock: %d %v", status, body)
	}
	if status, _, body := do(t, f.srv, "POST", "/lfs/locks/"+id+"/unlock", "", f.alice, `{}`); status != 200 || body["lock"].(map[string]any)["path"] != "a.bin" {
		t.Fatalf("alice's unlock: %d %v", status, body)
	}
	if _, _, body := do(t, f.srv, "GET", "/lfs/locks", "", f.alice, ""); len(body["locks"].([]any)) != 0 {
		t.Fatalf("locks left: %v", body)
	}
}

func TestHealthz(t *testing.T) {
	f := newFixture(t)
	res, err := f.srv.Client().Get(f.srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("/healthz: %s", res.Status)
	}
}
