package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkGitStoreWorkers: n workers, each in a clone of its own of one
// bare remote, take and give back a file of their own in a loop (`lockgate
// lock acquire` then `lock release`, whole processes, the git store with
// its defaults: events committed to the workflow branch and pushed) for
// LOCKGATE_BENCH_WORKERS_SECONDS (default 20) each; one worker alone,
// then 16, on each remote (a path, and `git daemon`). Unrelated
// acquisitions should not slow each other: the figures are the pairs a
// second of 16 against one (x-one-worker), the failed commands, and each
// one's p99 against one worker's.
func BenchmarkGitStoreWorkers(b *testing.B) {
	bin := lockgateBinary(b)
	seconds := 20
	if v := os.Getenv("LOCKGATE_BENCH_WORKERS_SECONDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("LOCKGATE_BENCH_WORKERS_SECONDS: %q is not a positive number", v)
		}
		seconds = n
	}
	policy := "version: 1\nlocks: {store: git}\n"
	if v := os.Getenv("LOCKGATE_BENCH_WORKERS_POLICY"); v != "" {
		policy = v // to take the figures apart: e.g. without pushing the workflow branch
	}
	kinds := []string{"file", "daemon"}
	if v := os.Getenv("LOCKGATE_BENCH_WORKERS_REMOTES"); v != "" {
		kinds = strings.Split(v, ",")
	}
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			type result struct {
				pairs  int
				failed int
				ops    []time.Duration
			}
			run := func(n int) result {
				url := gitStoreRemotes(b)[kind]
				var res result
				var mu sync.Mutex
				var wg sync.WaitGroup
				deadline := time.Now().Add(time.Duration(seconds) * time.Second)
				for w := range n {
					r, env := gitStoreClone(b, url, policy)
					env = append(env, fmt.Sprintf("LOCKGATE_WORKER=w%d", w))
					wg.Add(1)
					go func() {
						defer wg.Done()
						key := fmt.Sprintf("src/w%d.go", w)
						for time.Now().Before(deadline) {
							ok := true
							for _, op := range []string{"acquire", "release"} {
								cmd := exec.Command(bin, "lock", op, key)
								cmd.Dir, cmd.Env = r.Dir, env
								start := time.Now()
								err := cmd.Run()
								took := time.Since(start)
								mu.Lock()
								res.ops = append(res.ops, took)
								if err != nil {
									res.failed++
									ok = false
								}
								mu.Unlock()
							}
							if ok {
								mu.Lock()
								res.pairs++
								mu.Unlock()
							}
						}
					}()
				}
				wg.Wait()
				return res
			}
			b.ResetTimer()
			for range b.N {
				one := run(1)
				many := run(16)
				b.StopTimer()
				rate1 := float64(one.pairs) / float64(seconds)
				rate16 := float64(many.pairs) / float64(seconds)
				b.ReportMetric(rate1, "one-pairs/s")
				b.ReportMetric(rate16, "16-pairs/s")
				b.ReportMetric(rate16/rate1, "x-one-worker")
				b.ReportMetric(float64(one.failed+many.failed), "failed")
				b.ReportMetric(float64(percentile(one.ops, 0.99).Microseconds())/1000, "one-p99-ms")
				b.ReportMetric(float64(percentile(many.ops, 0.99).Microseconds())/1000, "16-p99-ms")
				b.ReportMetric(float64(percentile(many.ops, 0.99))/float64(percentile(one.ops, 0.99)), "x-p99")
				b.StartTimer()
			}
		})
	}
}
