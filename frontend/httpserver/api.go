package httpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/serveusers"
	"github.com/lockgate/lockgate/service/session"
)

// apiType is the JSON API's content type.
const apiType = "application/json; charset=utf-8"

// maxAPIWait bounds the wait of POST /api/v1/locks: a wait past the
// server's WriteTimeout could not be answered.
const maxAPIWait = 30 * time.Second

// The JSON API's classes for what only HTTP refuses, beside outcome's.
const (
	classUnauthorized = "unauthorized"
	classNotFound     = "not_found"
	classMisdirected  = "misdirected"
)

// apiRoutes adds the JSON API under /api/v1/ to mux.
func (s *Server) apiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/locks", s.api(false, s.apiLocks))
	mux.HandleFunc("GET /api/v1/events", s.events)
	mux.HandleFunc("GET /api/v1/packages", s.api(false, s.apiPackages))
	mux.HandleFunc("POST /api/v1/locks", s.api(true, s.apiAcquire))
	mux.HandleFunc("POST /api/v1/locks/refresh", s.api(true, s.apiRefresh))
	mux.HandleFunc("DELETE /api/v1/locks/{key...}", s.api(true, s.apiRelease))
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		s.apiFail(w, r, &routeError{method: r.Method, path: r.URL.Path})
	})
}

// routeError is a request for something the API does not serve.
type routeError struct{ method, path string }

func (e *routeError) Error() string {
	return fmt.Sprintf("%s %s: the JSON API serves no such request (docs/serve.md)", e.method, e.path)
}

// api wraps h for the JSON API: the content type, what a write must show
// (guardWrite), the token (always for writes, for reads unless
// PublicRead), the rate limit, and errors as {error: {...}}.
func (s *Server) api(write bool, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.guardWrite(r); err != nil {
			s.apiFail(w, r, err)
			return
		}
		e, err := s.authenticate(r, write)
		if lerr := s.admit(r); lerr != nil {
			err = lerr
		}
		if err == nil {
			var status int
			var body any
			status, body, err = h(r.Context(), e, r)
			if err == nil {
				w.Header().Set("Content-Type", apiType)
				if h, ok := body.(interface{ setHeaders(http.Header) }); ok {
					h.setHeaders(w.Header())
				}
				w.WriteHeader(status)
				_ = json.NewEncoder(w).Encode(body) // the client gone: nothing to tell
				return
			}
		}
		s.apiFail(w, r, err)
	}
}

// apiError is the JSON API's error object: outcome's classification of
// err, as `--json` and the MCP tools give it, with its hints as a list.
type apiError struct {
	// Code is the exit code lockgate's CLI gives the same outcome.
	Code      int               `json:"code"`
	Class     string            `json:"class"`
	Reason    string            `json:"reason,omitempty"`
	Message   string            `json:"message"`
	Hints     []string          `json:"hints"`
	Expected  string            `json:"expected,omitempty"`
	HeldBy    *service.LockView `json:"held_by,omitempty"`
	RequestID string            `json:"request_id"`
}

