package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/lockgate/lockgate/service"
)

// The events stream's pace: how often it reads the journal for new
// events, how long it stays silent before a comment keeps proxies from
// closing it, and how long past that a write may take before the client
// is given up as stuck.
const (
	streamPoll      = 500 * time.Millisecond
	streamKeepAlive = 15 * time.Second
	streamSlack     = 30 * time.Second
)

// events answers GET /api/v1/events: the JSON list, or with Accept:
// text/event-stream (or ?stream=true) the same events followed by each
// new one as it is recorded, as server-sent events.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	stream, err := wantsStream(r)
	if err != nil || !stream {
		s.api(false, func(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
			if err != nil {
				return 0, nil, err
			}
			return s.apiEvents(ctx, e, r)
		})(w, r)
		return
	}
	e, err := s.authenticate(r, false)
	if lerr := s.admit(r); lerr != nil {
		err = lerr
	}
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	if err := s.streamEvents(w, r, e); err != nil {
		s.apiFail(w, r, err)
	}
}

// wantsStream is whether r asks for the stream: an Accept naming
// text/event-stream (what EventSource sends), or stream=true.
func wantsStream(r *http.Request) (bool, error) {
	stream, err := boolOf("stream", r.URL.Query().Get("stream"))
	if err != nil || stream {
		return stream, err
	}
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		media, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(media), "text/event-stream") {
			return true, nil
		}
	}
	return false, nil
}

// streamEvents sends the events the query asks for (as the JSON form
// does), then every new event of the clone's journal the query's key,
// worker and action keep, until the client goes or the server stops. An
// error is returned only before the stream starts; a reconnecting client's
// Last-Event-ID skips what it had.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, e *service.Workspace) error {
	flusher, ok := w.(http.Flusher)
	if !ok {
		return errors.New("streaming is not supported by this connection")
	}
	req, err := logRequestOf(r)
	if err != nil {
		return err
	}
	if !req.Until.IsZero() {
		return fmt.Errorf("%w: until: a stream has no end; ask without stream for events before a time", errBadRequest)
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	// The journal's end is read before the backlog: an event recorded
	// between the two reads is in both, and sent once (seen).
	_, end, err := e.EventsFrom(req, service.JournalCursor{})
	if err != nil {
		return err
	}
	backlog, err := e.Log(ctx, req)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(backlog))
	for _, ev := range backlog {
		seen[ev.ID] = true
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		for i, ev := range backlog {
			if ev.ID == last {
				backlog = backlog[i+1:]
				break
			}
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	// A proxy (nginx) that buffers would hold the events back.
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// A server's WriteTimeout bounds a whole response: each write moves
	// the deadline on, so that it ends a stuck client, not a stream that
	// is still being read. A connection without deadlines has none to move.
	extend := func() bool {
		err := rc.SetWriteDeadline(time.Now().Add(streamKeepAlive + streamSlack))
		return err == nil || errors.Is(err, http.ErrNotSupported)
	}
	if !extend() || writeEvents(w, backlog, nil) != nil {
		return nil
	}
	flusher.Flush()
	tick := time.NewTicker(streamPoll)
	defer tick.Stop()
	quiet := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if !extend() {
			return nil
		}
		var evs []service.LogEvent
		evs, end, err = e.EventsFrom(req, end)
		switch {
		case err != nil:
			// The journal may be readable next time: say so and go on.
			data, _ := json.Marshal(map[string]any{"error": map[string]string{"message": err.Error()}}) // a map of strings always encodes
			_, err = fmt.Fprintf(w, "event: problem\ndata: %s\n\n", data)
		case len(evs) > 0:
			err = writeEvents(w, evs, seen)
			seen = nil // only the first read can repeat the backlog
		case time.Since(quiet) >= streamKeepAlive:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		default:
			continue
		}
		if err != nil {
			return nil // the client is gone
		}
		flusher.Flush()
		quiet = time.Now()
	}
}

// writeEvents writes each event not in skip as one server-sent event: its
// id, and its JSON (one line: JSON has no raw newline) as the data.
func writeEvents(w http.ResponseWriter, evs []service.LogEvent, skip map[string]bool) error {
	for _, ev := range evs {
		if skip[ev.ID] {
			continue
		}
		data, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("encode event %s: %w", ev.ID, err)
		}
		if _, err := fmt.Fprintf(w, "id: %s\ndata: %s\n\n", ev.ID, data); err != nil {
			return fmt.Errorf("write event %s: %w", ev.ID, err)
		}
	}
	return nil
}
