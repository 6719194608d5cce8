package redisstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/workflow"
	"github.com/lockgate/lockgate/workflow/locktest"
)

// BenchmarkAcquireRelease measures acquire+release pairs on a loopback
// redis-server with 1, 8 and 64 concurrent clients (one connection each,
// each client on its own key). Besides the store's own numbers (pairs/s,
// acquire and pair latency p50/p99) each sub-benchmark reports, measured in
// the same run on the same server:
//
//   - the floor: redis-benchmark's SET and GET requests/s at the same
//     concurrency (-n 100000), and a go-redis loop of SET NX PX + DEL,
//     the two plain round trips an acquire+release pair cannot beat;
//   - the peer: redsync v4 (single instance) Lock+Unlock pairs/s and p50/p99
//     at the same concurrency, and our throughput relative to it.
//
// Every grant's fence is checked to be above the previous one of its key.
func BenchmarkAcquireRelease(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	baselines := map[int]baseline{}
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			base, ok := baselines[clients]
			if !ok {
				base = measureBaseline(b, srv, clients)
				baselines[clients] = base
			}
			s := open(b, srv.URL(), Options{PoolSize: clients})
			warm(b, clients, func(ctx context.Context, i int) error {
				return s.rdb.Ping(ctx).Err()
			})
			b.ResetTimer()
			res := runPairs(b, clients, b.N, func(c int) pairFunc {
				key := fmt.Sprintf("src/bench/client-%03d.go", c)
				var last uint64
				return func(ctx context.Context) (time.Duration, error) {
					now := time.Now()
					rec := locktest.NewLock(key, "bench", now, time.Minute)
					t0 := time.Now()
					got, _, err := s.Acquire(ctx, rec, now)
					acq := time.Since(t0)
					if err != nil {
						return 0, err
					}
					if got.Fence <= last {
						return 0, fmt.Errorf("fence of %s went from %d to %d", key, last, got.Fence)
					}
					last = got.Fence
					return acq, s.Release(ctx, key, got.Token)
				}
			})
			b.StopTimer()
			b.ReportMetric(res.rate, "pairs/s")
			b.ReportMetric(res.rate/float64(clients), "pairs/s/conn")
			b.ReportMetric(ms(res.first.pct(0.50)), "acq-p50-ms")
			b.ReportMetric(ms(res.first.pct(0.99)), "acq-p99-ms")
			b.ReportMetric(ms(res.pair.pct(0.50)), "pair-p50-ms")
			b.ReportMetric(ms(res.pair.pct(0.99)), "pair-p99-ms")
			b.ReportMetric(base.setRPS, "floor-bench-set/s")
			b.ReportMetric(base.getRPS, "floor-bench-get/s")
			b.ReportMetric(base.floor.rate, "floor-setdel-pairs/s")
			b.ReportMetric(base.peer.rate, "redsync-pairs/s")
			b.ReportMetric(ms(base.peer.pair.pct(0.50)), "redsync-p50-ms")
			b.ReportMetric(ms(base.peer.pair.pct(0.99)), "redsync-p99-ms")
			b.ReportMetric(res.rate/base.peer.rate, "x-redsync")
			b.ReportMetric(res.rate/base.floor.rate, "x-floor")
		})
	}
}

// baseline is what a sub-benchmark compares itself with.
type baseline struct {
	setRPS, getRPS float64 // redis-benchmark
	floor          pairs   // go-redis SET NX PX + DEL
	peer           pairs   // redsync Lock + Unlock
}

// baselinePairs is the number of pairs the floor and the peer run.
const baselinePairs = 20000

func measureBaseline(b *testing.B, srv *redistest.Server, clients int) baseline {
	b.Helper()
	var base baseline
	out, err := srv.Benchmark("-t", "set,get", "-n", "100000", "-c", fmt.Sprint(clients))
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range out {
		switch r.Test {
		case "SET":
			base.setRPS = r.RPS
		case "GET":
			base.getRPS = r.RPS
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: clients, DisableIdentity: true, Protocol: 2})
	defer rdb.Close()
	warm(b, clients, func(ctx context.Context, i int) error { return rdb.Ping(ctx).Err() })
	base.floor = runPairs(b, clients, baselinePairs, func(c int) pairFunc {
		key := fmt.Sprintf("floor:%d", c)
		return func(ctx context.Context) (time.Duration, error) {
			t0 := time.Now()
			if err := rdb.SetNX(ctx, key, "token", time.Minute).Err(); err != nil {
				return 0, err
			}
			first := time.Since(t0)
			return first, rdb.Del(ctx, key).Err()
		}
	})
	rs := redsync.New(goredis.NewPool(rdb))
	base.peer = runPairs(b, clients, baselinePairs, func(c int) pairFunc {
		mu := rs.NewMutex(fmt.Sprintf("redsync:%d", c), redsync.WithExpiry(time.Minute), redsync.WithTries(1))
		return func(ctx context.Context) (time.Duration, error) {
			t0 := time.Now()
			if err := mu.LockContext(ctx); err != nil {
				return 0, err
			}
			first := time.Since(t0)
			_, err := mu.UnlockContext(ctx)
			return first, err
		}
	})
	return base
}

