package httpserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/serveusers"
)

// apiDo sends one JSON API request and returns its status and decoded
// body; the body must be JSON of the API's content type.
func apiDo(t *testing.T, srv *httptest.Server, method, path, token, body string) (int, http.Header, any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: the body is not JSON: %v", method, path, err)
	}
	if ct := res.Header.Get("Content-Type"); ct != apiType {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return res.StatusCode, res.Header, out
}

func TestJSONAPI(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name, method, path, token, body string
		srv                             *httptest.Server
		status                          int
		class                           string // of the error, when status ≥ 400
		has                             string // in the body
	}{
		{name: "no token", method: "GET", path: "/api/v1/locks", status: 401, class: "unauthorized"},
		{name: "wrong token", method: "GET", path: "/api/v1/locks", token: "lgs_00_x", status: 401, class: "unauthorized"},
		{name: "public read", srv: f.publicServer, method: "GET", path: "/api/v1/locks", status: 200},
		{name: "public read, no write", srv: f.publicServer, method: "POST", path: "/api/v1/locks", body: `{"keys":["a.bin"]}`, status: 401, class: "unauthorized"},
		{name: "acquire", method: "POST", path: "/api/v1/locks", token: f.alice, body: `{"keys":["a.bin","env:staging"],"ttl":"2h","reason":"<img src=x>"}`, status: 200, has: `"holder":"alice"`},
		{name: "listed", method: "GET", path: "/api/v1/locks", token: f.bob, status: 200, has: `"reason":"\u003cimg src=x\u003e"`},
		{name: "held", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{"keys":["a.bin"]}`, status: 409, class: "busy", has: `"held_by":{`},
		{name: "bob's release of alice's lock", method: "DELETE", path: "/api/v1/locks/a.bin", token: f.bob, status: 403, class: "not_owner"},
		{name: "a namespace not permitted", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{"keys":["nope:x"]}`, status: 403, class: "operation_not_permitted"},
		{name: "invalid key", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{"keys":["env:"]}`, status: 400, class: "invalid_key"},
		{name: "outside the repository", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{"keys":["../../etc/passwd"]}`, status: 400},
		{name: "no keys", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{}`, status: 400, class: "invalid_argument"},
		{name: "bad ttl", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{"keys":["b.bin"],"ttl":"soon"}`, status: 400, class: "invalid_argument"},
		{name: "wait too long", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{"keys":["b.bin"],"wait":"1h"}`, status: 400, class: "invalid_argument"},
		{name: "not JSON", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{"keys":`, status: 400, class: "invalid_argument"},
		{name: "too big", method: "POST", path: "/api/v1/locks", token: f.bob, body: `{"keys":["` + strings.Repeat("a", maxBody) + `"]}`, status: 413, class: "invalid_argument"},
		{name: "bad force", method: "DELETE", path: "/api/v1/locks/a.bin?force=maybe", token: f.bob, status: 400, class: "invalid_argument"},
		{name: "no such route", method: "GET", path: "/api/v1/nope", token: f.bob, status: 404, class: "not_found"},
		{name: "events", method: "GET", path: "/api/v1/events?worker=alice&key=a.bin", token: f.bob, status: 200, has: `"action":"lock_acquire"`},
		{name: "events, bad since", method: "GET", path: "/api/v1/events?since=yesterday", token: f.bob, status: 400, class: "invalid_argument"},
		{name: "events, bad until", method: "GET", path: "/api/v1/events?until=1h", token: f.bob, status: 400, class: "invalid_argument"},
		{name: "events, bad limit", method: "GET", path: "/api/v1/events?limit=-1", token: f.bob, status: 400, class: "invalid_argument"},
		{name: "packages", method: "GET", path: "/api/v1/packages", token: f.bob, status: 200, has: `"id":"WP-1"`},
		{name: "release a key not locked", method: "DELETE", path: "/api/v1/locks/b.bin", token: f.bob, status: 200, has: `"missing":["b.bin"]`},
		{name: "release", method: "DELETE", path: "/api/v1/locks/env:staging", token: f.alice, status: 200, has: `"released":[{`},
		{name: "clear another's lock, no admin", method: "DELETE", path: "/api/v1/locks/a.bin?force=true", token: f.bob, status: 403, class: "operation_not_permitted", has: "serve user add NAME --admin"},
		{name: "clear another's lock", method: "DELETE", path: "/api/v1/locks/a.bin?force=true", token: f.root, status: 200, has: `"cleared":{`},
		{name: "events: the clear", method: "GET", path: "/api/v1/events?since=1h&limit=1", token: f.bob, status: 200, has: `"worker":"root"`},
		{name: "nothing left", method: "GET", path: "/api/v1/locks", token: f.alice, status: 200, has: `[]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.srv
			if srv == nil {
				srv = f.srv
			}
			status, h, body := apiDo(t, srv, tc.method, tc.path, tc.token, tc.body)
			raw, _ := json.Marshal(body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, raw)
			}
			if tc.has != "" && !strings.Contains(string(raw), tc.has) {
				t.Errorf("body %s lacks %s", raw, tc.has)
			}
			if status < 400 {
				return
			}
			obj, ok := body.(map[string]any)["error"].(map[string]any)
			if !ok {
				t.Fatalf("error body %s is not {error: {...}}", raw)
			}
			for _, field := range []string{"code", "class", "message", "hints", "request_id"} {
				if _, ok := obj[field]; !ok {
					t.Errorf("error %s lacks %s", raw, field)
				}
			}
			if tc.class != "" && obj["class"] != tc.class {
				t.Errorf("class %v, want %s", obj["class"], tc.class)
			}
			if status == 401 && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic") {
				t.Errorf("WWW-Authenticate %q", h.Get("WWW-Authenticate"))
			}
		})
	}
}

// TestStatusOf: each exit code answers with its documented status.
func TestStatusOf(t *testing.T) {
	for exit, want := range map[int]int{0: 200, 1: 409, 2: 400, 3: 503, 4: 409, 5: 429, 6: 403, 130: 503} {
		if got := statusOf(exit); got != want {
			t.Errorf("exit %d: status %d, want %d", exit, got, want)
		}
	}
}

// TestRequestLog: one line per request with its method, path, status,
// user and id; never a token, in a header, the URL's query or a body.
func TestRequestLog(t *testing.T) {
	ctx := context.Background()
	r := gittest.New(t)
	r.Write("a.bin", "a\n")
	r.Commit("init")
	e, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "server", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.Open(ctx, service.Purpose{TakesLocks: true, Server: true}); err != nil {
		t.Fatal(err)
	}
	added, err := e.Users().Add(serveusers.AddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		lines []string
	)
	srv := startServer(t, e, Options{Log: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}})

	apiDo(t, srv, "POST", "/api/v1/locks?token="+added.Token, added.Token, `{"keys":["a.bin"],"reason":"`+added.Token+`"}`)
	status, _, _ := apiDo(t, srv, "GET", "/api/v1/locks", "wrong-"+added.Token, "")
	if status != 401 {
		t.Fatalf("a wrong token: %d", status)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/lfs/locks", nil)
	req.SetBasicAuth("alice", added.Token)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want one per request: %q", len(lines), lines)
	}
	for i, want := range []string{"POST /api/v1/locks 200 user=alice ", "GET /api/v1/locks 401 user=- ", "GET /lfs/locks 200 user=alice "} {
		if !strings.HasPrefix(lines[i], want) || !strings.Contains(lines[i], " request=") {
			t.Errorf("line %q, want it to start %q and name the request", lines[i], want)
		}
	}
	secret := strings.TrimPrefix(added.Token, "lgs_")
	for _, l := range lines {
		if strings.Contains(l, added.Token) || strings.Contains(l, secret) {
			t.Errorf("a token logged: %q", l)
		}
	}
}

// TestTLS serves HTTPS with a certificate made here, to a client that
// trusts only it.
func TestTLS(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	pool := selfSigned(t, certFile, keyFile)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl, err := WithTLS(ln, certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	// The untrusting client's handshake fails on purpose: not logged.
	srv := &http.Server{Handler: New(f.e, Options{Addr: ln.Addr().String()}).Handler(), ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.Serve(tl) }()
	t.Cleanup(func() { _ = srv.Close() })

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	req, _ := http.NewRequest("GET", "https://"+ln.Addr().String()+"/api/v1/locks", nil)
	req.Header.Set("Authorization", "Bearer "+f.alice)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.TLS == nil {
		t.Fatalf("over HTTPS: %s, TLS %v", res.Status, res.TLS != nil)
	}
	// A client that does not trust the certificate is refused.
	if _, err := http.Get("https://" + ln.Addr().String() + "/healthz"); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
	if _, err := WithTLS(ln, keyFile, certFile); err == nil {
		t.Fatal("a key given as the certificate was accepted")
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, PEM, and
// returns a pool that trusts it.
func selfSigned(t *testing.T, certFile, keyFile string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lockgate test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}
