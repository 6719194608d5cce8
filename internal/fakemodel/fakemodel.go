package fakemodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Call is one tool call the model makes.
type Call struct {
	// Name is the tool's name as the harness declares it.
	Name string
	// Args is the call's arguments (a JSON object) for a function tool.
	Args map[string]any
	// Input, with Custom set, is the raw input of a custom (freeform) tool
	// of the Responses API, such as Codex's apply_patch.
	Input  string
	Custom bool
}

// ArgsJSON is the call's arguments encoded as a JSON object.
func (c Call) ArgsJSON() string {
	if c.Args == nil {
		return "{}"
	}
	// As a model writes it: no HTML escaping of <, > and &.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c.Args); err != nil {
		panic(fmt.Sprintf("fakemodel: tool args of %s: %v", c.Name, err))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Script says how the model answers.
type Script struct {
	// Calls are made in order, one per model request: a request that
	// offers the next call's tool (by name) gets that call.
	Calls []Call
	// Final is the text of every other answer; "done" when empty.
	Final string
}

// Request is one HTTP request the server received.
type Request struct {
	Method string
	Path   string // path and query
	Header http.Header
	Body   []byte
	// API is the protocol the request was taken for: "anthropic", "chat",
	// "responses", "gemini", or "" for anything else (answered 404 or with
	// a stub).
	API string
	// Offered is the names of the tools the request offered the model.
	Offered []string
	// Answered is the index in Script.Calls of the call this request was
	// answered with, or -1 for a text answer or a non-model request.
	Answered int
}

// Server is a running scripted model.
type Server struct {
	// URL is the server's root, http://127.0.0.1:PORT, without a slash.
	URL string

	srv    *httptest.Server
	script Script

	mu     sync.Mutex
	next   int // next call of the script
	ids    int
	reqs   []Request
	closed bool
}

// Start starts a server that answers by script; it is closed when the test
// ends.
func Start(t testing.TB, script Script) *Server {
	t.Helper()
	s := New(script)
	t.Cleanup(s.Close)
	return s
}

// New starts a server outside a test; Close stops it.
func New(script Script) *Server {
	if script.Final == "" {
		script.Final = "done"
	}
	s := &Server{script: script}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// Listen on IPv4 loopback explicitly: some harnesses resolve
	// "localhost" to ::1 first.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("fakemodel: listen: %v", err))
	}
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Requests is every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// CallsMade is how many of the script's calls have been sent.
func (s *Server) CallsMade() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

// AfterCall is the model requests received after the one answered with
// Script.Calls[i]: the first of them normally carries that call's result.
func (s *Server) AfterCall(i int) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, r := range s.reqs {
		if r.Answered == i {
			var out []Request
			for _, q := range s.reqs[k+1:] {
				if q.API != "" {
					out = append(out, q)
				}
			}
			return out
		}
	}
	return nil
}

// SawAfterCalls reports whether a model request received after the last
// scripted call was sent contains text in its body (JSON-escaped or not).
func (s *Server) SawAfterCalls(text string) bool {
	n := len(s.script.Calls)
	if n == 0 {
		return false
	}
	for _, r := range s.AfterCall(n - 1) {
		if BodyContains(r.Body, text) {
			return true
		}
	}
	return false
}

// BodyContains reports whether a JSON body contains text, literally or as
// it is escaped inside a JSON string (once, or twice for a tool result that
// is itself a JSON string), with or without HTML escaping.
func BodyContains(body []byte, text string) bool {
	for _, html := range []bool{false, true} {
		once := jsonEscape(text, html)
		for _, v := range []string{text, once, jsonEscape(once, html)} {
			if bytes.Contains(body, []byte(v)) {
				return true
			}
		}
	}
	return false
}

