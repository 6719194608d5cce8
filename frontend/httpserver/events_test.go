package httpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
)

// sseEvent is one server-sent event as read off the stream.
type sseEvent struct {
	id, event string
	data      map[string]any
}

// readEvent reads the stream's next event, skipping comments; it fails
// the test after a minute.
func readEvent(t *testing.T, lines <-chan string) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended")
			}
			switch {
			case line == "" && ev.data != nil:
				return ev
			case strings.HasPrefix(line, "id: "):
				ev.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
					t.Fatalf("data %q: %v", line, err)
				}
			}
		case <-time.After(time.Minute):
			t.Fatal("no event in a minute")
		}
	}
}

// openStream opens GET path with headers as user and returns its lines.
func openStream(t *testing.T, url, user, token string, headers map[string]string) (*http.Response, <-chan string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(user, token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return res, lines
}

// TestEventsStream: with Accept: text/event-stream the events are the
// query's backlog, then each new event the query keeps, as it is
// recorded, each in the log's JSON with its id; Last-Event-ID resumes
// after it; ?stream=true asks the same; until is refused.
func TestEventsStream(t *testing.T) {
	t.Parallel()
	srv, tokens := storeServer(t, "file", 2, Options{}, nil)
	if status, body, err := send(srv, "POST", "/api/v1/locks", "u0", tokens[0], `{"keys":["a.bin"]}`); err != nil || status != http.StatusOK {
		t.Fatalf("acquire: %d %v %s", status, err, body)
	}
	res, lines := openStream(t, srv.URL+"/api/v1/events?since=1h", "u1", tokens[1], map[string]string{"Accept": "text/event-stream"})
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	first := readEvent(t, lines)
	if first.data["action"] != "lock_acquire" || first.data["key"] != "a.bin" || first.data["worker"] != "u0" || first.id != first.data["id"] || first.event != "" {
		t.Fatalf("the backlog's event: %+v", first)
	}
	for _, req := range [][3]string{
		{"POST", "/api/v1/locks/refresh", `{"keys":["a.bin"],"ttl":"2h"}`},
		{"DELETE", "/api/v1/locks/a.bin", ""},
	} {
		if status, body, err := send(srv, req[0], req[1], "u0", tokens[0], req[2]); err != nil || status != http.StatusOK {
			t.Fatalf("%s %s: %d %v %s", req[0], req[1], status, err, body)
		}
	}
	for _, want := range []string{"lock_refresh", "lock_release"} {
		ev := readEvent(t, lines)
		if ev.data["action"] != want || ev.data["key"] != "a.bin" || ev.data["fence"] != 1.0 {
			t.Fatalf("want %s: %+v", want, ev)
		}
	}

	// Resuming after the first event, filtered by action.
	_, lines = openStream(t, srv.URL+"/api/v1/events?stream=true&key=a.bin", "u1", tokens[1], map[string]string{"Last-Event-ID": first.id})
	if ev := readEvent(t, lines); ev.data["action"] != "lock_refresh" {
		t.Fatalf("resumed after %s: %+v", first.id, ev)
	}
	_, lines = openStream(t, srv.URL+"/api/v1/events?stream=1&action=lock_acquire&worker=u1", "u1", tokens[1], nil)
	if status, body, err := send(srv, "POST", "/api/v1/locks", "u1", tokens[1], `{"keys":["b.bin"]}`); err != nil || status != http.StatusOK {
		t.Fatalf("acquire: %d %v %s", status, err, body)
	}
	if ev := readEvent(t, lines); ev.data["key"] != "b.bin" || ev.data["worker"] != "u1" {
		t.Fatalf("filtered stream: %+v", ev)
	}

	for _, q := range []string{"?stream=true&until=2026-01-01T00:00:00Z", "?stream=maybe"} {
		status, body, err := send(srv, "GET", "/api/v1/events"+q, "u1", tokens[1], "")
		if err != nil || status != http.StatusBadRequest || !strings.Contains(string(body), `"class":"invalid_argument"`) {
			t.Errorf("%s: %d %v %s", q, status, err, body)
		}
	}
	// The plain form stays a JSON list.
	status, body, err := send(srv, "GET", "/api/v1/events?action=lock_release", "u1", tokens[1], "")
	if err != nil || status != http.StatusOK || !strings.HasPrefix(string(body), "[{") || strings.Count(string(body), `"action"`) != 1 {
		t.Errorf("plain events: %d %v %s", status, err, body)
	}
}

// TestRefresh: POST /api/v1/locks/refresh extends the user's own locks as
// `lock refresh --json` does, and refuses another's.
func TestRefresh(t *testing.T) {
	t.Parallel()
	srv, tokens := storeServer(t, "file", 2, Options{}, nil)
	if status, body, err := send(srv, "POST", "/api/v1/locks", "u0", tokens[0], `{"keys":["a.bin"],"ttl":"10m"}`); err != nil || status != http.StatusOK {
		t.Fatalf("acquire: %d %v %s", status, err, body)
	}
	status, body, err := send(srv, "POST", "/api/v1/locks/refresh", "u0", tokens[0], `{"keys":["a.bin"],"ttl":"3h"}`)
	var got []struct {
		Key       string    `json:"key"`
		Holder    string    `json:"holder"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err != nil || status != http.StatusOK || json.Unmarshal(body, &got) != nil || len(got) != 1 || got[0].Key != "a.bin" ||
		time.Until(got[0].ExpiresAt) < 2*time.Hour {
		t.Fatalf("refresh: %d %v %s", status, err, body)
	}
	for _, tt := range []struct{ user, body, class string }{
		{"u1", `{"keys":["a.bin"]}`, `"class":"not_owner"`},
		{"u0", `{"keys":[]}`, `"class":"invalid_argument"`},
		{"u0", `{"keys":["a.bin"],"ttl":"soon"}`, `"class":"invalid_argument"`},
	} {
		token := tokens[0]
		if tt.user == "u1" {
			token = tokens[1]
		}
		status, body, err := send(srv, "POST", "/api/v1/locks/refresh", tt.user, token, tt.body)
		if err != nil || status < 400 || !strings.Contains(string(body), tt.class) {
			t.Errorf("%s %s: %d %v %s", tt.user, tt.body, status, err, body)
		}
	}
}

// An open events stream does not hold the server's stop.
func TestEventsStreamEndsOnStop(t *testing.T) {
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
	res, err := http.Get("http://" + ln.Addr().String() + "/api/v1/events?stream=true")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
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