// apiFail answers err as {error: apiError} with the status its exit code
// maps to (docs/serve.md), and logs what the server could not classify.
func (s *Server) apiFail(w http.ResponseWriter, r *http.Request, err error) {
	var octx outcome.Context
	if info, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
		octx.Wait = info.wait
	}
	o := outcome.Of(err, octx)
	body := apiError{Code: o.Exit, Class: o.Class, Reason: o.Reason, Message: err.Error(), Hints: append([]string{}, o.Hints...),
		Expected: o.Expected, RequestID: requestIDOf(r)}
	if o.Held != nil {
		v := service.ViewOf(*o.Held)
		body.HeldBy = &v
	}
	status := statusOf(o.Exit)
	var (
		auth     *serveusers.AuthError
		route    *routeError
		tooBig   *http.MaxBytesError
		limited  *RateLimitedError
		quota    *locks.RateLimitedError
		notOwner *locks.NotOwnerError
		site     *CrossSiteError
		media    *MediaTypeError
		tooMany  *TooManyKeysError
		misdir   *MisdirectedError
	)
	switch {
	case errors.As(err, &misdir):
		status, body.Code, body.Class = http.StatusMisdirectedRequest, outcome.ExitNotPermitted, classMisdirected
	case errors.As(err, &tooMany):
		status, body.Code, body.Class = http.StatusRequestEntityTooLarge, outcome.ExitUsage, outcome.ClassInvalidArgument
	case errors.As(err, &site):
		status, body.Code, body.Class = http.StatusForbidden, outcome.ExitNotPermitted, outcome.ClassNotPermitted
	case errors.As(err, &media):
		status, body.Code, body.Class = http.StatusUnsupportedMediaType, outcome.ExitUsage, outcome.ClassInvalidArgument
	case errors.As(err, &notOwner) && r.Method == http.MethodDelete && len(body.Hints) == 1 && !lockkey.IsPause(notOwner.Lock.Key):
		// The API's own force, where the CLI's names `lock release --force`.
		l := notOwner.Lock
		body.Hints[0] = fmt.Sprintf("only %s (session %s) may release it; an admin of the server may override: `DELETE %s?force=true` (logged as lock_clear)",
			l.Holder, l.Session, (&url.URL{Path: "/api/v1/locks/" + l.Key}).EscapedPath())
	case errors.As(err, &limited):
		status, body.Code, body.Class = http.StatusTooManyRequests, outcome.ExitRateLimited, outcome.ClassRateLimited
		w.Header().Set("Retry-After", retryAfter(limited.Retry))
	case errors.As(err, &quota):
		// The Redis store's window slides: within it the session may
		// acquire again, at the latest once a whole window has passed.
		w.Header().Set("Retry-After", retryAfter(quota.Window))
	case errors.As(err, &auth):
		status, body.Code, body.Class = http.StatusUnauthorized, outcome.ExitNotPermitted, classUnauthorized
		w.Header().Set("WWW-Authenticate", `Basic realm="lockgate"`)
	case errors.As(err, &route):
		status, body.Code, body.Class = http.StatusNotFound, outcome.ExitUsage, classNotFound
	case errors.As(err, &tooBig):
		status, body.Code, body.Class = http.StatusRequestEntityTooLarge, outcome.ExitUsage, outcome.ClassInvalidArgument
	case errors.Is(err, errBadRequest):
		status, body.Code, body.Class = http.StatusBadRequest, outcome.ExitUsage, outcome.ClassInvalidArgument
	}
	if status >= http.StatusInternalServerError {
		s.opts.Log("%s %s (request %s): %s", logField(r.Method), logField(r.URL.Path), body.RequestID, safetext.Field(err.Error()))
	}
	w.Header().Set("Content-Type", apiType)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": body}) // the client gone: nothing to tell
}

// statusOf is the HTTP status of an exit code (the table in docs/serve.md).
func statusOf(exit int) int {
	switch exit {
	case outcome.ExitOK:
		return http.StatusOK
	case outcome.ExitPolicy, outcome.ExitLockFailed:
		return http.StatusConflict
	case outcome.ExitUsage:
		return http.StatusBadRequest
	case outcome.ExitRateLimited:
		return http.StatusTooManyRequests
	case outcome.ExitNotPermitted:
		return http.StatusForbidden
	default:
		return http.StatusServiceUnavailable
	}
}

// apiLocks is the live locks, as `lockgate lock list --json` shows them:
// a page of at most limit (default and most lockops.MaxPage) from
// cursor, the store reading only the page's records. The body stays the
// array of rows it always was; the next page's URL is in the Link
// header (rel="next"), its cursor in Lockgate-Next-Cursor.
func (s *Server) apiLocks(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	limit, err := limitOf(q.Get("limit"))
	if err != nil {
		return 0, nil, err
	}
	res, err := e.Locks().List(ctx, lockops.ListRequest{Recover: true, Cursor: q.Get("cursor"), Limit: cmp.Or(limit, lockops.MaxPage)})
	return http.StatusOK, rowsPage{rows: res.Rows, next: res.Next, limit: limit}, err
}

