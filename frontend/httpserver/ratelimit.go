package httpserver

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is a token bucket: each user (and, for requests without a
// valid token, each client address) may send Burst requests at once and
// PerSecond a second on average. A PerSecond of 0 is no limit.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// DefaultRateLimit is `lockgate serve`'s limit unless --rate-limit and
// --rate-burst say otherwise: far above what a person or a git-lfs
// client sends, low enough that one runaway script cannot starve the
// others.
var DefaultRateLimit = RateLimit{PerSecond: 50, Burst: 100}

// Check refuses a limit that could never admit a request.
func (l RateLimit) Check() error {
	switch {
	case l.PerSecond < 0 || math.IsNaN(l.PerSecond) || math.IsInf(l.PerSecond, 0):
		return fmt.Errorf("rate limit %v: give requests a second, 0 or more (0: no limit)", l.PerSecond)
	case l.PerSecond > 0 && l.Burst < 1:
		return fmt.Errorf("rate burst %d: give at least 1 request", l.Burst)
	}
	return nil
}

// sweepEvery is how often the buckets of quiet clients are forgotten.
const sweepEvery = time.Minute

// limiter holds a bucket per user and client address.
type limiter struct {
	limit RateLimit
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	swept   time.Time
}

func newLimiter(l RateLimit, now func() time.Time) *limiter {
	return &limiter{limit: l, now: now, buckets: map[string]*rate.Limiter{}, swept: now()}
}

// take spends one request of who's bucket; when it is empty, nothing is
// spent and retry is how long until it holds one again.
func (l *limiter) take(who string) (retry time.Duration, ok bool) {
	return l.takeN(who, 1)
}

// takeN spends n requests of who's bucket, all or none; retry is how long
// until it holds n again (n is at most the burst: see maxKeys).
func (l *limiter) takeN(who string, n int) (retry time.Duration, ok bool) {
	if l.limit.PerSecond == 0 || n <= 0 {
		return 0, true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.swept) >= sweepEvery {
		// A full bucket is what a new one would be: forgetting it loses
		// nothing, and the map does not grow with every address seen.
		for k, b := range l.buckets {
			if b.TokensAt(now) >= float64(l.limit.Burst) {
				delete(l.buckets, k)
			}
		}
		l.swept = now
	}
	b, found := l.buckets[who]
	if !found {
		b = rate.NewLimiter(rate.Limit(l.limit.PerSecond), l.limit.Burst)
		l.buckets[who] = b
	}
	if b.AllowN(now, n) {
		return 0, true
	}
	// The bucket fills at PerSecond: the missing part of n requests
	// takes this long.
	missing := float64(n) - b.TokensAt(now)
	return time.Duration(missing / l.limit.PerSecond * float64(time.Second)), false
}

// RateLimitedError is a request over its user's (or address's) rate.
type RateLimitedError struct {
	// Who is "user NAME" or "address HOST".
	Who   string
	Limit RateLimit
	// Retry is how long until the bucket holds a request again.
	Retry time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("rate limited: %s sent more than %d requests (each key of an acquire or refresh counts as one) at once or %s a second; retry in %s",
		e.Who, e.Limit.Burst, strconv.FormatFloat(e.Limit.PerSecond, 'f', -1, 64), e.Retry.Round(time.Millisecond))
}

// retryAfter is d as a Retry-After header's whole seconds, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// admit spends one request of the bucket of r's user, or of its client
// address when no token named one (a public read, a refused token) and
// the address has not already paid for checking the token.
func (s *Server) admit(r *http.Request) error {
	info, _ := r.Context().Value(reqInfoKey{}).(*reqInfo)
	switch {
	case info != nil && info.user != "":
		return s.spend("user " + info.user)
	case info != nil && info.hashed:
		return nil
	}
	return s.admitAddress(r)
}

// admitAddress spends one request of the bucket of r's client address.
func (s *Server) admitAddress(r *http.Request) error {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return s.spend("address " + host)
}

// spend takes one request from who's bucket.
func (s *Server) spend(who string) error {
	return s.spendN(who, 1)
}

// spendN takes n requests from who's bucket, all or none.
func (s *Server) spendN(who string, n int) error {
	if retry, ok := s.limits.takeN(who, n); !ok {
		return &RateLimitedError{Who: who, Limit: s.limits.limit, Retry: retry}
	}
	return nil
}

// maxAPIKeys bounds the keys of one acquire or refresh of the JSON API:
// each key is a read and a write of the store (and an event), so one
// request of thousands would hold the server for seconds and take as
// many locks as thousands of requests, past the rate limit.
const maxAPIKeys = 100

// TooManyKeysError is an acquire or refresh of more keys than one request
// takes.
type TooManyKeysError struct {
	Keys, Max int
	// Burst: Max is the rate limit's burst, below maxAPIKeys.
	Burst bool
}

func (e *TooManyKeysError) Error() string {
	if e.Burst {
		return fmt.Sprintf("%d keys in one request: at most %d keys, as many as this server's --rate-burst lets one user send at once; send them in several requests", e.Keys, e.Max)
	}
	return fmt.Sprintf("%d keys in one request: at most %d keys a request; send them in several requests", e.Keys, e.Max)
}

// spendKeys admits the n keys of r's acquire or refresh: at most
// maxAPIKeys (and the burst), each spending one request of the user's
// bucket, of which admit spent the first.
func (s *Server) spendKeys(r *http.Request, n int) error {
	limit := s.limits.limit
	if limit.PerSecond > 0 && limit.Burst < maxAPIKeys && n > limit.Burst {
		return &TooManyKeysError{Keys: n, Max: limit.Burst, Burst: true}
	}
	if n > maxAPIKeys {
		return &TooManyKeysError{Keys: n, Max: maxAPIKeys}
	}
	info, _ := r.Context().Value(reqInfoKey{}).(*reqInfo)
	if info == nil || info.user == "" {
		return nil // writes have a user; no bucket to spend otherwise
	}
	return s.spendN("user "+info.user, n-1)
}
