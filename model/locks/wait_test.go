package locks_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
)

// signalStore is a file store that signals releases like the Redis store:
// it implements locks.Waiter. It counts acquisition attempts, so a test
// can tell a woken waiter from a polling one, and can be told to fail
// WaitRelease.
type signalStore struct {
	locks.Store
	attempts atomic.Int64
	failWait bool

	mu      sync.Mutex
	waiters map[string][]chan struct{}
	subs    chan string // each key a WaitRelease listens to, once listening
}

var _ locks.Waiter = (*signalStore)(nil)

func newSignalStore(t *testing.T) *signalStore {
	t.Helper()
	fs, err := filestore.Open(filepath.Join(t.TempDir(), "locks"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return &signalStore{Store: fs, waiters: map[string][]chan struct{}{}, subs: make(chan string, 100)}
}

func (s *signalStore) Acquire(ctx context.Context, rec locks.Lock, now time.Time) (locks.Lock, *locks.Lock, error) {
	s.attempts.Add(1)
	return s.Store.Acquire(ctx, rec, now)
}

func (s *signalStore) Release(ctx context.Context, key, token string) error {
	err := s.Store.Release(ctx, key, token)
	if err == nil {
		s.signal(key)
	}
	return err
}

func (s *signalStore) signal(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.waiters[key] {
		close(ch)
	}
	delete(s.waiters, key)
}

func (s *signalStore) WaitRelease(ctx context.Context, key string) (<-chan struct{}, error) {
	if s.failWait {
		return nil, errors.New("subscriptions refused")
	}
	fired := make(chan struct{})
	s.mu.Lock()
	s.waiters[key] = append(s.waiters[key], fired)
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-fired:
		case <-ctx.Done():
		}
	}()
	s.subs <- key
	return done, nil
}

// listened returns the key of the next WaitRelease.
func (s *signalStore) listened(t *testing.T) string {
	t.Helper()
	select {
	case key := <-s.subs:
		return key
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter never listened for a release")
		return ""
	}
}

// waitFor starts an acquisition of key by alice with --wait in the
// background and returns its outcome channel.
func waitFor(m *locks.Manager, key string, wait time.Duration) <-chan error {
	out := make(chan error, 1)
	go func() {
		_, err := m.Acquire(context.Background(), locks.Request{Keys: []string{key}, Owner: alice, TTL: time.Hour, Wait: wait})
		out <- err
	}()
	return out
}

func TestWaitWokenByRelease(t *testing.T) {
	t.Parallel()
	s := newSignalStore(t)
	// Without the release signal this waiter would try again only after
	// a minute; the test fails long before.
	m := &locks.Manager{Store: s, Host: "h", PID: 1, WaitPoll: time.Minute}
	if err := acquire(m, bob, time.Hour, "a.py"); err != nil {
		t.Fatal(err)
	}
	before := s.attempts.Load()
	done := waitFor(m, "a.py", 30*time.Second)
	if key := s.listened(t); key != "a.py" {
		t.Fatalf("waiter listens to %q, want a.py", key)
	}
	// It tries once more after listening, then blocks.
	for end := time.Now().Add(10 * time.Second); s.attempts.Load()-before < 2 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if n := s.attempts.Load() - before; n != 2 {
		t.Fatalf("%d attempts while the key was held, want 2 (before and after listening): the waiter polls", n)
	}
	start := time.Now()
	if _, err := m.Release(context.Background(), []string{"a.py"}, bob, false); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not woken by the release")
	}
	t.Logf("woken %s after the release", time.Since(start))
	if n := s.attempts.Load() - before; n != 3 {
		t.Fatalf("%d attempts in all, want 3", n)
	}
	cur, err := s.Get(context.Background(), "a.py")
	if err != nil || cur.Holder != "alice" {
		t.Fatalf("after the wait: %+v, %v; want alice's lock", cur, err)
	}
}

