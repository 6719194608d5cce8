package webboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// frame is one server-sent event of the stream: a "board" snapshot or a
// "problem" reading it.
type frame struct {
	event string
	data  []byte
}

// hub reads the board once for every open stream: while any stream is
// open one poller looks at the board every poll and hands a frame to each
// stream when what it shows has changed, and at least every `every` (the
// time left on each lock moves on). A hundred open pages then cost one
// read of the store per poll, not a hundred, and a change reaches them
// within a poll instead of a stream's next interval.
type hub struct {
	src   Source
	every time.Duration
	poll  time.Duration

	mu   sync.Mutex
	subs map[chan frame]struct{}
	last *frame // the latest frame, for a stream that opens now
	stop context.CancelFunc
}

func newHub(src Source, every, poll time.Duration) *hub {
	return &hub{src: src, every: every, poll: min(poll, every), subs: map[chan frame]struct{}{}}
}

// subscribe opens a stream: its channel holds the newest frame not yet
// taken (a slow client skips frames, never falls behind), the latest one
// already when there is one. leave closes it; the last to leave stops the
// poller.
func (h *hub) subscribe() (frames <-chan frame, leave func()) {
	ch := make(chan frame, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[ch] = struct{}{}
	if h.last != nil {
		ch <- *h.last
	}
	if h.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		go h.run(ctx)
	}
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, ch)
		if len(h.subs) == 0 && h.stop != nil {
			h.stop()
			h.stop, h.last = nil, nil
		}
	}
}

// run polls the board until ctx ends.
func (h *hub) run(ctx context.Context) {
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	// A frame goes out at the latest every `every`, counted in polls so
	// that a poll as long as the interval sends every time.
	force := int((h.every + h.poll - 1) / h.poll)
	var shown []byte
	since := force
	for {
		f, key := h.read(ctx)
		if ctx.Err() != nil {
			return
		}
		if since >= force || !bytes.Equal(key, shown) {
			h.publish(ctx, f)
			shown, since = key, 0
		}
		since++
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// read takes one snapshot as a frame, with what tells a change: the frame
// without the clock and the time left, which move on every second.
func (h *hub) read(ctx context.Context) (frame, []byte) {
	s, err := h.src.Snapshot(ctx)
	if err != nil {
		data, merr := json.Marshal(errorBody{Error: fmt.Sprintf("read the board: %v", err)})
		if merr != nil {
			data = []byte(`{"error":"read the board"}`)
		}
		return frame{event: "problem", data: data}, append([]byte("problem"), data...)
	}
	v := NewView(s)
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(errorBody{Error: fmt.Sprintf("encode the board: %v", err)})
		return frame{event: "problem", data: data}, append([]byte("problem"), data...)
	}
	key, err := json.Marshal(timeless(v))
	if err != nil {
		key = data
	}
	return frame{event: "board", data: data}, key
}

// timeless is v without what changes by the clock alone.
func timeless(v View) View {
	v.Now = time.Time{}
	v.Locks = slices.Clone(v.Locks)
	for i := range v.Locks {
		v.Locks[i].SecondsLeft = 0
	}
	v.Pauses = slices.Clone(v.Pauses)
	for i := range v.Pauses {
		v.Pauses[i].SecondsLeft = 0
	}
	return v
}

// publish hands f to every open stream, replacing a frame one has not
// taken yet.
func (h *hub) publish(ctx context.Context, f frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ctx.Err() != nil {
		return // the last stream left while the board was read
	}
	h.last = &f
	for ch := range h.subs {
		select {
		case <-ch:
		default:
		}
		ch <- f
	}
}
