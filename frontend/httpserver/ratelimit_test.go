package httpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRateLimit: each user has a bucket of its own, and requests without
// a valid token share their address's; an empty bucket is 429 with
// Retry-After and the error object, until it fills again.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	limit := RateLimit{PerSecond: 0.5, Burst: 3}
	// The clock is moved only between requests.
	clock := func() time.Time { return now }
	srv, s, tokens := storeServerOf(t, "file", 2, Options{PublicRead: true, RateLimit: limit}, nil)
	s.limits = newLimiter(limit, clock)

	for i := range 3 {
		if status, body, err := send(srv, "GET", "/api/v1/locks", "u0", tokens[0], ""); err != nil || status != http.StatusOK {
			t.Fatalf("u0's request %d: %d %v %s", i+1, status, err, body)
		}
	}
	for _, path := range []string{"/api/v1/locks", "/lfs/locks", "/board.json"} {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.SetBasicAuth("u0", tokens[0])
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "2" {
			t.Fatalf("u0 over its rate on %s: %d Retry-After %q %v %v", path, res.StatusCode, res.Header.Get("Retry-After"), err, body)
		}
		if path == "/lfs/locks" {
			if msg, _ := body["message"].(string); !strings.Contains(msg, "rate limited: user u0") || body["request_id"] == "" {
				t.Errorf("git-lfs error %v", body)
			}
			continue
		}
		e, _ := body["error"].(map[string]any)
		if e["code"] != 5.0 || e["class"] != "rate_limited" || !strings.Contains(e["message"].(string), "user u0") {
			t.Errorf("JSON API error %v", body)
		}
	}
	// Another user's bucket is its own.
	if status, body, err := send(srv, "POST", "/api/v1/locks", "u1", tokens[1], `{"keys":["a.bin"]}`); err != nil || status != http.StatusOK {
		t.Fatalf("u1: %d %v %s", status, err, body)
	}
	// Public reads, refused tokens and the check of a token against its
	// hash (the first request of u0's and of u1's token: two of the three)
	// spend the address's bucket.
	if status, body, err := send(srv, "GET", "/api/v1/locks", "", "", ""); err != nil || status != http.StatusOK {
		t.Fatalf("a public read from the address: %d %v %s", status, err, body)
	}
	// A wrong secret of a real user would be checked against the hash:
	// with the address's bucket empty it is refused before that.
	wrong := tokens[1][:len(tokens[1])-2] + "xx"
	if status, body, err := send(srv, "GET", "/api/v1/locks", "u1", wrong, ""); err != nil || status != http.StatusTooManyRequests {
		t.Fatalf("a wrong token from the address over its rate: %d %v %s", status, err, body)
	}
	if status, body, err := send(srv, "GET", "/api/v1/locks", "", "", ""); err != nil || status != http.StatusTooManyRequests || !strings.Contains(string(body), "address 127.0.0.1") {
		t.Fatalf("the address over its rate: %d %v %s", status, err, body)
	}
	if status, _, err := send(srv, "GET", "/", "", "", ""); err != nil || status != http.StatusTooManyRequests {
		t.Fatalf("the board page from the address over its rate: %d %v", status, err)
	}
	// Two seconds on, each bucket holds one request again.
	now = now.Add(2 * time.Second)
	if status, body, err := send(srv, "GET", "/api/v1/locks", "u0", tokens[0], ""); err != nil || status != http.StatusOK {
		t.Fatalf("u0 after the wait: %d %v %s", status, err, body)
	}
	if status, body, err := send(srv, "GET", "/api/v1/locks", "u0", tokens[0], ""); err != nil || status != http.StatusTooManyRequests {
		t.Fatalf("u0 again: %d %v %s", status, err, body)
	}
}

// TestRateLimitOff: the zero limit admits every request.
func TestRateLimitOff(t *testing.T) {
	t.Parallel()
	l := newLimiter(RateLimit{}, time.Now)
	for range 1000 {
		if _, ok := l.take("user a"); !ok {
			t.Fatal("refused without a limit")
		}
	}
}

// TestLimiterForgetsFullBuckets: the buckets of clients gone quiet are
// dropped, so that the server's memory does not grow with each address.
func TestLimiterForgetsFullBuckets(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	l := newLimiter(RateLimit{PerSecond: 1, Burst: 2}, func() time.Time { return now })
	for i := range 100 {
		l.take("address 10.0.0." + string(rune('0'+i%10)) + string(rune('0'+i/10)))
	}
	now = now.Add(sweepEvery)
	l.take("user a")
	if len(l.buckets) != 1 {
		t.Fatalf("%d buckets after the sweep, want the one just used", len(l.buckets))
	}
}