func TestWaitWokenByExpiry(t *testing.T) {
	t.Parallel()
	s := newSignalStore(t)
	m := &locks.Manager{Store: s, Host: "h", PID: 1, WaitPoll: time.Minute}
	if err := acquire(m, bob, 300*time.Millisecond, "a.py"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := m.Acquire(context.Background(), locks.Request{Keys: []string{"a.py"}, Owner: alice, TTL: time.Hour, Wait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("took over %s after the wait began; the lock expired after 300ms", el)
	}
	if res[0].TookOver == nil || res[0].TookOver.Holder != "bob" {
		t.Fatalf("result %+v, want a takeover of bob's expired lock", res[0])
	}
}

func TestWaitDeadline(t *testing.T) {
	t.Parallel()
	s := newSignalStore(t)
	m := &locks.Manager{Store: s, Host: "h", PID: 1, WaitPoll: time.Minute}
	if err := acquire(m, bob, time.Hour, "a.py"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := <-waitFor(m, "a.py", 200*time.Millisecond)
	var to *locks.TimeoutError
	if !errors.As(err, &to) || to.Held.Lock.Holder != "bob" || to.Wait != 200*time.Millisecond {
		t.Fatalf("err = %v, want a TimeoutError naming bob", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("gave up after %s, want about 200ms", el)
	}
}

func TestWaitCancelled(t *testing.T) {
	t.Parallel()
	s := newSignalStore(t)
	m := &locks.Manager{Store: s, Host: "h", PID: 1, WaitPoll: time.Minute}
	if err := acquire(m, bob, time.Hour, "a.py"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.Acquire(ctx, locks.Request{Keys: []string{"a.py"}, Owner: alice, TTL: time.Hour, Wait: time.Minute})
		done <- err
	}()
	s.listened(t)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a cancelled wait did not return")
	}
}

// A store that cannot signal now is polled.
func TestWaitFallsBackToPolling(t *testing.T) {
	t.Parallel()
	s := newSignalStore(t)
	s.failWait = true
	m := &locks.Manager{Store: s, Host: "h", PID: 1, WaitPoll: time.Minute}
	if err := acquire(m, bob, time.Hour, "a.py"); err != nil {
		t.Fatal(err)
	}
	done := waitFor(m, "a.py", 30*time.Second)
	time.Sleep(100 * time.Millisecond)
	if _, err := m.Release(context.Background(), []string{"a.py"}, bob, false); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the polling waiter did not get the released key")
	}
}

// A waiter held up by an overlapping lock listens to that lock's key.
func TestWaitListensToTheHoldingKey(t *testing.T) {
	t.Parallel()
	s := newSignalStore(t)
	m := &locks.Manager{Store: s, Host: "h", PID: 1, WaitPoll: time.Minute}
	if err := acquire(m, bob, time.Hour, "src/**"); err != nil {
		t.Fatal(err)
	}
	done := waitFor(m, "src/a.py", 30*time.Second)
	if key := s.listened(t); key != "src/**" {
		t.Fatalf("waiter listens to %q, want src/**", key)
	}
	if _, err := m.Release(context.Background(), []string{"src/**"}, bob, false); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not woken by the release of the overlapping lock")
	}
}

// TestWaitSaysOnWhom: a request that waits is told the lock it waits
// for, once however often it tries while that grant holds the key.
func TestWaitSaysOnWhom(t *testing.T) {
	t.Parallel()
	s := newSignalStore(t)
	m := &locks.Manager{Store: s, Host: "h", PID: 1, WaitPoll: 20 * time.Millisecond}
	if err := acquire(m, bob, time.Hour, "a.py"); err != nil {
		t.Fatal(err)
	}
	before := s.attempts.Load()
	var mu sync.Mutex
	var told []locks.Lock
	done := make(chan error, 1)
	go func() {
		_, err := m.Acquire(context.Background(), locks.Request{Keys: []string{"a.py"}, Owner: alice, TTL: time.Hour, Wait: 30 * time.Second,
			OnWait: func(l locks.Lock) { mu.Lock(); told = append(told, l); mu.Unlock() }})
		done <- err
	}()
	// Wait until it tried at least twice while bob held the key.
	for end := time.Now().Add(10 * time.Second); s.attempts.Load()-before < 2 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if n := s.attempts.Load() - before; n < 2 {
		t.Fatalf("%d tries while bob held the key, want 2 or more", n)
	}
	if _, err := m.Release(context.Background(), []string{"a.py"}, bob, false); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || told[0].Holder != "bob" || told[0].Key != "a.py" {
		t.Fatalf("told %+v, want bob's lock on a.py, once", told)
	}
}
