package httpserver

import (
	"context"
	"net/http"

	"github.com/lockgate/lockgate/frontend/webboard"
	"github.com/lockgate/lockgate/service"
)

// page serves the web board at "/" (docs/webboard.md): a read, so it
// needs a token unless PublicRead. A browser without one is asked for it
// (WWW-Authenticate: Basic), then sends it with every request of the
// page, the stream included. Each snapshot is one service call, taken in
// turn with the other requests; a page's requests end when the server
// starts to stop, so an open stream does not hold the drain.
func (s *Server) page() http.Handler {
	board := webboard.Handler(webboard.SourceFunc(func(ctx context.Context) (service.BoardView, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		// A Board per snapshot: it caches the packages file unguarded,
		// and streams of many pages ask at once.
		return s.e.Board().Snapshot(ctx)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.authenticate(r, false); err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="lockgate"`)
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
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
		board.ServeHTTP(w, r.WithContext(ctx))
	})
}