// rowsPage is a page of GET /api/v1/locks: the rows as the body, the
// next page in the headers (see apiLocks).
type rowsPage struct {
	rows  []lockops.LockRow
	next  string
	limit int
}

// MarshalJSON is the rows alone, as the body has always been.
func (p rowsPage) MarshalJSON() ([]byte, error) { return json.Marshal(p.rows) }

// setHeaders names the next page, if any.
func (p rowsPage) setHeaders(h http.Header) {
	if p.next == "" {
		return
	}
	q := url.Values{"cursor": {p.next}}
	if p.limit > 0 {
		q.Set("limit", strconv.Itoa(p.limit))
	}
	h.Set("Link", fmt.Sprintf(`</api/v1/locks?%s>; rel="next"`, q.Encode()))
	h.Set("Lockgate-Next-Cursor", p.next)
}

// apiEvents is the journal's events, newest last, as `lockgate log --json`
// shows them: since (a duration back from now, or an RFC 3339 time),
// until (an RFC 3339 time), key, worker, action, limit (the newest N).
func (s *Server) apiEvents(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	req, err := logRequestOf(r)
	if err != nil {
		return 0, nil, err
	}
	evs, err := e.Log(ctx, req)
	return http.StatusOK, evs, err
}

// logRequestOf is the query of GET /api/v1/events.
func logRequestOf(r *http.Request) (service.LogRequest, error) {
	q := r.URL.Query()
	req := service.LogRequest{Key: q.Get("key"), Worker: q.Get("worker"), Action: q.Get("action")}
	var err error
	if req.Limit, err = limitOf(q.Get("limit")); err != nil {
		return req, err
	}
	if since := q.Get("since"); since != "" {
		if req.From, err = time.Parse(time.RFC3339, since); err != nil {
			if req.Since, err = duration.Parse(since); err != nil || req.Since < 0 {
				return req, fmt.Errorf("%w: since %q is neither an RFC 3339 time nor a duration", errBadRequest, since)
			}
		}
	}
	if until := q.Get("until"); until != "" {
		if req.Until, err = time.Parse(time.RFC3339, until); err != nil {
			return req, fmt.Errorf("%w: until %q is not an RFC 3339 time", errBadRequest, until)
		}
	}
	return req, nil
}

// apiPackages is the work-package queue, as `lockgate packages --json`
// shows it.
func (s *Server) apiPackages(ctx context.Context, e *service.Workspace, _ *http.Request) (int, any, error) {
	q, err := e.Queue().ListPackages(ctx, "")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"path": q.Path, "packages": q.Packages, "counts": q.Counts, "drained": q.Drained(), "store": e.StoreName()}, nil
}

// acquireBody is POST /api/v1/locks: durations as lockgate writes them
// (30m, 8h, 2d).
type acquireBody struct {
	Keys   []string `json:"keys"`
	TTL    string   `json:"ttl"`
	Reason string   `json:"reason"`
	Wait   string   `json:"wait"`
}

