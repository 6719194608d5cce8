package webboard

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

// xss is a reason a worker may write that must reach the page as text.
const xss = `<img src=x onerror=alert(1)>`

// fakeSource hands out one snapshot (or err) and counts the reads.
type fakeSource struct {
	mu    sync.Mutex
	view  service.BoardView
	err   error
	reads int
	// read, when set, is sent every read (without blocking).
	read chan struct{}
}

func (f *fakeSource) Snapshot(ctx context.Context) (service.BoardView, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if f.read != nil {
		select {
		case f.read <- struct{}{}:
		default:
		}
	}
	return f.view, f.err
}

// snapshot is a board as of now: three live locks (bob's with a hostile
// reason, carol's stale, and a corrupt record), an expired lock and a
// finished package's record (both left out), a pause, a small queue and
// two events.
func snapshot(now time.Time) service.BoardView {
	lock := func(key, holder, reason string, age, left time.Duration) locks.Entry {
		return locks.Entry{Lock: locks.Lock{Key: key, Holder: holder, HolderType: "agent", Session: "s-" + holder,
			CreatedAt: now.Add(-age), ExpiresAt: now.Add(left), Reason: reason}}
	}
	done := lock("task:wp-0", "dave", "", time.Hour, 100*365*24*time.Hour)
	done.Action = session.DoneAction
	return service.BoardView{
		Store:      "the file store",
		Now:        now,
		StaleAfter: time.Hour,
		Locks: []locks.Entry{
			lock("src/api/**", "bob", xss, time.Minute, 10*time.Minute),
			lock("db:migrations", "carol", "schema change", 2*time.Hour, 5*time.Minute),
			{Name: "broken.json", Err: errors.New("parse the record: unexpected end of JSON input")},
			lock("docs/old.md", "erin", "long gone", 2*time.Hour, -time.Minute),
			lock("feature:checkout:pause", "alice", "release freeze", time.Minute, 30*time.Minute),
			done,
		},
		Events: []service.EventView{
			{Timestamp: now.Add(-time.Minute), Worker: "bob", Action: "acquire", Key: "src/api/**"},
			{Timestamp: now.Add(-30 * time.Second), Worker: "carol", Action: "refresh", Key: "db:migrations"},
		},
		QueueFile: "workpackages.yml",
		Queue: &queue.Queue{Path: "workpackages.yml",
			Packages: []queue.PackageStatus{
				{ID: "wp-1", Title: "the API", State: queue.PackageClaimed, Priority: 2, Holder: "bob"},
				{ID: "wp-2", Title: "the docs", State: queue.PackageReady, Priority: 1, WaitsFor: []string{"wp-1"}},
			},
			Counts: map[queue.PackageState]int{queue.PackageReady: 1, queue.PackageClaimed: 1, queue.PackageDone: 1}},
	}
}

var fixedNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// TestBoardJSON: the snapshot's JSON has the documented shape, keeps
// what the terminal board keeps, and carries the reason as it was written.
func TestBoardJSON(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(Handler(&fakeSource{view: snapshot(fixedNow)}))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/board.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /board.json: %s, Content-Type %q", res.Status, res.Header.Get("Content-Type"))
	}
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"events", "locks", "next_cursor", "now", "pauses", "queue", "stale_after_seconds", "store"}; !slices.Equal(keys, want) {
		t.Fatalf("top-level fields = %v, want %v", keys, want)
	}
	var v View
	for k, into := range map[string]any{"locks": &v.Locks, "pauses": &v.Pauses, "queue": &v.Queue, "events": &v.Events, "stale_after_seconds": &v.StaleAfterSeconds} {
		if err := json.Unmarshal(raw[k], into); err != nil {
			t.Fatalf("decode %s: %v", k, err)
		}
	}
	if v.StaleAfterSeconds != 3600 {
		t.Errorf("stale_after_seconds = %d, want 3600", v.StaleAfterSeconds)
	}
	var got []string
	for _, l := range v.Locks {
		got = append(got, l.Key)
	}
	// By expiry, the corrupt record last; the expired lock, the pause and
	// the finished package's record are not locks to show.
	if want := []string{"db:migrations", "src/api/**", "broken.json"}; !slices.Equal(got, want) {
		t.Fatalf("locks = %v, want %v", got, want)
	}
	carol, bob, broken := v.Locks[0], v.Locks[1], v.Locks[2]
	if bob.Reason != xss || bob.Holder != "bob" || bob.HolderType != "agent" || bob.SecondsLeft != 600 || bob.Stale || bob.Corrupt {
		t.Errorf("bob's lock = %+v", bob)
	}
	if !carol.Stale || carol.SecondsLeft != 300 {
		t.Errorf("carol's lock is not stale with 300 s left: %+v", carol)
	}
	if !broken.Corrupt || broken.Error == "" || broken.ExpiresAt != nil {
		t.Errorf("the corrupt record = %+v", broken)
	}
	if len(v.Pauses) != 1 || v.Pauses[0].Feature != "checkout" || v.Pauses[0].Holder != "alice" || v.Pauses[0].SecondsLeft != 1800 {
		t.Errorf("pauses = %+v", v.Pauses)
	}
	if v.Queue == nil || v.Queue.File != "workpackages.yml" || len(v.Queue.Packages) != 2 || v.Queue.Counts["done"] != 1 ||
		!slices.Equal(v.Queue.Packages[1].WaitsFor, []string{"wp-1"}) || v.Queue.Packages[0].WaitsFor == nil {
		t.Errorf("queue = %+v", v.Queue)
	}
	if len(v.Events) != 2 || v.Events[1].Action != "refresh" {
		t.Errorf("events = %+v", v.Events)
	}
}