// warm opens the pool's connections before timing.
func warm(b *testing.B, clients int, ping func(context.Context, int) error) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ping(context.Background(), i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

// pairFunc does one pair and returns the latency of its first half.
type pairFunc func(context.Context) (time.Duration, error)

type durations []time.Duration

func (d durations) pct(p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[int(p*float64(len(d)-1))]
}

// pairs is the outcome of runPairs.
type pairs struct {
	rate  float64   // pairs per second, all clients together
	first durations // latency of the first half (acquire), sorted
	pair  durations // latency of whole pairs, sorted
}

// runPairs runs n pairs over clients goroutines, each with its own pair
// function (its own key).
func runPairs(b *testing.B, clients, n int, mk func(client int) pairFunc) pairs {
	b.Helper()
	var next atomic.Int64
	var mu sync.Mutex
	var out pairs
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := mk(c)
			ctx := context.Background()
			var first, pair durations
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				d, err := f(ctx)
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
				pair = append(pair, time.Since(t0))
				first = append(first, d)
			}
			mu.Lock()
			out.first = append(out.first, first...)
			out.pair = append(out.pair, pair...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	slices.Sort(out.first)
	slices.Sort(out.pair)
	out.rate = float64(len(out.pair)) / elapsed.Seconds()
	return out
}

// fill acquires n path locks, a thousand per round trip.
func fill(b *testing.B, s *Store, n int) {
	b.Helper()
	ctx := context.Background()
	now := time.Now()
	for start := 0; start < n; start += 1000 {
		p := s.rdb.Pipeline()
		for i := start; i < min(start+1000, n); i++ {
			key := fmt.Sprintf("src/pkg%03d/file%05d.go", i%100, i)
			rec := locktest.NewLock(key, "filler", now, time.Hour)
			head, tail, err := encodeValue(rec)
			if err != nil {
				b.Fatal(err)
			}
			acquireScript.Run(ctx, p, []string{s.recKey(key), s.kFences, s.kKeys, s.kPat, s.histKey(rec.Session), s.rateKey(rec.Session)},
				key, now.UnixMilli(), s.lifetime(rec.ExpiresAt, now), head, tail, "0", 0, 0, 1)
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
// releases it, through the Manager's --wait polling and through WaitRelease.
func BenchmarkHandover(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	for _, mode := range []string{"poll", "pubsub"} {
		b.Run(mode, func(b *testing.B) {
			s := open(b, srv.URL(), Options{})
			m := &workflow.Manager{Store: s, Host: "bench", PID: 1}
			holder := workflow.Owner{Holder: "holder", HolderType: "agent", Session: "h"}
			waiter := workflow.Owner{Holder: "waiter", HolderType: "agent", Session: "w"}
			ctx := context.Background()
			var lat durations
			for b.Loop() {
				key := "task:HANDOVER"
				if _, err := m.Acquire(ctx, workflow.Request{Keys: []string{key}, Owner: holder, TTL: time.Minute}); err != nil {
					b.Fatal(err)
				}
				var released atomic.Int64
				done := make(chan error, 1)
				ready := make(chan struct{})
				go func() {
					var err error
					if mode == "pubsub" {
						var ch <-chan struct{}
						ch, err = s.WaitRelease(ctx, key)
						close(ready)
						if err == nil {
							<-ch
							_, err = m.Acquire(ctx, workflow.Request{Keys: []string{key}, Owner: waiter, TTL: time.Minute, Wait: time.Second})
						}
					} else {
						close(ready)
						_, err = m.Acquire(ctx, workflow.Request{Keys: []string{key}, Owner: waiter, TTL: time.Minute, Wait: 5 * time.Second})
					}
					if err == nil {
						lat = append(lat, time.Duration(time.Now().UnixNano()-released.Load()))
					}
					done <- err
				}()
				<-ready
				time.Sleep(2 * time.Millisecond) // the waiter is polling by now
				released.Store(time.Now().UnixNano())
				if _, err := m.Release(ctx, []string{key}, holder, false); err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
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