// jsonEscape is s as it appears inside a JSON string, without the quotes.
func jsonEscape(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// Describe is a short listing of the requests, for failure messages.
func (s *Server) Describe() string {
	var b strings.Builder
	for i, r := range s.Requests() {
		what := "text"
		switch {
		case r.API == "":
			what = "stub"
		case r.Answered >= 0:
			what = "call " + s.script.Calls[r.Answered].Name
		}
		fmt.Fprintf(&b, "%d: %s %s api=%s tools=%v -> %s (%d bytes)\n", i, r.Method, r.Path, r.API, r.Offered, what, len(r.Body))
	}
	return b.String()
}

// answer decides, under the lock, the reply to a model request that offers
// the named tools: the index of a scripted call, or -1 for text.
func (s *Server) answer(offered []string) int {
	if s.next >= len(s.script.Calls) {
		return -1
	}
	want := s.script.Calls[s.next].Name
	for _, o := range offered {
		if o == want {
			s.next++
			return s.next - 1
		}
	}
	return -1
}

func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s%06d", prefix, s.ids)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := Request{Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body, Answered: -1}
	p := r.URL.Path
	var api string
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages/count_tokens"):
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/messages"):
		api = "anthropic"
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/chat/completions"):
		api = "chat"
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/responses"):
		api = "responses"
	case r.Method == http.MethodPost && (strings.HasSuffix(p, ":streamGenerateContent") || strings.HasSuffix(p, ":generateContent")):
		api = "gemini"
	}
	var req map[string]any
	if api != "" {
		if err := json.Unmarshal(body, &req); err != nil {
			api = ""
		}
	}
	rec.API = api
	if api != "" {
		rec.Offered = offeredTools(api, req)
	}
	s.mu.Lock()
	if api != "" {
		rec.Answered = s.answer(rec.Offered)
	}
	s.reqs = append(s.reqs, rec)
	s.mu.Unlock()

	var call *Call
	if rec.Answered >= 0 {
		c := s.script.Calls[rec.Answered]
		call = &c
	}
	model, _ := req["model"].(string)
	if api == "gemini" {
		if i := strings.LastIndex(p, "/models/"); i >= 0 {
			model, _, _ = strings.Cut(p[i+len("/models/"):], ":")
		}
	}
	if model == "" {
		model = "fake-model"
	}
	stream, _ := req["stream"].(bool)
	switch api {
	case "anthropic":
		s.anthropic(w, model, stream, call)
	case "chat":
		s.chat(w, model, stream, call)
	case "responses":
		s.responses(w, model, stream, call)
	case "gemini":
		s.gemini(w, model, strings.HasSuffix(p, ":streamGenerateContent"), call)
	default:
		s.stub(w, r)
	}
}

// offeredTools reads the names of the tools a request declares.
func offeredTools(api string, req map[string]any) []string {
	var names []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		m, _ := t.(map[string]any)
		switch api {
		case "chat":
			if f, ok := m["function"].(map[string]any); ok {
				if n, ok := f["name"].(string); ok {
					names = append(names, n)
				}
			}
		case "gemini":
			decls, _ := m["functionDeclarations"].([]any)
			for _, d := range decls {
				dm, _ := d.(map[string]any)
				if n, ok := dm["name"].(string); ok {
					names = append(names, n)
				}
			}
		default:
			if n, ok := m["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

// stub answers the side endpoints harnesses call besides the model.
func (s *Server) stub(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 100})
	case strings.HasSuffix(p, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 100})
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "fake-model", "object": "model", "created": 1700000000, "owned_by": "fakemodel"},
		}, "models": []any{}})
	case p == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		// Claude Code checks that the base URL answers.
		w.WriteHeader(http.StatusOK)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"message":"fakemodel: no such endpoint","type":"not_found"}}`)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events; an empty event name writes data only.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func startSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) event(name string, data any) {
	var b []byte
	switch d := data.(type) {
	case string:
		b = []byte(d)
	default:
		var err error
		if b, err = json.Marshal(d); err != nil {
			panic(err)
		}
	}
	if name != "" {
		fmt.Fprintf(e.w, "event: %s\n", name)
	}
	fmt.Fprintf(e.w, "data: %s\n\n", b)
	if e.f != nil {
		e.f.Flush()
	}
}
