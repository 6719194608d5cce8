package webboard

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/browsertest"
)

// TestPageFailedReadStaysShown: a read of /board.json that failed stays
// on the page when the stream opens but has sent no snapshot yet: the
// empty table never reads as "live".
func TestPageFailedReadStaysShown(t *testing.T) {
	t.Parallel()
	board := Handler(&fakeSource{err: errors.New("the store is down")})
	opened := make(chan struct{}, 1)
	// failed is closed once the page shows the failed read.
	failed := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/board/stream" {
			board.ServeHTTP(w, r)
			return
		}
		// A stream that opens once the page shows the failed read, and sends nothing
		// until the page goes.
		select {
		case <-failed:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case opened <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	})
	url := serve(t, h)
	p := browsertest.Open(t, url+"/", browsertest.Options{})
	p.WaitFor(`document.getElementById("status").textContent.startsWith("cannot read the board")`)
	close(failed)
	select {
	case <-opened:
	case <-time.After(30 * time.Second):
		t.Fatal("the page never opened the stream")
	}
	// The page handles the stream's open event after the server flushed:
	// give it that moment, then the failed read must still be shown.
	time.Sleep(time.Second)
	if got := string(p.Eval(`document.getElementById("status").textContent`)); !strings.Contains(got, "cannot read the board") {
		t.Fatalf("status %s after the stream opened with no snapshot; want the failed read", got)
	}
}
