package redisstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/scope"
)

// countingStore counts acquisition attempts, so that a test tells a waiter
// woken by the release from one that polls. WaitRelease is the Store's.
type countingStore struct {
	*Store
	attempts atomic.Int64
}

func (c *countingStore) Acquire(ctx context.Context, rec locks.Lock, now time.Time) (locks.Lock, *locks.Lock, error) {
	c.attempts.Add(1)
	return c.Store.Acquire(ctx, rec, now)
}

// noWaitStore hides WaitRelease: a Manager on it polls.
type noWaitStore struct{ locks.Store }

// listening waits until n clients listen to key's release channel.
func listening(t testing.TB, s *Store, key string, n int64) {
	t.Helper()
	ctx := context.Background()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		subs, err := s.rdb.PubSubNumSub(ctx, s.channel(key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if subs[s.channel(key)] >= n {
			return
		}
	}
	t.Fatalf("no waiter listens to the release of %s", key)
}

var (
	holder = locks.Owner{Holder: "holder", HolderType: scope.WorkerAgent, Session: "holder"}
	waiter = locks.Owner{Holder: "waiter", HolderType: scope.WorkerAgent, Session: "waiter"}
)

// The Manager's --wait on Redis blocks on the key's release channel: while
// the key is held it tries twice (before and after subscribing), and the
// release wakes it at once, although its fallback poll is a minute away.
func TestManagerWaitWokenByRelease(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := &countingStore{Store: open(t, srv.URL(), Options{})}
	m := &locks.Manager{Store: s, Host: "test", PID: 1, WaitPoll: time.Minute}
	ctx := context.Background()
	const key = "task:T-1"
	var lat []time.Duration
	for round := range 10 {
		if _, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: holder, TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
		before := s.attempts.Load()
		done := make(chan error, 1)
		go func() {
			_, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: waiter, TTL: time.Minute, Wait: 30 * time.Second})
			done <- err
		}()
		listening(t, s.Store, key, 1)
		for end := time.Now().Add(10 * time.Second); s.attempts.Load()-before < 2 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		if n := s.attempts.Load() - before; n != 2 {
			t.Fatalf("round %d: %d attempts while the key was held, want 2: the waiter polls", round, n)
		}
		start := time.Now()
		if _, err := m.Release(ctx, []string{key}, holder, false); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the waiter was not woken by the release", round)
		}
		lat = append(lat, time.Since(start))
		if n := s.attempts.Load() - before; n != 3 {
			t.Fatalf("round %d: %d attempts in all, want 3", round, n)
		}
		if _, err := m.Release(ctx, []string{key}, waiter, false); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(lat)
	t.Logf("release to grant: p50 %s, max %s", lat[len(lat)/2], lat[len(lat)-1])
	// Generous for a loaded machine, and far below the minute a waiter
	// that missed the release would wait.
	if worst := lat[len(lat)-1]; worst > time.Second {
		t.Fatalf("slowest hand-over %s", worst)
	}
}

// A lock that expires publishes nothing: the waiter wakes at its expiry and
// takes it over.
func TestManagerWaitWokenByExpiry(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{})
	m := &locks.Manager{Store: s, Host: "test", PID: 1, WaitPoll: time.Minute}
	ctx := context.Background()
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:T-1"}, Owner: holder, TTL: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:T-1"}, Owner: waiter, TTL: time.Minute, Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("took over %s after the wait began; the lock expired after 300ms", el)
	}
	if res[0].TookOver == nil || res[0].TookOver.Holder != "holder" {
		t.Fatalf("result %+v, want a takeover of the expired lock", res[0])
	}
}

// --wait ends with lock_timeout at its deadline, not at the next poll, and
// gives back its subscription.
func TestManagerWaitTimeout(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{})
	m := &locks.Manager{Store: s, Host: "test", PID: 1, WaitPoll: time.Minute}
	ctx := context.Background()
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:T-1"}, Owner: holder, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:T-1"}, Owner: waiter, TTL: time.Minute, Wait: 300 * time.Millisecond})
	el := time.Since(start)
	if kind, reason := Classify(err); kind != KindBusy || reason != ReasonLockTimeout {
		t.Fatalf("err = %v (%s/%s), want busy/lock_timeout", err, kind, reason)
	}
	if el < 300*time.Millisecond || el > 5*time.Second {
		t.Fatalf("gave up after %s, want about 300ms", el)
	}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		subs, err := s.rdb.PubSubNumSub(ctx, s.channel("task:T-1")).Result()
		if err != nil {
			t.Fatal(err)
		}
		if subs[s.channel("task:T-1")] == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the subscription outlived the wait")
		}
	}
}

