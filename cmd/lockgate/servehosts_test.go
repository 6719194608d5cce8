package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeAnswersOnlyItsHosts: `lockgate serve --public-read` answers a
// request naming the host evil.example (a page under a name rebound to
// the server's address) 421, board and API alike, /healthz apart; the
// listen address and the loopback names are answered, and so is the
// host of each --public-url. A --public-url that is no http(s) URL of a
// host is a usage error.
func TestServeAnswersOnlyItsHosts(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.repo.Write("src/a.go", "package a\n")
	if code, out := c.run("admin", "init"); code != 0 {
		t.Fatalf("lockgate init: exit %d: %s", code, out)
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-qm", "init")
	if code, out := c.run("alice", "lock", "acquire", "src/a.go"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	get := func(addr, host, path string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		res, err := http.DefaultClient.Do(req)
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

	addr, logged := startServeLogged(t, c, "--public-read", "--public-url", "https://locks.example.com")
	_, port, _ := strings.Cut(addr, ":")
	for _, host := range []string{"evil.example", "evil.example:" + port} {
		for _, path := range []string{"/", "/board.json", "/api/v1/locks", "/lfs/locks"} {
			if status, body := get(addr, host, path); status != http.StatusMisdirectedRequest || strings.Contains(body, "src/a.go") {
				t.Errorf("GET %s for host %s: %d %s, want 421", path, host, status, body)
			}
		}
		if status, _ := get(addr, host, "/healthz"); status != 200 {
			t.Errorf("GET /healthz for host %s: %d", host, status)
		}
	}
	for _, host := range []string{addr, "localhost:" + port, "locks.example.com"} {
		if status, body := get(addr, host, "/api/v1/locks"); status != 200 || !strings.Contains(body, "src/a.go") {
			t.Errorf("GET /api/v1/locks for host %s: %d %s", host, status, body)
		}
	}
	if all := strings.Join(logged(), "\n"); !strings.Contains(all, "answering to the hosts 127.0.0.1:"+port+", localhost:"+port) || !strings.Contains(all, "locks.example.com") {
		t.Errorf("the server does not say which hosts it answers to:\n%s", all)
	}

	for _, u := range []string{"ftp://locks", "http://user:pw@locks", "http://locks/lfs", "locks.example.com"} {
		if code, out := c.run("server", "serve", "--listen", "127.0.0.1:0", "--public-url", u); code != 2 || !strings.Contains(out, "--public-url") {
			t.Errorf("serve --public-url %s: exit %d, want 2:\n%s", u, code, out)
		}
	}
}
