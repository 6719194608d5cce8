package redisstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

func lockFor(key, session string, ttl time.Duration) locks.Lock {
	rec := locktest.NewLock(key, "alice", time.Now(), ttl)
	rec.Session = session
	return rec
}

// N acquisitions in the window pass, the next is rate limited; refusals,
// other sessions and a later window are not affected. The window must
// outlast the acquisitions made in it: on a machine too busy for that, the
// scenario runs again with a longer window, in a fresh key space.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	for window := 300 * time.Millisecond; ; window *= 4 {
		if rateLimitScenario(t, srv.URL(), window) {
			return
		}
		if window > time.Minute {
			t.Fatalf("five acquisitions never fit in a %s window", window)
		}
	}
}

// rateLimitScenario runs TestRateLimit's checks with one window; it
// returns false, having checked nothing that depends on the window, when
// the window ran out before the checks that need it were done.
func rateLimitScenario(t *testing.T, url string, window time.Duration) bool {
	ctx := context.Background()
	s := open(t, url, Options{Prefix: freshPrefix(t), RateLimitPerMin: 3, RateLimitWindow: window})
	other := open(t, url, Options{Prefix: s.Prefix(), RateLimitPerMin: 3, RateLimitWindow: window})
	start := time.Now()
	for i := range 3 {
		now := time.Now()
		if _, _, err := s.Acquire(ctx, lockFor(fmt.Sprintf("task:T-%d", i), "s1", time.Hour), now); err != nil {
			t.Fatalf("acquisition %d: %v", i+1, err)
		}
	}
	// A refusal is not an acquisition.
	now := time.Now()
	if _, _, err := s.Acquire(ctx, lockFor("task:T-0", "s1", time.Hour), now); !errors.As(err, new(*locks.HeldError)) {
		t.Fatalf("acquiring a held key: %v", err)
	}
	_, _, err := s.Acquire(ctx, lockFor("task:T-9", "s1", time.Hour), now)
	if time.Since(start) >= window {
		return false
	}
	var limited *locks.RateLimitedError
	if !errors.As(err, &limited) || limited.Limit != 3 || limited.Window != window {
		t.Fatalf("acquisition 4: %v; want *RateLimitedError{3, %s}", err, window)
	}
	if kind, _ := Classify(err); kind != KindRateLimited {
		t.Fatalf("Classify = %s", kind)
	}
	if _, err := s.Get(ctx, "task:T-9"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("a rate-limited acquisition left a record: %v", err)
	}
	// Another session, through another handle, has its own quota.
	if _, _, err := other.Acquire(ctx, lockFor("task:T-9", "s2", time.Hour), now); err != nil {
		t.Fatalf("another session: %v", err)
	}
	time.Sleep(window)
	if _, _, err := s.Acquire(ctx, lockFor("task:T-10", "s1", time.Hour), time.Now()); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	return true
}

