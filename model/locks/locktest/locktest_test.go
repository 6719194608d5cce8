package locktest_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

// memStore is the simplest correct Store: it checks the suite itself. It
// keeps records under their identity (lockkey.FoldCase), as every store
// does.
type memStore struct {
	mu     sync.Mutex
	recs   map[string]locks.Lock
	fences map[string]uint64
}

var _ locks.Store = (*memStore)(nil)

func (m *memStore) Acquire(_ context.Context, rec locks.Lock, now time.Time) (locks.Lock, *locks.Lock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var prev *locks.Lock
	if cur, ok := m.recs[lockkey.FoldCase(rec.Key)]; ok {
		if !cur.Expired(now) {
			return locks.Lock{}, nil, &locks.HeldError{Lock: cur, Where: m.Where(rec.Key)}
		}
		prev = &cur
	}
	m.fences[lockkey.FoldCase(rec.Key)]++
	rec.Fence = m.fences[lockkey.FoldCase(rec.Key)]
	m.recs[lockkey.FoldCase(rec.Key)] = rec
	return rec, prev, nil
}

func (m *memStore) Release(_ context.Context, key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.recs[lockkey.FoldCase(key)]
	switch {
	case !ok:
		return locks.ErrNotFound
	case cur.Token != token:
		return locks.ErrTokenMismatch
	}
	delete(m.recs, lockkey.FoldCase(key))
	return nil
}

func (m *memStore) Update(_ context.Context, rec locks.Lock) (locks.Lock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.recs[lockkey.FoldCase(rec.Key)]
	switch {
	case !ok:
		return locks.Lock{}, locks.ErrNotFound
	case cur.Token != rec.Token:
		return locks.Lock{}, locks.ErrTokenMismatch
	}
	rec.Fence = cur.Fence
	m.recs[lockkey.FoldCase(rec.Key)] = rec
	return rec, nil
}

func (m *memStore) Remove(_ context.Context, key string) (locks.Lock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.recs[lockkey.FoldCase(key)]
	if !ok {
		return locks.Lock{}, locks.ErrNotFound
	}
	delete(m.recs, lockkey.FoldCase(key))
	return cur, nil
}

func (m *memStore) Get(_ context.Context, key string) (locks.Lock, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.recs[lockkey.FoldCase(key)]
	if !ok {
		return locks.Lock{}, locks.ErrNotFound
	}
	return cur, nil
}

func (m *memStore) list(keep func(key string) bool) []locks.Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []locks.Entry
	for k, r := range m.recs {
		if keep(r.Key) {
			out = append(out, locks.Entry{Lock: r, Name: k})
		}
	}
	slices.SortFunc(out, func(a, b locks.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out
}

func (m *memStore) List(context.Context) ([]locks.Entry, error) {
	return m.list(func(string) bool { return true }), nil
}

func (m *memStore) Page(_ context.Context, after string, limit int) ([]locks.Entry, string, error) {
	page, next := locks.PageOf(m.list(func(string) bool { return true }), func(e locks.Entry) string { return e.Name }, after, limit)
	return page, next, nil
}

func (m *memStore) Overlapping(_ context.Context, key string) ([]locks.Entry, error) {
	return m.list(func(k string) bool { return lockkey.SameFoldCase(k, key) || lockkey.OverlapFoldCase(k, key) }), nil
}

func (m *memStore) Covering(_ context.Context, paths []string) ([]locks.Entry, error) {
	return m.list(func(k string) bool {
		for _, p := range paths {
			if !lockkey.IsPathLike(k) {
				return false // files named like keys are not those keys
			}
			if lockkey.FoldCase(k) == lockkey.FoldPath(p) || (lockkey.IsPattern(k) && lockkey.MatchPath(lockkey.Folded(k), lockkey.Folded(p))) {
				return true
			}
		}
		return false
	}), nil
}

func (m *memStore) InNamespace(_ context.Context, ns string) ([]locks.Entry, error) {
	return m.list(func(k string) bool { return lockkey.Namespace(k) == ns }), nil
}

func (m *memStore) Where(key string) string { return "mem:" + key }
func (m *memStore) Close() error            { return nil }

func TestRunMemStore(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locks.Store {
		return &memStore{recs: map[string]locks.Lock{}, fences: map[string]uint64{}}
	})
}

// signalMem is memStore signalling releases, the simplest correct
// locks.Waiter: it checks the suite's Waiter case.
type signalMem struct {
	*memStore
	wmu     sync.Mutex
	waiters map[string][]chan struct{}
}

var _ locks.Waiter = (*signalMem)(nil)

func (m *signalMem) signal(key string) {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	for _, ch := range m.waiters[key] {
		close(ch)
	}
	delete(m.waiters, key)
}

func (m *signalMem) Release(ctx context.Context, key, token string) error {
	err := m.memStore.Release(ctx, key, token)
	if err == nil {
		m.signal(key)
	}
	return err
}

func (m *signalMem) Remove(ctx context.Context, key string) (locks.Lock, error) {
	l, err := m.memStore.Remove(ctx, key)
	if err == nil {
		m.signal(key)
	}
	return l, err
}

func (m *signalMem) WaitRelease(ctx context.Context, key string) (<-chan struct{}, error) {
	fired, done := make(chan struct{}), make(chan struct{})
	m.wmu.Lock()
	m.waiters[key] = append(m.waiters[key], fired)
	m.wmu.Unlock()
	go func() {
		defer close(done)
		select {
		case <-fired:
		case <-ctx.Done():
		}
	}()
	return done, nil
}

func TestRunSignalMemStore(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locks.Store {
		return &signalMem{
			memStore: &memStore{recs: map[string]locks.Lock{}, fences: map[string]uint64{}},
			waiters:  map[string][]chan struct{}{},
		}
	})
}

func TestDiffLock(t *testing.T) {
	t.Parallel()
	now := time.Now()
	a := locktest.NewLock("k", "alice", now, time.Hour)
	b := a
	b.ExpiresAt = a.ExpiresAt.In(time.FixedZone("X", 3600))
	if d := locktest.DiffLock(a, b); d != "" {
		t.Fatalf("same instant in another zone differs: %s", d)
	}
	b.Holder, b.Fence = "bob", 7
	d := locktest.DiffLock(a, b)
	if !strings.Contains(d, "holder") || !strings.Contains(d, "fence") {
		t.Fatalf("DiffLock = %q; want holder and fence named", d)
	}
}
