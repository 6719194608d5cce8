package httpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lockgate/lockgate/frontend/webboard"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/serveusers"
)

// lfsType is the git-lfs API's content type, on every answer under /lfs.
const lfsType = "application/vnd.git-lfs+json"

// maxBody bounds a request body: a lock request is a path and a ref.
const maxBody = 64 << 10

// Options are how `lockgate serve` serves.
type Options struct {
	// PublicRead lets requests that only read the locks in without a token.
	PublicRead bool
	// RateLimit bounds the requests of each user, and of each client
	// address for requests without a valid token; the zero value is no
	// limit.
	RateLimit RateLimit
	// Log receives one line per request (method, path, status, user,
	// duration, request id) and the error of each the server could not
	// answer; nil drops them. No token reaches it.
	Log func(format string, args ...any)
	// Addr is the address the server listens on, HOST:PORT as bound;
	// Serve takes it from its listener when it is empty. With PublicURLs
	// it names the hosts the server answers to (hosts.go): a handler of
	// a server that knows neither answers every request but /healthz 421.
	Addr string
	// PublicURLs are the URLs the server is reached by besides its
	// listen address (--public-url).
	PublicURLs []PublicURL
}

// Server answers HTTP requests on one workspace, many at once: each
// request works on its own copy of the workspace (As, ActAs), and the
// copies share the store, journal and lock Manager, which are safe for
// concurrent use: the store decides between racing requests as it does
// between processes.
type Server struct {
	e      *service.Workspace
	opts   Options
	limits *limiter
	// origins are where the server is reached (serverOrigins), hosts
	// what a request's Host header may name (allowedHosts).
	origins, hosts []hostPort
	// stopping is closed when the server starts to stop: the web board's
	// streams end then instead of holding the drain.
	stopping chan struct{}
}

// New is a server on workspace e, its store open.
func New(e *service.Workspace, opts Options) *Server {
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	s := &Server{e: e, opts: opts, limits: newLimiter(opts.RateLimit, time.Now), stopping: make(chan struct{})}
	s.knowHosts()
	return s
}

// knowHosts derives the hosts the server answers to from its address and
// public URLs.
func (s *Server) knowHosts() {
	s.origins = serverOrigins(s.opts.Addr, s.opts.PublicURLs)
	s.hosts = allowedHosts(s.origins)
}

// Handler is the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n") // the client gone: nothing to tell
	})
	mux.HandleFunc("POST /lfs/locks", s.lfs(true, s.createLock))
	mux.HandleFunc("GET /lfs/locks", s.lfs(false, s.listLocks))
	mux.HandleFunc("POST /lfs/locks/verify", s.lfs(false, s.verifyLocks))
	mux.HandleFunc("POST /lfs/locks/{id}/unlock", s.lfs(true, s.unlock))
	mux.HandleFunc("/lfs/objects/", s.objects)
	s.apiRoutes(mux)
	mux.Handle("/", s.page())
	return s.logged(s.hostChecked(mux))
}

// reqInfo is what a request's log line says that only its handler learns.
type reqInfo struct {
	id   string
	user string // "" until a token names the user
	// hashed: the client address's bucket already paid for checking the
	// request's token against its hash.
	hashed bool
	// wait renders the command that waits for a held lock, for the hints
	// of a request that could have waited (an acquire); nil otherwise.
	wait func(d string) string
}

type reqInfoKey struct{}

// statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Flush lets a stream (the web board's) push each event as it is written.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection's writer, for a
// stream's write deadline.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// logged gives each request an id and logs one line when it is answered:
// method, path (never the query or a header, where a token could be),
// status, user, duration, request id.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &reqInfo{id: requestID()}
		sw := &statusWriter{ResponseWriter: w}
		// Every answer, a refusal before any handler included, is one a
		// browser may show: the board's headers go on all of them.
		webboard.SecurityHeaders(w.Header())
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, info)))
		user := info.user
		if user == "" {
			user = "-"
		}
		s.opts.Log("%s %s %d user=%s %s request=%s", logField(r.Method), logField(r.URL.Path), answered(sw.status), logField(user),
			time.Since(start).Round(time.Microsecond), info.id)
	})
}

// logField is a value a client chose (the method, the decoded path, the
// user), written so that it stays one field of one log line: as it is
// when it holds only printable characters other than space, '"' and
// '\', else quoted as Go quotes it. A path whose escapes decode to a
// newline, or to spaces and a status, would otherwise write lines or
// fields of the client's choosing (`/x%0APOST /api/v1/locks 200 user=op`).
func logField(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || r == ' ' || r == '"' || r == '\\' || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// answered is the status a handler answered, 200 when it wrote nothing.
func answered(status int) int {
	if status == 0 {
		return http.StatusOK
	}
	return status
}

// requestIDOf is the id logged gives r, or a new one for a request that
// did not pass through it.
func requestIDOf(r *http.Request) string {
	if info, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
		return info.id
	}
	return requestID()
}