func historyKeys(t *testing.T, s *Store, session string) []string {
	t.Helper()
	hist, err := s.History(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range hist {
		if e.Err != nil {
			t.Fatalf("history entry %s: %v", e.Key, e.Err)
		}
		keys = append(keys, e.Key)
	}
	return keys
}

func TestHistory(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{HistoryTTL: time.Hour})
	c := raw(t, srv.URL())
	recs := map[string]locks.Lock{}
	for _, k := range []string{"task:T-1", "src/a.go", "src/**", "claim"} {
		rec, _, err := s.Acquire(ctx, lockFor(k, "s1", time.Hour), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		recs[k] = rec
	}
	if _, _, err := s.Acquire(ctx, lockFor("task:T-2", "s2", time.Hour), time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, want := historyKeys(t, s, "s1"), []string{"claim", "src/**", "src/a.go", "task:T-1"}; !slices.Equal(got, want) {
		t.Fatalf("history = %q, want %q", got, want)
	}
	if ttl := c.PTTL(ctx, s.histKey("s1")).Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("history PTTL = %s, want HistoryTTL (1h)", ttl)
	}
	// A refresh is recorded: Restore needs the latest expiry.
	upd := recs["task:T-1"]
	upd.ExpiresAt = upd.ExpiresAt.Add(3 * time.Hour)
	if _, err := s.Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	hist, _ := s.History(ctx, "s1")
	if i := slices.IndexFunc(hist, func(e locks.Entry) bool { return e.Key == "task:T-1" }); i < 0 || !hist[i].ExpiresAt.Equal(upd.ExpiresAt) || hist[i].Fence != recs["task:T-1"].Fence {
		t.Fatalf("history after refresh: %+v", hist)
	}
	// Release and forced clear take keys out; a failed release does not.
	if err := s.Release(ctx, "src/a.go", locks.NewToken()); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "src/a.go", recs["src/a.go"].Token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Remove(ctx, "claim"); err != nil {
		t.Fatal(err)
	}
	if got, want := historyKeys(t, s, "s1"), []string{"src/**", "task:T-1"}; !slices.Equal(got, want) {
		t.Fatalf("history after release = %q, want %q", got, want)
	}
	// An expired lock stays in the history: it is what Restore brings back.
	short, _, err := s.Acquire(ctx, lockFor("task:T-3", "s1", time.Millisecond), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if _, _, err := s.Acquire(ctx, lockFor("task:T-3", "s3", time.Hour), time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := historyKeys(t, s, "s1"); !slices.Contains(got, short.Key) {
		t.Fatalf("history lost an expired lock that was taken over: %q", got)
	}
	if got := historyKeys(t, s, "s2"); !slices.Equal(got, []string{"task:T-2"}) {
		t.Fatalf("history of s2 = %q", got)
	}
	if got := historyKeys(t, s, "nobody"); len(got) != 0 {
		t.Fatalf("history of an unknown session = %q", got)
	}
}

func TestRestoreStopsWhenUnavailable(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	for _, k := range []string{"task:T-1", "task:T-2", "task:T-3"} {
		if _, _, err := s.Acquire(ctx, lockFor(k, "s1", time.Hour), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	calls := 0
	res, err := s.Restore(ctx, "s1", func(_ context.Context, req RestoreRequest) error {
		calls++
		if req.TTL <= 59*time.Minute || req.TTL > time.Hour {
			t.Errorf("TTL of a live lock = %s, want what it has left", req.TTL)
		}
		if calls == 2 {
			return &locks.UnavailableError{Store: "x", Err: errors.New("down")}
		}
		return nil
	})
	if !errors.As(err, new(*locks.UnavailableError)) || calls != 2 || !slices.Equal(res.Restored, []string{"task:T-1"}) ||
		!slices.Equal(res.Pending, []string{"task:T-2", "task:T-3"}) {
		t.Fatalf("Restore = %+v, %v after %d calls; want T-1 restored, T-2 and T-3 pending", res, err, calls)
	}
	// What it did not get to stays in the history.
	if got := historyKeys(t, s, "s1"); len(got) != 3 {
		t.Fatalf("history after the stopped restore = %q", got)
	}
	// A refusal is a skip that stays in the history.
	res, err = s.Restore(ctx, "s1", func(context.Context, RestoreRequest) error {
		return &locks.HeldError{Lock: locks.Lock{Key: "x", Holder: "bob"}}
	})
	if err != nil || len(res.Skipped) != 3 {
		t.Fatalf("Restore = %+v, %v", res, err)
	}
	if got := historyKeys(t, s, "s1"); len(got) != 3 {
		t.Fatalf("history after refusals = %q", got)
	}
}

// counter counts the commands and round trips a client sends.
type counter struct {
	mu    sync.Mutex
	trips int
	cmds  map[string]int
	reads int // records read by GET and MGET
}

func (c *counter) add(cmd redis.Cmder) {
	c.cmds[cmd.Name()]++
	switch cmd.Name() {
	case "get":
		c.reads++
	case "mget":
		c.reads += len(cmd.Args()) - 1
	}
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.mu.Lock()
		c.trips++
		c.add(cmd)
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.mu.Lock()
		c.trips++
		for _, cmd := range cmds {
			c.add(cmd)
		}
		c.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (c *counter) reset() {
	c.mu.Lock()
	c.trips, c.cmds, c.reads = 0, map[string]int{}, 0
	c.mu.Unlock()
}

// Acquire is one round trip; Covering, Overlapping and InNamespace read
// indexes and then only the records they return, never every key, and
// nothing runs KEYS or SCAN.
func TestRoundTripsAndReads(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	now := time.Now()
	for i := range 2000 {
		k := fmt.Sprintf("src/pkg%02d/file%04d.go", i%20, i)
		if _, _, err := s.Acquire(ctx, locktest.NewLock(k, "filler", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"src/pkg01/**", "docs/*.md", "flag:billing/*", "feature:F-1:pause", "feature:F-2:pause", "task:T-1"} {
		if _, _, err := s.Acquire(ctx, locktest.NewLock(k, "filler", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	c := &counter{}
	s.rdb.AddHook(c)
	check := func(name string, maxTrips, maxReads int, f func() ([]locks.Entry, error), want []string) {
		t.Helper()
		c.reset()
		entries, err := f()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := make([]string, len(entries))
		for i, e := range entries {
			got[i] = e.Key
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.trips > maxTrips || c.reads > maxReads || c.cmds["keys"]+c.cmds["scan"] > 0 {
			t.Errorf("%s: %d round trips, %d records read, commands %v; want ≤ %d trips, ≤ %d reads, no KEYS/SCAN",
				name, c.trips, c.reads, c.cmds, maxTrips, maxReads)
		}
	}
	check("Covering", 2, 3, func() ([]locks.Entry, error) {
		return s.Covering(ctx, []string{"src/pkg01/file0001.go", "src/pkg02/none.go"})
	}, []string{"src/pkg01/**", "src/pkg01/file0001.go"})
	check("Overlapping(path)", 2, 2, func() ([]locks.Entry, error) {
		return s.Overlapping(ctx, "src/pkg01/file0021.go")
	}, []string{"src/pkg01/**", "src/pkg01/file0021.go"})
	check("Overlapping(flag)", 2, 2, func() ([]locks.Entry, error) {
		return s.Overlapping(ctx, "flag:billing/x")
	}, []string{"flag:billing/*"})
	check("Overlapping(pattern)", 2, 2, func() ([]locks.Entry, error) {
		return s.Overlapping(ctx, "docs/**")
	}, []string{"docs/*.md"})
	check("InNamespace", 2, 2, func() ([]locks.Entry, error) {
		return s.InNamespace(ctx, "feature")
	}, []string{"feature:F-1:pause", "feature:F-2:pause"})
	c.reset()
	now = time.Now()
	if _, _, err := s.Acquire(ctx, locktest.NewLock("task:T-2", "w", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if c.trips != 1 || c.cmds["evalsha"] != 1 {
		t.Errorf("Acquire: %d round trips %v; want one EVALSHA", c.trips, c.cmds)
	}
}

func TestEnv(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	if u := URLFromEnv(env("REDIS_URL", "redis://b", "LOCK_REDIS_URL", "redis://a")); u != "redis://a" {
		t.Errorf("URLFromEnv prefers %q", u)
	}
	if u := URLFromEnv(env("REDIS_URL", "redis://b")); u != "redis://b" {
		t.Errorf("URLFromEnv = %q", u)
	}
	if u := URLFromEnv(env()); u != "" {
		t.Errorf("URLFromEnv = %q", u)
	}
	o, err := OptionsFromEnv(env("LOCK_RATE_LIMIT_PER_MIN", "30", "LOCK_RATE_LIMIT_WINDOW_MS", "10000", "LOCK_HISTORY_TTL_SEC", " 3600 "))
	if err != nil || o.RateLimitPerMin != 30 || o.RateLimitWindow != 10*time.Second || o.HistoryTTL != time.Hour {
		t.Errorf("OptionsFromEnv = %+v, %v", o, err)
	}
	if o, err := OptionsFromEnv(env()); err != nil || !reflect.DeepEqual(o, Options{}) {
		t.Errorf("OptionsFromEnv of nothing = %+v, %v", o, err)
	}
	for _, kv := range [][2]string{
		{"LOCK_RATE_LIMIT_PER_MIN", "-1"}, {"LOCK_RATE_LIMIT_PER_MIN", "ten"},
		{"LOCK_RATE_LIMIT_WINDOW_MS", "0"}, {"LOCK_HISTORY_TTL_SEC", "1.5"},
	} {
		if _, err := OptionsFromEnv(env(kv[0], kv[1])); err == nil || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("OptionsFromEnv(%s=%s) = %v; want an error naming it", kv[0], kv[1], err)
		}
	}
	if _, ok, err := TTLFromEnv(env()); ok || err != nil {
		t.Errorf("TTLFromEnv unset = %v, %v; want none", ok, err)
	}
	if d, ok, err := TTLFromEnv(env("LOCK_TTL_MS", "1500")); d != 1500*time.Millisecond || !ok || err != nil {
		t.Errorf("TTLFromEnv = %s, %v, %v", d, ok, err)
	}
	if _, ok, err := TTLFromEnv(env("LOCK_TTL_MS", "0")); ok || err == nil {
		t.Errorf("LOCK_TTL_MS=0 accepted")
	}
	for s, want := range map[string]bool{"redis://x": true, "REDISS://x": true, "unix:///s": true, "redis": false, "file": false, "": false} {
		if IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v", s, !want)
		}
	}
	a, b := RepoPrefix("repo-a"), RepoPrefix("repo-b")
	if a == b || !strings.HasPrefix(a, "lockgate:") || !strings.HasSuffix(a, ":") || a != RepoPrefix("repo-a") {
		t.Errorf("RepoPrefix = %q, %q", a, b)
	}
}

// Concurrent callers of one Store share round trips: their scripts travel
// in pipelines, and each caller still gets its own answer.
func TestBatching(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	var mu sync.Mutex
	largest := 0
	s.rdb.AddHook(pipelineSize(func(n int) {
		mu.Lock()
		largest = max(largest, n)
		mu.Unlock()
	}))
	const clients, rounds = 32, 40
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("task:T-%d", c)
			var last uint64
			for range rounds {
				now := time.Now()
				rec, _, err := s.Acquire(ctx, locktest.NewLock(key, fmt.Sprint(c), now, time.Hour), now)
				if err != nil {
					errs <- err
					return
				}
				if rec.Fence <= last || rec.Key != key {
					errs <- fmt.Errorf("%s: got %+v after fence %d", key, rec, last)
					return
				}
				last = rec.Fence
				// Someone else's token must not release it.
				if err := s.Release(ctx, key, locks.NewToken()); !errors.Is(err, locks.ErrTokenMismatch) {
					errs <- fmt.Errorf("%s: release with a wrong token: %v", key, err)
					return
				}
				if err := s.Release(ctx, key, rec.Token); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if entries, err := s.List(ctx); err != nil || len(entries) != 0 {
		t.Fatalf("List = %d entries, %v", len(entries), err)
	}
	t.Logf("largest pipeline: %d scripts", largest)
	if largest < 2 {
		t.Errorf("%d callers never shared a round trip", clients)
	}
}

// pipelineSize is a hook reporting the number of commands of each
// pipeline.
type pipelineSize func(int)

func (f pipelineSize) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (f pipelineSize) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (f pipelineSize) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		f(len(cmds))
		return next(ctx, cmds)
	}
}
