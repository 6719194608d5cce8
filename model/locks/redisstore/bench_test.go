package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/scope"
)

type durations []time.Duration

func (d durations) pct(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[int(p*float64(len(d)-1))]
}

// fill acquires n path locks, a thousand per round trip.
func fill(b *testing.B, s *Store, n int) {
	b.Helper()
	ctx := context.Background()
	now := time.Now()
	// The scripts below grant nothing to counters without a floor.
	if err := s.setFloor(ctx, "fill"); err != nil {
		b.Fatal(err)
	}
	for start := 0; start < n; start += 1000 {
		p := s.rdb.Pipeline()
		for i := start; i < min(start+1000, n); i++ {
			key := fmt.Sprintf("src/pkg%03d/file%05d.go", i%100, i)
			rec := locktest.NewLock(key, "filler", now, time.Hour)
			head, tail, err := encodeValue(rec)
			if err != nil {
				b.Fatal(err)
			}
			acquireScript.redisScript().Run(ctx, p, []string{s.recKey(key), s.kFences, s.kKeys, s.histKey(rec.Session)},
				key, now.UnixMilli(), s.lifetime(rec.ExpiresAt, now), head, tail)
		}
		if _, err := p.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkCovering asks which locks cover a 50-path change among 10,000
// path locks and 100 pattern locks: two round trips whatever the store's
// size.
func BenchmarkCovering(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	s := open(b, srv.URL(), Options{})
	ctx := context.Background()
	now := time.Now()
	fill(b, s, 10000)
	for i := range 100 {
		if _, _, err := s.Acquire(ctx, locktest.NewLock(fmt.Sprintf("src/pkg%03d/**", i*7), "filler", now, time.Hour), now); err != nil {
			b.Fatal(err)
		}
	}
	paths := make([]string, 50)
	for i := range paths {
		paths[i] = fmt.Sprintf("src/pkg%03d/file%05d.go", i, i*100+i)
	}
	var found int
	b.ResetTimer()
	for b.Loop() {
		entries, err := s.Covering(ctx, paths)
		if err != nil {
			b.Fatal(err)
		}
		found = len(entries)
	}
	b.ReportMetric(float64(found), "found")
}

// BenchmarkHandover measures how soon a waiter holds a key after its holder
// releases it: "wait" is the Manager's --wait on this store, woken by the
// release (WaitRelease); "poll" is the same Manager on a view of the store
// that does not signal, which polls as it does on the file store.
func BenchmarkHandover(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	for _, mode := range []string{"wait", "poll"} {
		b.Run(mode, func(b *testing.B) {
			s := open(b, srv.URL(), Options{})
			m := &locks.Manager{Store: s, Host: "bench", PID: 1}
			if mode == "poll" {
				m.Store = noWaitStore{s}
			}
			ctx := context.Background()
			const key = "task:HANDOVER"
			var lat durations
			for b.Loop() {
				if _, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: holder, TTL: time.Minute}); err != nil {
					b.Fatal(err)
				}
				done := make(chan error, 1)
				go func() {
					_, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: waiter, TTL: time.Minute, Wait: 5 * time.Second})
					done <- err
				}()
				if mode == "wait" {
					listening(b, s, key, 1)
				}
				time.Sleep(2 * time.Millisecond) // the waiter is waiting by now
				released := time.Now()
				if _, err := m.Release(ctx, []string{key}, holder, false); err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(released))
				if _, err := m.Release(ctx, []string{key}, waiter, false); err != nil {
					b.Fatal(err)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(ms(lat.pct(0.50)), "handover-p50-ms")
			b.ReportMetric(ms(lat.pct(0.99)), "handover-p99-ms")
		})
	}
}

// BenchmarkHandoverContended: 8 workers, each with its own connections,
// take one key b.N times in all through the Manager's --wait, hold it for
// 100µs and release it; hand-over is the time from a release to the next
// grant to a worker that was already waiting.
func BenchmarkHandoverContended(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	prefix := freshPrefix(b)
	const workers = 8
	const key = "task:CONTENDED"
	var (
		next     atomic.Int64
		released atomic.Int64
		inside   atomic.Int32
		mu       sync.Mutex
		lat      durations
		firstErr error
		wg       sync.WaitGroup
	)
	ctx := context.Background()
	mgrs := make([]*locks.Manager, workers)
	for w := range mgrs {
		mgrs[w] = &locks.Manager{Store: open(b, srv.URL(), Options{Prefix: prefix}), Host: "bench", PID: w}
	}
	b.ResetTimer()
	start := time.Now()
	for w, m := range mgrs {
		me := locks.Owner{Holder: fmt.Sprintf("w%d", w), HolderType: scope.WorkerAgent, Session: fmt.Sprintf("w%d", w)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now().UnixNano()
				_, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: me, TTL: time.Minute, Wait: 30 * time.Second})
				got := time.Now().UnixNano()
				if err == nil && inside.Add(1) != 1 {
					err = errors.New("two holders at once")
				}
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				if rel := released.Load(); rel > t0 {
					mu.Lock()
					lat = append(lat, time.Duration(got-rel))
					mu.Unlock()
				}
				time.Sleep(100 * time.Microsecond)
				inside.Add(-1)
				released.Store(time.Now().UnixNano())
				if _, err := m.Release(ctx, []string{key}, me, false); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/el.Seconds(), "grants/s")
	b.ReportMetric(float64(len(lat)), "handovers")
	b.ReportMetric(ms(lat.pct(0.50)), "handover-p50-ms")
	b.ReportMetric(ms(lat.pct(0.99)), "handover-p99-ms")
}

// BenchmarkAcquireMinReplicas measures one acquisition (a lone caller,
// then a release not timed) on a primary with one replica, with
// min_replicas 0 and 1, alternating between the two stores every
// iteration so that a busy moment of the machine weighs on both. It
// reports each one's p50 and p99 and their ratio to min_replicas 0.
func BenchmarkAcquireMinReplicas(b *testing.B) {
	primary := redistest.Start(b, redistest.Options{})
	redistest.StartReplica(b, primary, redistest.Options{})
	ctx := context.Background()
	stores := []*Store{
		open(b, primary.URL(), Options{}),
		open(b, primary.URL(), Options{MinReplicas: 1}),
	}
	lat := make([]durations, len(stores))
	for b.Loop() {
		for i, s := range stores {
			rec := locktest.NewLock("task:BENCH", "bench", time.Now(), time.Minute)
			start := time.Now()
			got, _, err := s.Acquire(ctx, rec, start)
			lat[i] = append(lat[i], time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Release(ctx, got.Key, got.Token); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range lat {
		slices.Sort(lat[i])
	}
	b.ReportMetric(ms(lat[0].pct(0.50)), "min0-p50-ms")
	b.ReportMetric(ms(lat[0].pct(0.99)), "min0-p99-ms")
	b.ReportMetric(ms(lat[1].pct(0.50)), "min1-p50-ms")
	b.ReportMetric(ms(lat[1].pct(0.99)), "min1-p99-ms")
	b.ReportMetric(float64(lat[1].pct(0.50))/float64(lat[0].pct(0.50)), "p50-x-min0")
	b.ReportMetric(float64(lat[1].pct(0.99))/float64(lat[0].pct(0.99)), "p99-x-min0")
}