func TestRateLimitCheck(t *testing.T) {
	t.Parallel()
	for _, l := range []RateLimit{{PerSecond: -1, Burst: 1}, {PerSecond: 1, Burst: 0}} {
		if l.Check() == nil {
			t.Errorf("%+v: no error", l)
		}
	}
	for _, l := range []RateLimit{{}, DefaultRateLimit, {PerSecond: 0.1, Burst: 1}} {
		if err := l.Check(); err != nil {
			t.Errorf("%+v: %v", l, err)
		}
	}
}

// TestStoreQuotaIs429: the Redis store's own quota (LOCK_RATE_LIMIT_PER_MIN)
// is 429 with Retry-After on both APIs, not a server error.
func TestStoreQuotaIs429(t *testing.T) {
	t.Parallel()
	srv, tokens := storeServer(t, "redis", 1, Options{}, map[string]string{"LOCK_RATE_LIMIT_PER_MIN": "1"})
	if status, body, err := send(srv, "POST", "/lfs/locks", "u0", tokens[0], `{"path":"a.bin"}`); err != nil || status != http.StatusCreated {
		t.Fatalf("the first lock: %d %v %s", status, err, body)
	}
	for _, req := range [][2]string{{"/lfs/locks", `{"path":"b.bin"}`}, {"/api/v1/locks", `{"keys":["c.bin"]}`}} {
		r, _ := http.NewRequest("POST", srv.URL+req[0], strings.NewReader(req[1]))
		r.SetBasicAuth("u0", tokens[0])
		r.Header.Set("Content-Type", "application/json")
		res, err := srv.Client().Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "60" {
			t.Errorf("POST %s over the store's quota: %d Retry-After %q %v %v", req[0], res.StatusCode, res.Header.Get("Retry-After"), err, body)
		}
	}
}

// keysBody is the JSON body of an acquire or refresh of keys k0…k(n-1).
func keysBody(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%q", fmt.Sprintf("k/%d.bin", i))
	}
	return `{"keys":[` + strings.Join(keys, ",") + `]}`
}

// TestRateCountsKeys: each key of an acquire or refresh spends one
// request of its user's bucket, so one request of many keys costs what
// as many requests would; a request of more keys than the bucket holds
// at once is refused whole (413), as it could never be admitted.
func TestRateCountsKeys(t *testing.T) {
	t.Parallel()
	limit := RateLimit{PerSecond: 1.0 / 3600, Burst: 10}
	srv, _, tokens := storeServerOf(t, "file", 1, Options{RateLimit: limit}, nil)
	if status, body, err := send(srv, "POST", "/api/v1/locks", "u0", tokens[0], keysBody(6)); err != nil || status != http.StatusOK {
		t.Fatalf("6 keys: %d %v %s", status, err, cut(body))
	}
	// 4 of 10 left: a refresh of 5 keys is over the rate.
	if status, body, err := send(srv, "POST", "/api/v1/locks/refresh", "u0", tokens[0], keysBody(5)); err != nil || status != http.StatusTooManyRequests ||
		!strings.Contains(string(body), "rate limited: user u0") {
		t.Fatalf("5 more keys: %d %v %s, want 429", status, err, cut(body))
	}
	if status, body, err := send(srv, "GET", "/api/v1/locks", "u0", tokens[0], ""); err != nil || status != http.StatusOK {
		t.Fatalf("a read within the rate: %d %v %s", status, err, cut(body))
	}
	if status, body, err := send(srv, "POST", "/api/v1/locks", "u0", tokens[0], keysBody(11)); err != nil || status != http.StatusRequestEntityTooLarge ||
		!strings.Contains(string(body), "--rate-burst") {
		t.Fatalf("11 keys: %d %v %s, want 413 naming the burst", status, err, cut(body))
	}
}

// TestKeysPerRequestCapped: one acquire or refresh takes at most
// maxAPIKeys keys; more is refused whole (413), nothing taken.
func TestKeysPerRequestCapped(t *testing.T) {
	t.Parallel()
	srv, _, tokens := storeServerOf(t, "file", 1, Options{}, nil)
	for _, path := range []string{"/api/v1/locks", "/api/v1/locks/refresh"} {
		status, body, err := send(srv, "POST", path, "u0", tokens[0], keysBody(maxAPIKeys+1))
		if err != nil || status != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), fmt.Sprintf("at most %d keys", maxAPIKeys)) {
			t.Fatalf("POST %s of %d keys: %d %v %s, want 413", path, maxAPIKeys+1, status, err, cut(body))
		}
	}
	if status, body, err := send(srv, "GET", "/api/v1/locks", "u0", tokens[0], ""); err != nil || status != http.StatusOK || string(body) != "[]\n" {
		t.Fatalf("after the refusals: %d %v %s, want no lock", status, err, cut(body))
	}
	if status, body, err := send(srv, "POST", "/api/v1/locks", "u0", tokens[0], keysBody(maxAPIKeys)); err != nil || status != http.StatusOK {
		t.Fatalf("%d keys: %d %v %s", maxAPIKeys, status, err, cut(body))
	}
}

// cut is the start of a body, for a message.
func cut(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