// Serve answers on ln until ctx is done, then stops taking connections,
// tells every request under way that the server stops (their context
// ends: a lock wait answers 503 interrupted at once instead of holding
// the drain to its end), and waits up to drain for their answers.
func (s *Server) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	// Every request's context derives from base, which ends when the
	// server starts to stop; ctx itself may not end then (a caller's
	// signal context), so the requests get their own.
	base, stop := context.WithCancel(context.Background())
	defer stop()
	if s.opts.Addr == "" {
		s.opts.Addr = ln.Addr().String()
		s.knowHosts()
	}
	hs := &http.Server{
		BaseContext:       func(net.Listener) context.Context { return base },
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	close(s.stopping)
	stop()
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("stopping: %w", err)
	}
	// Serve returns http.ErrServerClosed once Shutdown starts: that is
	// the stop asked for.
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// handler answers one authenticated request as workspace e, returning
// the status and the body to encode.
type handler func(ctx context.Context, e *service.Workspace, r *http.Request) (int, any, error)

// lfs wraps h for the git-lfs API: the content type, what a write must
// show (guardWrite), the token (always for writes, for reads unless
// PublicRead), the rate limit, and errors as {message, request_id}.
func (s *Server) lfs(write bool, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rid := requestIDOf(r)
		w.Header().Set("Content-Type", lfsType)
		if err := s.guardWrite(r); err != nil {
			s.fail(w, r, rid, err)
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
				w.WriteHeader(status)
				_ = json.NewEncoder(w).Encode(body) // the client gone: nothing to tell
				return
			}
		}
		s.fail(w, r, rid, err)
	}
}

// authenticate is the request's own copy of the workspace, acting as
// the request's user; a read without credentials under PublicRead acts
// as the server's own worker, which takes nothing.
func (s *Server) authenticate(r *http.Request, write bool) (*service.Workspace, error) {
	name, token, basic := r.BasicAuth()
	if !basic {
		bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			if !write && s.opts.PublicRead {
				// A copy: the workspace keeps what it learns on first
				// need (core.ignorecase, the resolved work tree), and
				// requests run at once.
				return s.e.ActAs(service.Identity{})
			}
			return nil, &serveusers.AuthError{Msg: "a token is needed: HTTP Basic NAME:TOKEN or Authorization: Bearer TOKEN"}
		}
		token = strings.TrimSpace(bearer)
	}
	// A token not yet verified is checked against its hash: the client
	// address's bucket pays for the check first, so that a flood of
	// wrong tokens is refused before it is checked.
	u, err := s.e.Users().Authenticate(name, token, func() error {
		if info, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
			info.hashed = true
		}
		return s.admitAddress(r)
	})
	if err != nil {
		return nil, err
	}
	if info, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
		info.user = u.Name
	}
	return s.e.As(u)
}

// lfsError is the git-lfs API's error body.
type lfsError struct {
	Message   string           `json:"message"`
	RequestID string           `json:"request_id"`
	Lock      *service.LFSLock `json:"lock,omitempty"`
}

