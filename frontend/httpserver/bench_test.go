package httpserver

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkServeLocks measures lock requests through the JSON API over
// loopback HTTP: each op is one acquire and one release by one client, on
// the file and Redis stores, by 1 client (the baseline) and by 64 at once,
// each its own user, on a key of its own or all on one shared key (an
// acquire waits for it, and asks again when its wait runs out). It
// reports requests a second and the 50th and 99th percentiles of one
// request's time; the rate limit is off.
func BenchmarkServeLocks(b *testing.B) {
	for _, store := range []string{"file", "redis"} {
		for _, shared := range []bool{false, true} {
			for _, clients := range []int{1, 64} {
				keys := "distinct"
				if shared {
					keys = "shared"
				}
				b.Run(fmt.Sprintf("%s/%s-keys/clients=%d", store, keys, clients), func(b *testing.B) {
					benchServe(b, store, clients, shared)
				})
			}
		}
	}
}

func benchServe(b *testing.B, store string, clients int, shared bool) {
	srv, tokens := storeServer(b, store, clients, Options{}, nil)
	srv.Client().Transport.(*http.Transport).MaxIdleConnsPerHost = clients
	// The first request of each user has its token checked.
	for c := range clients {
		if status, body, err := send(srv, "GET", "/api/v1/locks", fmt.Sprintf("u%d", c), tokens[c], ""); err != nil || status != http.StatusOK {
			b.Fatalf("warm-up: %d %v %s", status, err, body)
		}
	}
	var (
		mu    sync.Mutex
		times []time.Duration
		wg    sync.WaitGroup
	)
	errs := make(chan error, clients)
	b.ResetTimer()
	start := time.Now()
	for c := range clients {
		n := b.N / clients
		if c < b.N%clients {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprintf("u%d", c)
			key := "bench/" + user
			if shared {
				key = "bench/shared"
			}
			mine := make([]time.Duration, 0, 2*n)
			for range n {
				for {
					t0 := time.Now()
					status, body, err := send(srv, "POST", "/api/v1/locks", user, tokens[c], fmt.Sprintf(`{"keys":[%q],"wait":"30s"}`, key))
					mine = append(mine, time.Since(t0))
					if err == nil && status == http.StatusOK {
						break
					}
					// Waiters are not queued: one may wait out its 30 s
					// while others take the key, and asks again.
					if err != nil || status != http.StatusConflict {
						errs <- fmt.Errorf("%s acquire: %d %v %s", user, status, err, body)
						return
					}
				}
				t1 := time.Now()
				status, body, err := send(srv, "DELETE", "/api/v1/locks/"+key, user, tokens[c], "")
				if err != nil || status != http.StatusOK {
					errs <- fmt.Errorf("%s release: %d %v %s", user, status, err, body)
					return
				}
				mine = append(mine, time.Since(t1))
			}
			mu.Lock()
			times = append(times, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	slices.Sort(times)
	b.ReportMetric(float64(len(times))/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}
