package peers

import (
	"context"
	"errors"
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
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/model/locks/redisstore"
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
// The store, the peer and the go-redis floor run the same number of pairs,
// interleaved in ten slices in rotating order, so that a busy moment of the
// machine weighs on all three alike. Every grant's fence is checked to be
// above the previous one of its key.
func BenchmarkAcquireRelease(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	tools := map[int][2]float64{}
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			rps, ok := tools[clients]
			if !ok {
				rps = redisBenchmark(b, srv, clients)
				tools[clients] = rps
			}
			s, err := redisstore.Open(context.Background(), srv.URL(), redisstore.Options{PoolSize: clients, Prefix: fmt.Sprintf("bench:%d:", clients)})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: clients, DisableIdentity: true, Protocol: 2})
			defer rdb.Close()
			rs := redsync.New(goredis.NewPool(rdb))
			warm(b, clients, func(ctx context.Context, i int) error {
				// A read of a key no one holds opens a pooled connection.
				_, err := s.Get(ctx, fmt.Sprintf("src/bench/warm-%03d.go", i))
				if errors.Is(err, locks.ErrNotFound) {
					err = nil
				}
				return err
			})
			warm(b, clients, func(ctx context.Context, i int) error { return rdb.Ping(ctx).Err() })
			last := make([]uint64, clients) // each client's last fence
			ours := func(c int) pairFunc {
				key := fmt.Sprintf("src/bench/client-%03d.go", c)
				return func(ctx context.Context) (time.Duration, error) {
					now := time.Now()
					rec := locktest.NewLock(key, "bench", now, time.Minute)
					t0 := time.Now()
					got, _, err := s.Acquire(ctx, rec, now)
					acq := time.Since(t0)
					if err != nil {
						return 0, err
					}
					if got.Fence <= last[c] {
						return 0, fmt.Errorf("fence of %s went from %d to %d", key, last[c], got.Fence)
					}
					last[c] = got.Fence
					return acq, s.Release(ctx, key, got.Token)
				}
			}
			peer := func(c int) pairFunc {
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
			}
			floor := func(c int) pairFunc {
				key := fmt.Sprintf("floor:%d", c)
				return func(ctx context.Context) (time.Duration, error) {
					t0 := time.Now()
					if err := rdb.SetNX(ctx, key, "token", time.Minute).Err(); err != nil {
						return 0, err
					}
					first := time.Since(t0)
					return first, rdb.Del(ctx, key).Err()
				}
			}
			var res, peerRes, floorRes pairs
			runs := []struct {
				mk  func(int) pairFunc
				out *pairs
			}{{ours, &res}, {peer, &peerRes}, {floor, &floorRes}}
			const parts = 10
			b.ResetTimer()
			b.StopTimer()
			for i := range parts {
				n := b.N / parts
				if i == parts-1 {
					n = b.N - n*(parts-1)
				}
				for j := range runs {
					r := runs[(i+j)%len(runs)]
					if r.out == &res {
						b.StartTimer()
					}
					r.out.add(runPairs(b, clients, n, r.mk))
					b.StopTimer()
				}
			}
			for _, r := range runs {
				r.out.finish()
			}
			b.ReportMetric(res.rate, "pairs/s")
			b.ReportMetric(res.rate/float64(clients), "pairs/s/conn")
			b.ReportMetric(ms(res.first.pct(0.50)), "acq-p50-ms")
			b.ReportMetric(ms(res.first.pct(0.99)), "acq-p99-ms")
			b.ReportMetric(ms(res.pair.pct(0.50)), "pair-p50-ms")
			b.ReportMetric(ms(res.pair.pct(0.99)), "pair-p99-ms")
			b.ReportMetric(rps[0], "floor-bench-set/s")
			b.ReportMetric(rps[1], "floor-bench-get/s")
			b.ReportMetric(floorRes.rate, "floor-setdel-pairs/s")
			b.ReportMetric(peerRes.rate, "redsync-pairs/s")
			b.ReportMetric(ms(peerRes.pair.pct(0.50)), "redsync-p50-ms")
			b.ReportMetric(ms(peerRes.pair.pct(0.99)), "redsync-p99-ms")
			b.ReportMetric(res.rate/peerRes.rate, "x-redsync")
			b.ReportMetric(res.rate/floorRes.rate, "x-floor")
		})
	}
}

// redisBenchmark returns redis-benchmark's SET and GET requests/s at the
// given concurrency.
func redisBenchmark(b *testing.B, srv *redistest.Server, clients int) [2]float64 {
	b.Helper()
	out, err := srv.Benchmark("-t", "set,get", "-n", "100000", "-c", fmt.Sprint(clients))
	if err != nil {
		b.Fatal(err)
	}
	var rps [2]float64
	for _, r := range out {
		switch r.Test {
		case "SET":
			rps[0] = r.RPS
		case "GET":
			rps[1] = r.RPS
		}
	}
	return rps
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

// pairs is the outcome of one or more runPairs.
type pairs struct {
	rate    float64   // pairs per second, all clients together
	first   durations // latency of the first half (acquire), sorted
	pair    durations // latency of whole pairs, sorted
	elapsed time.Duration
}

// add merges r into p; finish computes the rate and sorts.
func (p *pairs) add(r pairs) {
	p.first = append(p.first, r.first...)
	p.pair = append(p.pair, r.pair...)
	p.elapsed += r.elapsed
}

func (p *pairs) finish() {
	slices.Sort(p.first)
	slices.Sort(p.pair)
	p.rate = float64(len(p.pair)) / p.elapsed.Seconds()
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
	out.elapsed = time.Since(start)
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	out.finish()
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