// fail answers err with its status and {message, request_id}, and the
// lock in the way for a conflict.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, rid string, err error) {
	body := lfsError{Message: err.Error(), RequestID: rid}
	// What no case below names is classified as the JSON API classifies
	// it (an invalid key is a usage error, 422 here as git-lfs expects);
	// only what lockgate cannot classify is the server's failure.
	status := lfsStatusOf(outcome.Of(err, outcome.Context{}).Exit)
	var (
		auth     *serveusers.AuthError
		usage    *service.UsageError
		held     *locks.HeldError
		notOwner *locks.NotOwnerError
		notFound *service.LFSNotFoundError
		tooBig   *http.MaxBytesError
		limited  *RateLimitedError
		quota    *locks.RateLimitedError
		site     *CrossSiteError
		media    *MediaTypeError
		forced   *lockops.ForceRefusedError
		misdir   *MisdirectedError
	)
	switch {
	case errors.As(err, &misdir):
		status = http.StatusMisdirectedRequest
	case errors.As(err, &site):
		status = http.StatusForbidden
	case errors.As(err, &media):
		status = http.StatusUnsupportedMediaType
	case errors.As(err, &limited):
		status = http.StatusTooManyRequests
		w.Header().Set("Retry-After", retryAfter(limited.Retry))
	case errors.As(err, &quota):
		status = http.StatusTooManyRequests
		w.Header().Set("Retry-After", retryAfter(quota.Window))
	case errors.As(err, &auth):
		status = http.StatusUnauthorized
		w.Header().Set("LFS-Authenticate", `Basic realm="lockgate"`)
	case errors.As(err, &held):
		status = http.StatusConflict
		l := service.LFSLockOf(held.Lock)
		body.Lock = &l
		// git-lfs shows the message alone: it names the holder and the
		// commands that end the lock, as the path git-lfs knows it by.
		body.Message = fmt.Sprintf("cannot lock %s: it is held by %s (%s) until %s: ask %s to run `git lfs unlock %s`; an admin of the server can remove it with `git lfs unlock --force %s` (logged)",
			l.Path, held.Lock.Holder, held.Lock.HolderType, held.Lock.ExpiresAt.UTC().Format(time.RFC3339), held.Lock.Holder,
			lfsArg(l.Path), lfsArg(l.Path))
	case errors.As(err, &notOwner):
		status = http.StatusForbidden
		p := service.LFSLockOf(notOwner.Lock).Path
		body.Message = fmt.Sprintf("%s is locked by %s: an admin of the server can clear another worker's lock with `git lfs unlock --force %s` (logged)", p, notOwner.Lock.Holder, lfsArg(p))
	case errors.As(err, &forced):
		// git-lfs shows the message alone: the rule, and how it is met.
		status = http.StatusForbidden
		p := service.LFSLockOf(forced.Lock).Path
		how := fmt.Sprintf("ask %s to run `git lfs unlock %s`; an operator of the server can add an admin, who may: `lockgate serve user add NAME --admin`", forced.Lock.Holder, lfsArg(p))
		if forced.Rule == lockops.ForceRuleAgentsClearHuman {
			how = fmt.Sprintf("ask %s to run `git lfs unlock %s`, or let agents clear people's locks: locks.agents_clear_human: true in the committed .lockgate.yaml", forced.Lock.Holder, lfsArg(p))
		}
		body.Message = err.Error() + ": " + how
	case errors.As(err, &notFound):
		status = http.StatusNotFound
	case errors.As(err, &tooBig):
		status = http.StatusRequestEntityTooLarge
	case errors.As(err, &usage), errors.Is(err, errBadRequest):
		status = http.StatusUnprocessableEntity
	}
	if status >= http.StatusInternalServerError {
		s.opts.Log("%s %s (request %s): %s", logField(r.Method), logField(r.URL.Path), rid, safetext.Field(err.Error()))
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body) // the client gone: nothing to tell
}

// lfsArg is path p as an argument of a git lfs command in a message:
// quoted for a shell, after "--" when it would read as an option.
func lfsArg(p string) string {
	if strings.HasPrefix(p, "-") {
		return "-- " + hint.Quote(p)
	}
	return hint.Quote(p)
}

// lfsStatusOf is the git-lfs API's status of an exit code: as statusOf,
// but a usage error is 422, the status git-lfs shows the message of.
func lfsStatusOf(exit int) int {
	if exit == outcome.ExitUsage {
		return http.StatusUnprocessableEntity
	}
	return statusOf(exit)
}

// errBadRequest is a body that is not the JSON the route takes.
var errBadRequest = errors.New("bad request")

// decode reads r's body, bounded by maxBody, into v: exactly one JSON
// object, with no field v does not take and nothing after it. A client
// that sends more than the request takes is refused rather than half
// understood: the fields and bytes around a form's field (a text/plain
// form posts `{"force":true,"x":"="}`) are how a page of another site
// writes JSON, and a field ignored today could mean something tomorrow.
func decode(r *http.Request, v any) error {
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return fmt.Errorf("%w: reading the body: %v", errBadRequest, err)
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("%w: the body must be one JSON object", errBadRequest)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: the body is not the JSON this request takes: %v", errBadRequest, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: the body holds more than one JSON object", errBadRequest)
	}
	return nil
}

// requestID names one request in its error and in the server's log.
func requestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux ≥ 3.17
	return hex.EncodeToString(b[:])
}

// limitOf is the limit parameter, 0 when absent.
func limitOf(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: limit %q is not a count", errBadRequest, s)
	}
	return n, nil
}

// WithTLS is ln answering HTTPS with the certificate (chain) in certFile
// and its private key in keyFile, both PEM.
func WithTLS(ln net.Listener, certFile, keyFile string) (net.Listener, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("the TLS certificate and key: %w", err)
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), nil
}
