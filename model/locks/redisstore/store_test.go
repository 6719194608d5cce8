package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

var prefixSeq atomic.Int64

// freshPrefix gives each store of a test its own keys on a shared server.
func freshPrefix(t testing.TB) string {
	name := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	return fmt.Sprintf("test:%s:%d:", name, prefixSeq.Add(1))
}

func open(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = freshPrefix(t)
	}
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", url, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// raw is a plain client for looking behind the store's back.
func raw(t testing.TB, url string) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestConformance(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	locktest.Run(t, func(t *testing.T) locks.Store {
		s, err := Open(context.Background(), srv.URL(), Options{Prefix: freshPrefix(t)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// With no grace Redis drops a record at its expiry; the suite's takeover
// test needs the record a minute of logical time after its expiry, which is
// still within its real lifetime (the suite's clock runs ahead), so the
// suite passes either way. What changes is shown in TestExpiredDropped.
func TestConformanceNoGrace(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	locktest.Run(t, func(t *testing.T) locks.Store {
		s, err := Open(context.Background(), srv.URL(), Options{Prefix: freshPrefix(t), ExpiredGrace: -1})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestExpiredDropped(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	graced := open(t, srv.URL(), Options{ExpiredGrace: time.Hour})
	dropped := open(t, srv.URL(), Options{ExpiredGrace: -1})
	for _, s := range []*Store{graced, dropped} {
		now := time.Now()
		old, _, err := s.Acquire(ctx, locktest.NewLock("task:T-1", "alice", now, 30*time.Millisecond), now)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond)
		later := time.Now()
		got, prev, err := s.Acquire(ctx, locktest.NewLock("task:T-1", "bob", later, time.Hour), later)
		if err != nil {
			t.Fatalf("takeover: %v", err)
		}
		if got.Fence <= old.Fence {
			t.Fatalf("fence %d after %d", got.Fence, old.Fence)
		}
		switch s {
		case graced:
			if prev == nil || prev.Token != old.Token {
				t.Fatalf("with grace: prev = %+v, want the expired record", prev)
			}
		case dropped:
			if prev != nil {
				t.Fatalf("without grace: prev = %+v, want nil (Redis dropped it)", prev)
			}
		}
	}
}

func TestLayout(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{Prefix: "lockgate:abc:", HistoryTTL: time.Hour, RateLimitPerMin: 100})
	c := raw(t, srv.URL())
	now := time.Now()
	for _, k := range []string{"src/a.go", "src/**", "task:T-1", "flag:billing/*", "claim"} {
		if _, _, err := s.Acquire(ctx, locktest.NewLock(k, "alice", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	want := []string{
		"lockgate:abc:fence",
		"lockgate:abc:h:alice-session",
		"lockgate:abc:i:keys",
		"lockgate:abc:i:pat",
		"lockgate:abc:meta:folded",
		"lockgate:abc:meta:folded-unicode",
		"lockgate:abc:r:claim",
		"lockgate:abc:r:flag:billing/*",
		"lockgate:abc:r:src/**",
		"lockgate:abc:r:src/a.go",
		"lockgate:abc:r:task:T-1",
		"lockgate:abc:rl:alice-session",
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("Redis keys\n got %q\nwant %q", keys, want)
	}
	pats, _ := c.SMembers(ctx, "lockgate:abc:i:pat").Result()
	slices.Sort(pats)
	if !slices.Equal(pats, []string{"flag:billing/*", "src/**"}) {
		t.Fatalf("pattern index = %q", pats)
	}
	// A record expires in Redis at its expiry plus the grace.
	pttl, _ := c.PTTL(ctx, "lockgate:abc:r:src/a.go").Result()
	if pttl < time.Hour+DefaultExpiredGrace-time.Minute || pttl > time.Hour+DefaultExpiredGrace {
		t.Fatalf("PTTL of a 1h record = %s, want about 1h + %s", pttl, DefaultExpiredGrace)
	}
	if w := s.Where("src/a.go"); !strings.HasSuffix(w, " lockgate:abc:r:src/a.go") || !strings.HasPrefix(w, "redis://127.0.0.1:") {
		t.Fatalf("Where = %q", w)
	}
}

func TestPrefixesAreApart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	a := open(t, srv.URL(), Options{Prefix: RepoPrefix("repo-a")})
	b := open(t, srv.URL(), Options{Prefix: RepoPrefix("repo-b")})
	now := time.Now()
	for _, s := range []*Store{a, b} {
		if _, _, err := s.Acquire(ctx, locktest.NewLock("src/a.go", "alice", now, time.Hour), now); err != nil {
			t.Fatalf("the same key in two repositories: %v", err)
		}
	}
	for _, s := range []*Store{a, b} {
		entries, err := s.List(ctx)
		if err != nil || len(entries) != 1 {
			t.Fatalf("List = %v, %v; want one record", entries, err)
		}
	}
}

// The held record is reported with its token and fence, so the Manager can
// renew its own lock.
func TestManagerOnRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	m := &locks.Manager{Store: s, Host: "h", PID: 1}
	alice := locks.Owner{Holder: "alice", HolderType: "agent", Session: "s1"}
	bob := locks.Owner{Holder: "bob", HolderType: "agent", Session: "s2"}
	res, err := m.Acquire(ctx, locks.Request{Keys: []string{"src/**", "task:T-1"}, Owner: alice, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:T-1"}, Owner: alice, TTL: 2 * time.Hour})
	if err != nil || !again[0].Renewed || again[0].Lock.Fence != res[1].Lock.Fence {
		t.Fatalf("renewal = %+v, %v", again, err)
	}
	_, err = m.Acquire(ctx, locks.Request{Keys: []string{"src/a/b.go"}, Owner: bob, TTL: time.Hour})
	var held *locks.HeldError
	if !errors.As(err, &held) || held.Lock.Key != "src/**" {
		t.Fatalf("bob's path under alice's pattern: %v", err)
	}
	if kind, reason := Classify(err); kind != KindBusy || reason != ReasonContended {
		t.Fatalf("Classify = %s/%s", kind, reason)
	}
	_, err = m.Acquire(ctx, locks.Request{Keys: []string{"src/a/b.go"}, Owner: bob, TTL: time.Hour, Wait: 30 * time.Millisecond})
	if kind, reason := Classify(err); kind != KindBusy || reason != ReasonLockTimeout {
		t.Fatalf("Classify(%v) = %s/%s", err, kind, reason)
	}
	// bob's failed attempt left nothing behind.
	if _, err := s.Get(ctx, "src/a/b.go"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Get after a refused acquisition: %v", err)
	}
	if _, err := m.Release(ctx, []string{"src/**", "task:T-1"}, alice, false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"src/a/b.go"}, Owner: bob, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
}

// A holder whose TTL lapsed cannot release or refresh its successor's lock.
func TestLapsedHolderCannotTouchSuccessor(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	now := time.Now()
	old, _, err := s.Acquire(ctx, locktest.NewLock("db:migration-slot", "alice", now, 20*time.Millisecond), now)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(40 * time.Millisecond)
	later := time.Now()
	succ, prev, err := s.Acquire(ctx, locktest.NewLock("db:migration-slot", "bob", later, time.Hour), later)
	if err != nil || prev == nil || prev.Token != old.Token {
		t.Fatalf("takeover = %+v, %v", prev, err)
	}
	if err := s.Release(ctx, old.Key, old.Token); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatalf("late release: %v", err)
	}
	refresh := old
	refresh.ExpiresAt = time.Now().Add(time.Hour)
	if _, err := s.Update(ctx, refresh); !errors.Is(err, locks.ErrTokenMismatch) {
		t.Fatalf("late refresh: %v", err)
	}
	got, err := s.Get(ctx, old.Key)
	if err != nil || got.Token != succ.Token || got.Fence != succ.Fence || !got.ExpiresAt.Equal(succ.ExpiresAt) {
		t.Fatalf("successor's record = %+v, %v", got, err)
	}
}

// Every grant carries a fence above all earlier grants of the key, whoever
// holds it, including after forced clears and takeovers.
func TestFenceOnlyGrows(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	const key = "db:migration-slot"
	var mu sync.Mutex
	var fences []uint64 // appended while holding the lock: grant order
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; {
				now := time.Now()
				ttl := time.Hour
				if i%7 == 3 {
					ttl = time.Millisecond // left to expire and be taken over
				}
				rec, _, err := s.Acquire(ctx, locktest.NewLock(key, fmt.Sprintf("w%d", w), now, ttl), now)
				if err != nil {
					if !errors.As(err, new(*locks.HeldError)) {
						t.Error(err)
						return
					}
					continue
				}
				mu.Lock()
				fences = append(fences, rec.Fence)
				mu.Unlock()
				switch i % 7 {
				case 3: // expires
				case 5:
					_, err = s.Remove(ctx, key)
				default:
					err = s.Release(ctx, key, rec.Token)
				}
				i++
				if err != nil && !errors.Is(err, locks.ErrTokenMismatch) && !errors.Is(err, locks.ErrNotFound) {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// The mutex order is the grant order only while grants are exclusive,
	// which expiring records break; the fences themselves must still be
	// unique, and sorted they must be 1..n without a repeat.
	sorted := slices.Clone(fences)
	slices.Sort(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			t.Fatalf("fence %d granted twice", sorted[i])
		}
	}
	if len(fences) != 1600 {
		t.Fatalf("%d grants, want 1600", len(fences))
	}
}

func TestCorruptRecords(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	c := raw(t, srv.URL())
	now := time.Now()
	good, _, err := s.Acquire(ctx, locktest.NewLock("src/good.go", "alice", now, time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	// Damage three records behind the store's back: a hash instead of a
	// string, a string that is no record, a record whose JSON names
	// another key.
	for _, k := range []string{"src/str.go", "src/half.go", "src/other.go"} {
		if _, _, err := s.Acquire(ctx, locktest.NewLock(k, "alice", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	c.Del(ctx, s.recKey("src/str.go"))
	c.HSet(ctx, s.recKey("src/str.go"), "field", "value")
	c.Set(ctx, s.recKey("src/half.go"), "garbage", 0)
	c.Set(ctx, s.recKey("src/other.go"), strings.Replace(c.Get(ctx, s.recKey("src/good.go")).Val(), "src/good.go", "src/elsewhere.go", 1), 0)
	for _, k := range []string{"src/str.go", "src/half.go", "src/other.go"} {
		var corrupt *locks.CorruptError
		if _, err := s.Get(ctx, k); !errors.As(err, &corrupt) {
			t.Errorf("Get(%s): %v; want *CorruptError", k, err)
		}
		if _, _, err := s.Acquire(ctx, locktest.NewLock(k, "bob", now.Add(2*time.Hour), time.Hour), now.Add(2*time.Hour)); !errors.As(err, &corrupt) {
			t.Errorf("Acquire over corrupt %s: %v; want *CorruptError (never free)", k, err)
		}
	}
	entries, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, e := range entries {
		if e.Err != nil {
			bad = append(bad, e.Key)
		}
	}
	if !slices.Equal(bad, []string{"src/half.go", "src/other.go", "src/str.go"}) {
		t.Fatalf("corrupt entries in List = %q", bad)
	}
	cov, err := s.Covering(ctx, []string{"src/str.go", "src/good.go"})
	if err != nil || len(cov) != 2 || cov[1].Err == nil {
		t.Fatalf("Covering = %+v, %v", cov, err)
	}
	var corrupt *locks.CorruptError
	if _, err := s.Remove(ctx, "src/str.go"); !errors.As(err, &corrupt) {
		t.Fatalf("Remove of a corrupt record: %v; want *CorruptError", err)
	}
	if _, err := s.Get(ctx, "src/str.go"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("Get after Remove: %v", err)
	}
	mustAcquire(t, s, "src/str.go")
	if _, err := s.Get(ctx, good.Key); err != nil {
		t.Fatal(err)
	}
}

func mustAcquire(t testing.TB, s *Store, key string) locks.Lock {
	t.Helper()
	now := time.Now()
	rec, _, err := s.Acquire(context.Background(), locktest.NewLock(key, "w", now, time.Hour), now)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", key, err)
	}
	return rec
}

// Release and Remove take a key out of the indexes and its session's
// history at once, with and without a rate limit (which moves the pattern
// index among the script's keys).
func TestIndexesFollowReleases(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	c := raw(t, srv.URL())
	for name, opts := range map[string]Options{
		"plain":             {},
		"with a rate limit": {RateLimitPerMin: 100, HistoryTTL: time.Hour},
	} {
		s := open(t, srv.URL(), opts)
		recs := map[string]locks.Lock{}
		for _, k := range []string{"src/a.go", "src/**", "flag:billing/*"} {
			recs[k] = mustAcquire(t, s, k)
		}
		if n := c.ZCard(ctx, s.kKeys).Val(); n != 3 {
			t.Fatalf("%s: index of keys has %d members, want 3", name, n)
		}
		if pats := c.SMembers(ctx, s.kPat).Val(); len(pats) != 2 {
			t.Fatalf("%s: pattern index = %q, want the two patterns", name, pats)
		}
		if err := s.Release(ctx, "src/**", recs["src/**"].Token); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Remove(ctx, "flag:billing/*"); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, "src/a.go", recs["src/a.go"].Token); err != nil {
			t.Fatal(err)
		}
		if n := c.ZCard(ctx, s.kKeys).Val(); n != 0 {
			t.Fatalf("%s: index of keys has %d members after the releases", name, n)
		}
		if n := c.SCard(ctx, s.kPat).Val(); n != 0 {
			t.Fatalf("%s: pattern index has %d members after the releases", name, n)
		}
		if n := c.HLen(ctx, s.histKey(recs["src/a.go"].Session)).Val(); n != 0 {
			t.Fatalf("%s: history has %d entries after the releases", name, n)
		}
	}
}

// Index members of records Redis dropped are pruned by the next reader
// that meets them.
func TestIndexPruned(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{ExpiredGrace: -1})
	c := raw(t, srv.URL())
	now := time.Now()
	for _, k := range []string{"src/a.go", "src/**", "feature:F-1:pause"} {
		if _, _, err := s.Acquire(ctx, locktest.NewLock(k, "alice", now, 10*time.Millisecond), now); err != nil {
			t.Fatal(err)
		}
	}
	live := mustAcquire(t, s, "feature:F-2:pause")
	time.Sleep(30 * time.Millisecond)
	if entries, err := s.InNamespace(ctx, "feature"); err != nil || len(entries) != 1 || entries[0].Key != live.Key {
		t.Fatalf("InNamespace after expiry = %v, %v", entries, err)
	}
	if n := c.ZCard(ctx, s.kKeys).Val(); n != 3 {
		t.Fatalf("index of keys has %d members after InNamespace pruned feature:F-1:pause, want 3", n)
	}
	if entries, err := s.List(ctx); err != nil || len(entries) != 1 {
		t.Fatalf("List after expiry = %v, %v", entries, err)
	}
	if keys := c.ZRange(ctx, s.kKeys, 0, -1).Val(); !slices.Equal(keys, []string{live.Key}) {
		t.Fatalf("index of keys = %q", keys)
	}
	if n := c.SCard(ctx, s.kPat).Val(); n != 0 {
		t.Fatalf("pattern index has %d members", n)
	}
}

func TestInvalidInput(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	now := time.Now()
	for _, rec := range []locks.Lock{
		{},
		{Key: "src/a.go"},
		{Key: "bad\xffutf8", ExpiresAt: now},
	} {
		if _, _, err := s.Acquire(ctx, rec, now); err == nil {
			t.Errorf("Acquire(%+v) succeeded", rec)
		}
		if _, err := s.Update(ctx, rec); err == nil {
			t.Errorf("Update(%+v) succeeded", rec)
		}
	}
	for _, u := range []string{"", "http://x", "redis://x:notaport", "redis://127.0.0.1:1/notadb"} {
		if _, err := Open(ctx, u, Options{}); err == nil {
			t.Errorf("Open(%q) succeeded", u)
		} else if errors.As(err, new(*locks.UnavailableError)) {
			t.Errorf("Open(%q) = %v; a malformed URL is not an unavailable store", u, err)
		}
	}
	if _, err := Open(ctx, srv.URL(), Options{RateLimitPerMin: -1}); err == nil {
		t.Error("negative rate limit accepted")
	}
}

func TestWaitRelease(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s := open(t, srv.URL(), Options{})
	rec := mustAcquire(t, s, "task:T-1")
	ch, err := s.WaitRelease(ctx, "task:T-1")
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.WaitRelease(ctx, "task:T-2")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("woken before the release")
	case <-time.After(20 * time.Millisecond):
	}
	start := time.Now()
	if err := s.Release(ctx, rec.Key, rec.Token); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Logf("woken %s after the release", time.Since(start))
	case <-time.After(2 * time.Second):
		t.Fatal("not woken by the release")
	}
	select {
	case <-other:
		t.Fatal("another key's waiter was woken")
	case <-time.After(20 * time.Millisecond):
	}
	cctx, cancel := context.WithCancel(ctx)
	ch, err = s.WaitRelease(cctx, "task:T-3")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-ch:
	case <-time.After(2 * time.Second):
		t.Fatal("not closed when its context ended")
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		err          error
		kind, reason string
	}{
		{"nil", nil, "", ""},
		{"held", fmt.Errorf("x: %w", &locks.HeldError{}), KindBusy, ReasonContended},
		{"timeout", &locks.TimeoutError{Held: &locks.HeldError{}}, KindBusy, ReasonLockTimeout},
		{"rate", &locks.RateLimitedError{Limit: 1, Window: time.Minute}, KindRateLimited, ""},
		{"refused", &locks.UnavailableError{Err: &Cause{Reason: ReasonRefused}}, KindUnavailable, ReasonRefused},
		{"other store", &locks.UnavailableError{Err: errors.New("disk full")}, KindUnavailable, "disk full"},
		{"plain", errors.New("x"), "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if k, r := Classify(c.err); k != c.kind || r != c.reason {
				t.Fatalf("Classify = %q, %q; want %q, %q", k, r, c.kind, c.reason)
			}
		})
	}
}

func TestConformanceIgnoreCase(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	locktest.RunIgnoreCase(t, func(t *testing.T) locktest.Views {
		prefix := freshPrefix(t)
		folded, err := Open(context.Background(), srv.URL(), Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		exact, err := Open(context.Background(), srv.URL(), Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		legacy, err := Open(context.Background(), srv.URL(), Options{Prefix: prefix, legacyExact: true})
		if err != nil {
			t.Fatal(err)
		}
		legacyASCII, err := Open(context.Background(), srv.URL(), Options{Prefix: prefix, legacyASCII: true})
		if err != nil {
			t.Fatal(err)
		}
		// The prefix as an earlier version left it: not marked folded.
		if err := legacy.rdb.Del(context.Background(), legacy.foldedKey(), legacy.unicodeKey()).Err(); err != nil {
			t.Fatal(err)
		}
		reopen := func(t *testing.T) locks.Store {
			s, err := Open(context.Background(), srv.URL(), Options{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
		return locktest.Views{Folded: folded, Exact: exact, Legacy: legacy, LegacyASCII: legacyASCII, Reopen: reopen}
	})
}

// The scripts see a counter as a Lua number, a double: above 2^53 two
// fences could round to one, so the store hands out none past 2^53-1.
func TestFenceLimit(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{})
	c := raw(t, srv.URL())
	locktest.RunFenceLimit(t, s, MaxFence, func(t *testing.T, key string, fence uint64) {
		if err := c.HSet(context.Background(), s.kFences, s.id(key), fence).Err(); err != nil {
			t.Fatal(err)
		}
	})
}

// A counter at the top of int64, where HINCRBY fails, is refused the same.
func TestFenceLimitInt64(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{})
	c := raw(t, srv.URL())
	ctx := context.Background()
	if err := c.HSet(ctx, s.kFences, s.id("src/top.go"), uint64(math.MaxInt64)).Err(); err != nil {
		t.Fatal(err)
	}
	rec, _, err := s.Acquire(ctx, locktest.NewLock("src/top.go", "w", time.Now(), time.Hour), time.Now())
	if !errors.Is(err, locks.ErrFenceExhausted) {
		t.Fatalf("Acquire at the top of int64: fence %d, %v; want ErrFenceExhausted", rec.Fence, err)
	}
}

// A server that lost its data (FLUSHALL here) starts the fence counters
// over: every fence it hands out from then on is above the floor the lock
// log gives, never one a grant of the lost state used.
func TestFenceFloor(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	c := raw(t, srv.URL())
	ctx := context.Background()
	now := time.Now()
	prefix := freshPrefix(t)
	a := open(t, srv.URL(), Options{Prefix: prefix})
	var held locks.Lock
	for range 3 {
		rec, _, err := a.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Release(ctx, rec.Key, rec.Token); err != nil {
			t.Fatal(err)
		}
		held = rec
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	var asked atomic.Int32
	floor := func(context.Context) (uint64, error) { asked.Add(1); return held.Fence, nil }
	b := open(t, srv.URL(), Options{Prefix: prefix, FenceFloor: floor})
	got, _, err := b.Acquire(ctx, locktest.NewLock("a.go", "bob", now, time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fence <= held.Fence {
		t.Fatalf("fence of a.go after the data loss: %d, want above %d", got.Fence, held.Fence)
	}
	// Every key starts above the floor, and the floor is asked once.
	other, _, err := b.Acquire(ctx, locktest.NewLock("b.go", "bob", now, time.Hour), now)
	if err != nil || other.Fence <= held.Fence {
		t.Fatalf("fence of b.go after the data loss: %d, %v; want above %d", other.Fence, err, held.Fence)
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("the floor was asked %d times, want 1", n)
	}
	// Another client keeps counting from the counters.
	d := open(t, srv.URL(), Options{Prefix: prefix, FenceFloor: func(context.Context) (uint64, error) { return 0, errors.New("not asked") }})
	if err := b.Release(ctx, got.Key, got.Token); err != nil {
		t.Fatal(err)
	}
	if next, _, err := d.Acquire(ctx, locktest.NewLock("a.go", "dave", now, time.Hour), now); err != nil || next.Fence != got.Fence+1 {
		t.Fatalf("next fence of a.go: %d, %v; want %d", next.Fence, err, got.Fence+1)
	}

	// A floor that cannot be read fails the acquisition, and grants
	// nothing.
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	e := open(t, srv.URL(), Options{Prefix: prefix, FenceFloor: func(context.Context) (uint64, error) { return 0, errors.New("log unreadable") }})
	var ue *locks.UnavailableError
	if _, _, err := e.Acquire(ctx, locktest.NewLock("c.go", "erin", now, time.Hour), now); !errors.As(err, &ue) || !strings.Contains(err.Error(), "log unreadable") {
		t.Fatalf("Acquire with an unreadable floor: %v, want unavailable", err)
	}
	if _, err := e.Get(ctx, "c.go"); !errors.Is(err, locks.ErrNotFound) {
		t.Fatalf("after the refusal: Get = %v, want ErrNotFound", err)
	}

	// A floor at the limit leaves no fence to hand out.
	f := open(t, srv.URL(), Options{Prefix: prefix, FenceFloor: func(context.Context) (uint64, error) { return MaxFence, nil }})
	if rec, _, err := f.Acquire(ctx, locktest.NewLock("c.go", "frank", now, time.Hour), now); !errors.Is(err, locks.ErrFenceExhausted) {
		t.Fatalf("Acquire above a floor at MaxFence: fence %d, %v; want ErrFenceExhausted", rec.Fence, err)
	}
}

// Callers that meet the missing floor together each get a fence above it.
func TestFenceFloorConcurrent(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	now := time.Now()
	const floor = 1000
	var asked atomic.Int32
	s := open(t, srv.URL(), Options{FenceFloor: func(context.Context) (uint64, error) { asked.Add(1); return floor, nil }})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			rec, _, err := s.Acquire(ctx, locktest.NewLock(fmt.Sprintf("src/f%d.go", i), "w", now, time.Hour), now)
			switch {
			case err != nil:
				errs <- err
			case rec.Fence <= floor:
				errs <- fmt.Errorf("%s: fence %d, want above %d", rec.Key, rec.Fence, floor)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if asked.Load() == 0 {
		t.Fatal("the floor was never asked")
	}
}