// apiAcquire takes the locks as the request's user, all or nothing, as
// `lockgate lock acquire --json` does.
func (s *Server) apiAcquire(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	var b acquireBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	if len(b.Keys) == 0 {
		return 0, nil, fmt.Errorf("%w: keys: give at least one key", errBadRequest)
	}
	if err := s.spendKeys(r, len(b.Keys)); err != nil {
		return 0, nil, err
	}
	req := lockops.AcquireRequest{Keys: b.Keys, Tool: true, Reason: b.Reason}
	var err error
	if req.TTL, err = durationOf("ttl", b.TTL); err != nil {
		return 0, nil, err
	}
	if req.Wait, err = durationOf("wait", b.Wait); err != nil {
		return 0, nil, err
	}
	if req.Wait > maxAPIWait {
		return 0, nil, fmt.Errorf("%w: wait %s: at most %s through the server", errBadRequest, b.Wait, duration.Format(maxAPIWait))
	}
	if slices.ContainsFunc(b.Keys, lockkey.IsPause) {
		// A pause is `lockgate pause`'s, journaled as pause, not as a
		// lock; Pause waits for nothing and takes one feature.
		if len(b.Keys) != 1 || req.Wait > 0 {
			return 0, nil, fmt.Errorf("%w: keys: a pause key (feature:F:pause) is taken alone and without wait, as `lockgate pause F` takes it", errBadRequest)
		}
		feature := strings.TrimSuffix(strings.TrimPrefix(b.Keys[0], "feature:"), ":pause")
		res, err := e.Locks().Pause(ctx, lockops.PauseRequest{Feature: feature, Reason: b.Reason, TTL: req.TTL})
		return http.StatusOK, session.AcquiredViews(res), err
	}
	if info, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
		// A held key is waited for as the CLI waits: its hint is the CLI's.
		info.wait = func(d string) string { return hint.Line(hint.WaitAcquire, d, b.Keys) }
	}
	res, err := e.Locks().Acquire(ctx, req)
	return http.StatusOK, session.AcquiredViews(res.Locks), err
}

// refreshBody is POST /api/v1/locks/refresh.
type refreshBody struct {
	Keys []string `json:"keys"`
	TTL  string   `json:"ttl"`
}

// apiRefresh extends the user's locks on the keys, as `lockgate lock
// refresh --json` does: without ttl each key's default, never shortening
// a lock; with it exactly ttl from now.
func (s *Server) apiRefresh(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	var b refreshBody
	if err := decode(r, &b); err != nil {
		return 0, nil, err
	}
	if len(b.Keys) == 0 {
		return 0, nil, fmt.Errorf("%w: keys: give at least one key", errBadRequest)
	}
	if err := s.spendKeys(r, len(b.Keys)); err != nil {
		return 0, nil, err
	}
	req := lockops.RefreshRequest{Keys: b.Keys, Tool: true}
	var err error
	if req.TTL, err = durationOf("ttl", b.TTL); err != nil {
		return 0, nil, err
	}
	res, err := e.Locks().Refresh(ctx, req)
	return http.StatusOK, session.ViewsOf(res), err
}

// durationOf parses field's value, "" as 0.
func durationOf(field, v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := duration.Parse(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: %s %q is not a duration (30m, 8h, 2d)", errBadRequest, field, v)
	}
	return d, nil
}

// apiRelease releases the user's lock on the key, as `lockgate lock release
// --json` does; with ?force=true it clears whoever's lock it is, as
// `lockgate lock clear --force --json` does (logged as lock_clear).
func (s *Server) apiRelease(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error) {
	key := r.PathValue("key")
	force, err := boolOf("force", r.URL.Query().Get("force"))
	if err != nil {
		return 0, nil, err
	}
	if force {
		res, err := e.Locks().Clear(ctx, lockops.ClearRequest{Target: key, Force: true})
		return http.StatusOK, res, err
	}
	if lockkey.IsPause(key) {
		// A pause ends as `lockgate unpause F` ends it, journaled as unpause.
		res, err := e.Locks().Unpause(ctx, lockops.UnpauseRequest{Feature: strings.TrimSuffix(strings.TrimPrefix(key, "feature:"), ":pause")})
		return http.StatusOK, releasedBody(e, res), err
	}
	res, err := e.Locks().Release(ctx, lockops.ReleaseRequest{Keys: []string{key}, Tool: true})
	return http.StatusOK, releasedBody(e, res), err
}

// releasedBody is a release as `lockgate lock release --json` shows it.
func releasedBody(e *service.Workspace, res locks.ReleaseResult) map[string]any {
	return map[string]any{"released": session.ViewsOf(res.Removed), "forced": session.ViewsOf(res.Forced),
		"missing": append([]string{}, res.Missing...), "store": e.StoreName()}
}

// boolOf parses a boolean query parameter, "" as false.
func boolOf(name, v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: %s %q is not true or false", errBadRequest, name, v)
	}
	return b, nil
}
