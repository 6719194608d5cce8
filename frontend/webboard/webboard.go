package webboard

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lockgate/lockgate/service"
)

// Source gives the board its snapshots: the service's board (through
// SourceFunc), or any program that has a service.BoardView to show.
// Snapshot is called for every /board.json request and by the one poller
// the open streams share, from as many goroutines as there are clients: a
// Source must be safe for concurrent use.
type Source interface {
	Snapshot(ctx context.Context) (service.BoardView, error)
}

// Pager is a Source that also reads a page of the board: the snapshot
// with a page of the store's records in place of all of them (see
// service.Board.SnapshotPage), what GET /board.json?limit=&cursor=
// answers. A Source that is no Pager answers those with the whole
// snapshot.
type Pager interface {
	SnapshotPage(ctx context.Context, cursor string, limit int) (service.BoardView, error)
}

// SourceFunc is a function as a Source: one that reads each snapshot
// afresh, for instance from a new service.Board a call (a Board keeps
// what it parsed between frames and is not shared between goroutines).
type SourceFunc func(ctx context.Context) (service.BoardView, error)

// Snapshot calls f.
func (f SourceFunc) Snapshot(ctx context.Context) (service.BoardView, error) { return f(ctx) }

// streamEvery is how often the stream pushes a snapshot when nothing on
// the board changed (the time left on each lock moves on).
const streamEvery = 2 * time.Second

// streamPoll is how often the open streams' poller reads the board: a
// change reaches every open page within about this.
const streamPoll = 250 * time.Millisecond

// streamSlack is how long past a frame's interval its write may take
// before the stream is given up as stuck.
const streamSlack = 30 * time.Second

// csp lets the page load only its own script, style and data: a key or
// reason that got into the page as markup could still run nothing.
const csp = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

//go:embed static
var static embed.FS

// Handler serves the board of src: the page, its snapshot as JSON and the
// stream of snapshots (the routes are in the package comment).
func Handler(src Source) http.Handler { return newHandler(src, streamEvery, streamPoll) }

// newHandler is Handler with the stream's intervals chosen, so that tests
// of the stream need not wait 2 s a frame.
func newHandler(src Source, every, poll time.Duration) http.Handler {
	frames := newHub(src, every, poll)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "static/index.html")
	})
	// One file by name: the directory itself is not listed. The name is
	// one clean path segment, and the embedded tree holds nothing else.
	mux.HandleFunc("GET /static/{file}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "static/"+r.PathValue("file"))
	})
	mux.HandleFunc("GET /board.json", func(w http.ResponseWriter, r *http.Request) { serveJSON(w, r, src) })
	mux.HandleFunc("GET /board/stream", func(w http.ResponseWriter, r *http.Request) { serveStream(w, r, frames) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SecurityHeaders(w.Header())
		mux.ServeHTTP(w, r)
	})
}

// SecurityHeaders sets the headers every answer of the board carries
// (docs/webboard.md): its Content-Security-Policy, nosniff and
// no-referrer. A server in front of the board sets them on its own
// answers too, a 401 or 429 included, which a browser shows as a page.
func SecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// errorBody is the JSON of a snapshot that could not be read.
type errorBody struct {
	Error string `json:"error"`
}

// serveJSON answers one snapshot, or 500 with why there is none.
func serveJSON(w http.ResponseWriter, r *http.Request, src Source) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	s, err := snapshotOf(r, src)
	if err != nil {
		status := http.StatusInternalServerError
		if errors.As(err, new(*service.UsageError)) {
			status = http.StatusBadRequest
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(errorBody{Error: fmt.Sprintf("read the board: %v", err)})
		return
	}
	// A write error is the client gone: there is no one left to tell.
	_ = json.NewEncoder(w).Encode(NewView(s))
}

// snapshotOf is the snapshot r asks for: a page of the locks when it
// names a limit or a cursor and src is a Pager, else the whole board.
func snapshotOf(r *http.Request, src Source) (service.BoardView, error) {
	q := r.URL.Query()
	p, ok := src.(Pager)
	if !ok || !q.Has("limit") && !q.Has("cursor") {
		return src.Snapshot(r.Context())
	}
	limit := 0
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return service.BoardView{}, service.Usagef("limit %q is not a count", l)
		}
		limit = n
	}
	return p.SnapshotPage(r.Context(), q.Get("cursor"), limit)
}

// serveStream pushes the board's latest snapshot at once and each new
// one after, as server-sent events, until the request's context ends. A
// snapshot that cannot be read is sent as a "problem" event (EventSource
// keeps "error" for its own connection) and the stream goes on: the store
// may answer the next time.
func serveStream(w http.ResponseWriter, r *http.Request, frames *hub) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported by this connection", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	// A proxy (nginx) that buffers would hold the events back.
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	ctx := r.Context()
	rc := http.NewResponseController(w)
	in, leave := frames.subscribe()
	defer leave()
	for {
		var f frame
		select {
		case <-ctx.Done():
			return
		case f = <-in:
		}
		// A server's WriteTimeout bounds a whole response: each frame
		// moves the deadline on, so that it ends a stuck client, not a
		// stream that is still being read. A connection without
		// deadlines (a test's recorder) has nothing to move.
		if err := rc.SetWriteDeadline(time.Now().Add(frames.every + streamSlack)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return
		}
		// JSON has no raw newline, so the data is one "data:" line.
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", f.event, f.data); err != nil {
			return
		}
		flusher.Flush()
	}
}
