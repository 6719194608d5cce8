package httpserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/serveusers"
)

// logFixture is a server whose log lines are kept, with user alice.
type logFixture struct {
	srv   *httptest.Server
	alice string
	mu    sync.Mutex
	lines []string
}

func newLogFixture(t *testing.T) *logFixture {
	t.Helper()
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
	added, err := e.Users().Add(serveusers.AddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	f := &logFixture{alice: added.Token}
	f.srv = startServer(t, e, Options{Log: func(format string, args ...any) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.lines = append(f.lines, fmt.Sprintf(format, args...))
	}})
	return f
}

// logged is every line logged so far.
func (f *logFixture) logged() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.lines...)
}

// rawRequest sends request line and headers as written, for what
// net/http's client would not send (a target it would escape), and
// returns the status line.
func rawRequest(t *testing.T, addr, head string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprint(conn, head); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to %q: %v", head, err)
	}
	return strings.TrimSpace(status)
}

// TestRequestLogInjection: a path whose escapes decode to a newline, a
// quote or spaces cannot forge a log line or a field of one: each request
// is one line, and what a client chose is quoted.
func TestRequestLogInjection(t *testing.T) {
	t.Parallel()
	f := newLogFixture(t)
	addr := strings.TrimPrefix(f.srv.URL, "http://")
	forged := "POST /api/v1/locks 200 user=op"
	targets := []string{
		"/x%0A" + strings.ReplaceAll(forged, " ", "%20"),
		"/x%0D%0A" + strings.ReplaceAll(forged, " ", "%20"),
		"/x%20200%20user=op%20",
		`/x%22%20200%20user=op`,
		"/x%E2%80%AEevil",
	}
	for _, target := range targets {
		status := rawRequest(t, addr, "GET "+target+" HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close\r\n\r\n")
		if !strings.HasPrefix(status, "HTTP/1.1 4") {
			t.Errorf("GET %s: %s, want a client's error", target, status)
		}
	}
	lines := f.logged()
	if len(lines) != len(targets) {
		t.Fatalf("%d log lines for %d requests: %q", len(lines), len(targets), lines)
	}
	// Each line is the method, the path as one quoted field, then the
	// server's own fields: nothing of the path spills past its quotes.
	tail := regexp.MustCompile(`^ 4\d\d user=- \S+ request=[0-9a-f]{16}$`)
	for i, l := range lines {
		if strings.ContainsAny(l, "\r\n\u202e") {
			t.Errorf("a log line holds a line break or a control character: %q", l)
		}
		rest, ok := strings.CutPrefix(l, "GET ")
		q, err := strconv.QuotedPrefix(rest)
		if !ok || err != nil {
			t.Errorf("line %q: want the method, then the path quoted", l)
			continue
		}
		want, _ := url.PathUnescape(targets[i])
		if p, _ := strconv.Unquote(q); p != want {
			t.Errorf("line %q names the path %q, want %q", l, p, want)
		}
		if !tail.MatchString(rest[len(q):]) {
			t.Errorf("line %q: a client forged a field after the path", l)
		}
	}
}
