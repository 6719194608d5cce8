package httpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/lockgate/lockgate/frontend/webboard"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/outcome"
)

// csrfHeader carries the page's CSRF token on a clear.
const csrfHeader = "X-Lockgate-CSRF"

// page serves the web board at "/" (docs/webboard.md): a read, so it
// needs a token unless PublicRead. A browser without one is asked for it
// (WWW-Authenticate: Basic), then sends it with every request of the
// page, the stream included. Each snapshot is one service call, beside
// the other requests; a page's requests end when the server starts to
// stop, so an open stream does not hold the drain.
//
// A signed-in page may also clear a lock: GET /board/session gives it the
// user and this server's CSRF token, POST /board/clear clears one key.
func (s *Server) page() http.Handler {
	board := webboard.Handler(boardSource{s})
	csrf := newCSRFToken()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /board/session", func(w http.ResponseWriter, r *http.Request) { s.boardSession(w, r, csrf) })
	mux.HandleFunc("POST /board/clear", func(w http.ResponseWriter, r *http.Request) { s.boardClear(w, r, csrf) })
	mux.Handle("/", board)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := s.authenticate(r, false)
		if lerr := s.admit(r); lerr != nil {
			err = lerr
		}
		if err != nil && !pageFile(r.URL.Path) {
			// The board's JSON routes answer as the JSON API does: 401
			// with its error object and a Basic challenge, 429 (over the
			// rate, before the token's check or after it) with
			// Retry-After.
			s.apiFail(w, r, err)
			return
		}
		if limited := (*RateLimitedError)(nil); errors.As(err, &limited) {
			w.Header().Set("Retry-After", retryAfter(limited.Retry))
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		}
		if err != nil {
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
		mux.ServeHTTP(w, r.WithContext(ctx))
	})
}

// boardSource gives the board its snapshots and pages (webboard.Pager):
// a Board per snapshot, on a copy of the workspace, since the Board
// caches the packages file unguarded, the workspace what it learns on
// first need, and streams of many pages ask at once.
type boardSource struct{ s *Server }

func (b boardSource) board() (*service.Board, error) {
	e, err := b.s.e.ActAs(service.Identity{})
	if err != nil {
		return nil, err
	}
	return e.Board(), nil
}

// Snapshot is the whole board.
func (b boardSource) Snapshot(ctx context.Context) (service.BoardView, error) {
	bd, err := b.board()
	if err != nil {
		return service.BoardView{}, err
	}
	return bd.Snapshot(ctx)
}

// SnapshotPage is the board with a page of the locks.
func (b boardSource) SnapshotPage(ctx context.Context, cursor string, limit int) (service.BoardView, error) {
	bd, err := b.board()
	if err != nil {
		return service.BoardView{}, err
	}
	return bd.SnapshotPage(ctx, cursor, limit)
}

// pageFile reports whether path is the board's page or one of its
// files, which a browser shows: their refusals are plain text, the JSON
// routes' the JSON API's error object.
func pageFile(path string) bool {
	return path == "/" || strings.HasPrefix(path, "/static/")
}

// newCSRFToken is a server's CSRF token: random, so that only a page the
// server gave it to can send it back.
func newCSRFToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux ≥ 3.17
	return hex.EncodeToString(b[:])
}

// boardSession answers who the page's credentials name and the CSRF token
// its clears carry. A browser sends the credentials it was given only
// when challenged, so a 401 challenges, except under PublicRead: a page
// read without credentials there shows no clear buttons and asks for none.
func (s *Server) boardSession(w http.ResponseWriter, r *http.Request, csrf string) {
	w.Header().Set("Cache-Control", "no-store")
	e, err := s.authenticate(r, true)
	if err != nil {
		if !s.opts.PublicRead {
			w.Header().Set("WWW-Authenticate", `Basic realm="lockgate"`)
		}
		// The JSON API's error object, as its own 401s give it; only the
		// challenge differs (none under PublicRead).
		w.Header().Set("Content-Type", apiType)
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": apiError{Code: outcome.ExitNotPermitted, Class: classUnauthorized, Message: err.Error(),
			Hints: []string{}, RequestID: requestIDOf(r)}}) // the client gone: nothing to tell
		return
	}
	w.Header().Set("Content-Type", apiType)
	_ = json.NewEncoder(w).Encode(map[string]string{"user": e.Owner().Holder, "csrf": csrf}) // the client gone: nothing to tell
}

// errCrossSite is a clear that did not come from the board's own page.
var errCrossSite = errors.New("refused: the request does not come from this server's board page")

// boardClear clears the lock on the body's key, whoever holds it, as the
// user (`lockgate lock clear --force --json`, logged as lock_clear): the
// service decides whether the user may. A browser sends its credentials
// with any site's request, so the request must also come from this
// origin and carry the CSRF token only the board's page was given.
func (s *Server) boardClear(w http.ResponseWriter, r *http.Request, csrf string) {
	e, err := s.authenticate(r, true)
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	if !s.sameOrigin(r) || subtle.ConstantTimeCompare([]byte(r.Header.Get(csrfHeader)), []byte(csrf)) != 1 {
		w.Header().Set("Content-Type", apiType)
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": apiError{Code: outcome.ExitNotPermitted, Class: outcome.ClassNotPermitted, Message: errCrossSite.Error(),
			Hints: []string{}, RequestID: requestIDOf(r)}}) // the client gone: nothing to tell
		return
	}
	var body struct {
		Key string `json:"key"`
	}
	if err := decode(r, &body); err != nil {
		s.apiFail(w, r, err)
		return
	}
	if body.Key == "" {
		s.apiFail(w, r, fmt.Errorf("%w: the body names no key", errBadRequest))
		return
	}
	res, err := e.Locks().Clear(r.Context(), lockops.ClearRequest{Target: body.Key, Force: true})
	if err != nil {
		s.apiFail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", apiType)
	_ = json.NewEncoder(w).Encode(res) // the client gone: nothing to tell
}

// sameOrigin is whether r comes from a page of this server: the browser's
// Sec-Fetch-Site when it sends one, else its Origin, which must name a
// host the server answers to (ownOrigin). The request's own Host is no
// proof: a page served under a name rebound to the server's address
// sends that name.
func (s *Server) sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := r.Header.Get("Origin")
	return origin != "" && s.ownOrigin(origin)
}