// TestBoardJSONEmpty: a board with nothing on it has empty lists and a
// null queue, never null lists, so the page need not test for them.
func TestBoardJSONEmpty(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(NewView(service.BoardView{Store: "the file store", Now: fixedNow}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"store":"the file store","now":"2026-03-04T05:06:07Z","stale_after_seconds":0,"pauses":[],"locks":[],"queue":null,"events":[],"next_cursor":""}`
	if string(data) != want {
		t.Fatalf("empty board:\n got %s\nwant %s", data, want)
	}
}

// TestBoardJSONError: a snapshot that cannot be read is a 500 naming why.
func TestBoardJSONError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(Handler(&fakeSource{err: errors.New("the store is down")}))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/board.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body errorBody
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusInternalServerError || !strings.Contains(body.Error, "the store is down") {
		t.Fatalf("GET /board.json of a failing store: %s %+v", res.Status, body)
	}
}

// TestPageHeaders: the page and its files are served with the content
// security policy, and nothing else is.
func TestPageHeaders(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(Handler(&fakeSource{view: snapshot(fixedNow)}))
	defer srv.Close()
	for path, want := range map[string]string{"/": "text/html", "/static/board.js": "text/javascript", "/static/board.css": "text/css", "/board.json": "application/json"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), want) {
			t.Errorf("GET %s: %s, Content-Type %q, want 200 %s", path, res.Status, res.Header.Get("Content-Type"), want)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, csp)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", path)
		}
	}
	for _, path := range []string{"/nothing", "/static/none.js", "/static/", "/static/../webboard.go"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", path, res.Status)
		}
	}
	res, err := http.Post(srv.URL+"/board.json", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /board.json: %s, want 405", res.Status)
	}
}

// readEvent reads one server-sent event: its name and data.
func readEvent(t *testing.T, r *bufio.Reader) (event, data string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read the stream: %v (event %q so far)", err, event)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			return event, data
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if data != "" {
				t.Fatalf("an event with two data lines: %q", line)
			}
			data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected line in the stream: %q", line)
		}
	}
}

// TestStream: the stream sends a snapshot when the client connects and
// again every interval, each a "board" event with one line of JSON.
func TestStream(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newHandler(&fakeSource{view: snapshot(fixedNow)}, 10*time.Millisecond, 10*time.Millisecond))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/board/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	r := bufio.NewReader(res.Body)
	for i := range 3 {
		event, data := readEvent(t, r)
		var v View
		if err := json.Unmarshal([]byte(data), &v); err != nil || event != "board" || len(v.Locks) != 3 {
			t.Fatalf("event %d: %q %q (%v)", i, event, data, err)
		}
	}
}

// TestStreamProblem: a snapshot that cannot be read is a "problem" event
// (not "error", which EventSource keeps for its connection), and the
// stream goes on.
func TestStreamProblem(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newHandler(&fakeSource{err: errors.New("the store is down")}, 10*time.Millisecond, 10*time.Millisecond))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/board/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	for range 2 {
		if event, data := readEvent(t, r); event != "problem" || !strings.Contains(data, "the store is down") {
			t.Fatalf("event %q %q, want a problem naming the store", event, data)
		}
	}
}

// TestStreamStopsOnCancel: when the request's context ends, the handler
// returns, and with the last stream gone the poller reads the board no
// more.
func TestStreamStopsOnCancel(t *testing.T) {
	t.Parallel()
	src := &fakeSource{view: snapshot(fixedNow), read: make(chan struct{}, 1)}
	frames := newHub(src, time.Millisecond, time.Millisecond)
	ctx, cancel := context.WithCancel(t.Context())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/board/stream", nil)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveStream(rec, req, frames)
	}()
	<-src.read
	<-src.read
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not stop when its request's context ended")
	}
	frames.mu.Lock()
	open, polling := len(frames.subs), frames.stop != nil
	frames.mu.Unlock()
	if open != 0 || polling {
		t.Fatalf("after the last stream ended: %d streams open, poller running %v", open, polling)
	}
}

// TestStreamSendsChangeAtOnce: a change of the board reaches an open
// stream at the next poll, not at the stream's next interval (an hour
// here).
func TestStreamSendsChangeAtOnce(t *testing.T) {
	t.Parallel()
	src := &fakeSource{view: snapshot(fixedNow)}
	srv := httptest.NewServer(newHandler(src, time.Hour, 5*time.Millisecond))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/board/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	if event, _ := readEvent(t, r); event != "board" {
		t.Fatalf("first event %q", event)
	}
	src.mu.Lock()
	src.view.Locks = src.view.Locks[:1]
	src.mu.Unlock()
	event, data := readEvent(t, r)
	var v View
	if err := json.Unmarshal([]byte(data), &v); err != nil || event != "board" || len(v.Locks) != 1 {
		t.Fatalf("after the change: %q %q (%v), want the board with 1 lock", event, data, err)
	}
}

// TestStreamsShareOnePoller: many open streams cost one read of the board
// per poll, not one each.
func TestStreamsShareOnePoller(t *testing.T) {
	t.Parallel()
	src := &fakeSource{view: snapshot(fixedNow)}
	srv := httptest.NewServer(newHandler(src, 200*time.Millisecond, 200*time.Millisecond))
	defer srv.Close()
	const streams, each = 20, 3
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Get(srv.URL + "/board/stream")
			if err != nil {
				errs <- err
				return
			}
			defer res.Body.Close()
			r := bufio.NewReader(res.Body)
			for range each {
				if _, err := r.ReadString('\n'); err != nil { // event:
					errs <- err
					return
				}
				if _, err := r.ReadString('\n'); err != nil { // data:
					errs <- err
					return
				}
				if _, err := r.ReadString('\n'); err != nil { // blank
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	src.mu.Lock()
	reads := src.reads
	src.mu.Unlock()
	// Each stream read its own board every frame before: 60 reads at the
	// least. Shared, the reads are the polls the streams lasted.
	if reads >= streams*each {
		t.Fatalf("%d streams of %d frames read the board %d times", streams, each, reads)
	}
}

// TestStreamOutlivesWriteTimeout: a server's WriteTimeout, which bounds a
// whole response, does not end a stream that is being read; the stream
// moves the deadline on each frame.
func TestStreamOutlivesWriteTimeout(t *testing.T) {
	t.Parallel()
	src := SourceFunc(func(context.Context) (service.BoardView, error) { return snapshot(fixedNow), nil })
	srv := httptest.NewUnstartedServer(newHandler(src, 20*time.Millisecond, 20*time.Millisecond))
	srv.Config.WriteTimeout = 100 * time.Millisecond
	srv.Start()
	defer srv.Close()
	res, err := http.Get(srv.URL + "/board/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	// 30 frames of 20 ms: six times the write timeout.
	for i := range 30 {
		if event, _ := readEvent(t, r); event != "board" {
			t.Fatalf("event %d is %q", i, event)
		}
	}
}