// Eight waiters on their own connections contend for one key; each
// release wakes them and exactly one takes the key. Fallback polls are a
// minute apart, so a missed wake-up fails the test.
func TestManagerWaitContended(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	prefix := freshPrefix(t)
	const (
		workers = 8
		rounds  = 25
		key     = "src/contended.go"
	)
	var (
		inside   atomic.Int32
		released atomic.Int64 // UnixNano of the last release
		mu       sync.Mutex
		lastFen  uint64
		handover []time.Duration
	)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		s := open(t, srv.URL(), Options{Prefix: prefix})
		m := &locks.Manager{Store: s, Host: "test", PID: w, WaitPoll: time.Minute}
		me := locks.Owner{Holder: fmt.Sprintf("w%d", w), HolderType: scope.WorkerAgent, Session: fmt.Sprintf("w%d", w)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				start := time.Now().UnixNano()
				res, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: me, TTL: time.Minute, Wait: 20 * time.Second})
				if err != nil {
					errs <- err
					return
				}
				got := time.Now().UnixNano()
				if inside.Add(1) != 1 {
					errs <- errors.New("two holders at once")
					return
				}
				mu.Lock()
				f, prev := res[0].Lock.Fence, lastFen
				lastFen = f
				if rel := released.Load(); rel > start {
					handover = append(handover, time.Duration(got-rel))
				}
				mu.Unlock()
				if f <= prev {
					errs <- fmt.Errorf("fence %d after %d", f, prev)
					return
				}
				time.Sleep(200 * time.Microsecond)
				inside.Add(-1)
				released.Store(time.Now().UnixNano())
				if _, err := m.Release(ctx, []string{key}, me, false); err != nil {
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
	slices.Sort(handover)
	if len(handover) == 0 {
		t.Fatal("no waiter was ever waiting when a release came")
	}
	p99 := handover[min(len(handover)-1, len(handover)*99/100)]
	t.Logf("%d hand-overs: p50 %s, p99 %s, max %s", len(handover), handover[len(handover)/2], p99, handover[len(handover)-1])
	if worst := handover[len(handover)-1]; worst > 2*time.Second {
		t.Fatalf("slowest hand-over %s", worst)
	}
}

// contender is one worker process of TestProcessHandover: n times it takes
// the key through a Manager with --wait (a minute between fallback polls),
// holds it with a marker file created with O_EXCL (finding it there means
// two holders at once), writes the release time and releases. When it was
// already waiting at the previous release it prints the hand-over time.
func contender(s *Store, id, dir string, n int, out *bufio.Writer) error {
	m := &locks.Manager{Store: s, Host: id, PID: os.Getpid(), WaitPoll: time.Minute}
	me := locks.Owner{Holder: id, HolderType: scope.WorkerAgent, Session: id}
	marker, released := filepath.Join(dir, "critical"), filepath.Join(dir, "released")
	ctx := context.Background()
	for range n {
		start := time.Now().UnixNano()
		if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:CONTENDED"}, Owner: me, TTL: time.Minute, Wait: 30 * time.Second}); err != nil {
			return err
		}
		got := time.Now().UnixNano()
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("VIOLATION: two holders: %w", err)
		}
		f.Close()
		if b, err := os.ReadFile(released); err == nil {
			if rel, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && rel > start {
				fmt.Fprintln(out, "handover", got-rel)
			}
		}
		if err := os.Remove(marker); err != nil {
			return err
		}
		if err := os.WriteFile(released, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644); err != nil {
			return err
		}
		if _, err := m.Release(ctx, []string{"task:CONTENDED"}, me, false); err != nil {
			return err
		}
	}
	return nil
}

// Processes on one Redis hand a key over through --wait: never two holders,
// and every waiter is woken by the release.
func TestProcessHandover(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	env := []string{envURL + "=" + srv.URL(), envPrefix + "=" + freshPrefix(t), envDir + "=" + t.TempDir(), envN + "=40"}
	out := runWorkers(t, "contend", []string{"p1", "p2", "p3", "p4"}, env...)
	var handover []time.Duration
	for _, lines := range out {
		for _, l := range lines {
			v, ok := strings.CutPrefix(l, "handover ")
			if !ok {
				if l != "" {
					t.Fatalf("worker said %q", l)
				}
				continue
			}
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			handover = append(handover, time.Duration(ns))
		}
	}
	if len(handover) == 0 {
		t.Fatal("no process was ever waiting when a release came")
	}
	slices.Sort(handover)
	t.Logf("%d hand-overs: p50 %s, p99 %s, max %s", len(handover), handover[len(handover)/2],
		handover[min(len(handover)-1, len(handover)*99/100)], handover[len(handover)-1])
	if worst := handover[len(handover)-1]; worst > 2*time.Second {
		t.Fatalf("slowest hand-over %s", worst)
	}
}

// The fallback: a Manager on a store that does not signal still polls.
var _ locks.Store = noWaitStore{}

func TestManagerWaitWithoutSignals(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	s := open(t, srv.URL(), Options{})
	m := &locks.Manager{Store: noWaitStore{s}, Host: "test", PID: 1, WaitPoll: time.Minute}
	if _, ok := m.Store.(locks.Waiter); ok {
		t.Fatal("noWaitStore signals releases")
	}
	ctx := context.Background()
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:T-1"}, Owner: holder, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:T-1"}, Owner: waiter, TTL: time.Minute, Wait: 30 * time.Second})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if _, err := m.Release(ctx, []string{"task:T-1"}, holder, false); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the polling waiter did not get the released key")
	}
}
