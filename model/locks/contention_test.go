package locks_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
	"github.com/lockgate/lockgate/model/locks/gitstore"
	"github.com/lockgate/lockgate/model/locks/redisstore"
)

// Child processes of the contention test run contend() instead of tests.
func TestMain(m *testing.M) {
	if dir := os.Getenv("LOCKGATE_CONTENDER_DIR"); dir != "" {
		n, _ := strconv.Atoi(os.Getenv("LOCKGATE_CONTENDER_N"))
		if err := contend(dir, os.Getenv("LOCKGATE_CONTENDER_ID"), n, os.Getenv("LOCKGATE_CONTENDER_STORE")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// contend acquires and releases one key n times with --wait semantics. In
// the critical section it creates a marker file with O_EXCL: finding it
// there means two processes held the lock at once. Before releasing it
// writes the release time; a waiter that acquires next prints how long after
// that release it got the lock.
func contend(dir, id string, n int, storeSpec string) error {
	store, err := openContender(dir, id, storeSpec)
	if err != nil {
		return err
	}
	defer store.Close()
	m := &locks.Manager{Store: store, Host: "bench", PID: os.Getpid()}
	me := locks.Owner{Holder: id, HolderType: "agent", Session: id}
	marker := filepath.Join(dir, "critical")
	released := filepath.Join(dir, "released")
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	ctx := context.Background()
	for range n {
		start := time.Now().UnixNano()
		if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"contended"}, Owner: me, TTL: 10 * time.Minute, Wait: 10 * time.Minute}); err != nil {
			return err
		}
		got := time.Now().UnixNano()
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(out, "VIOLATION", id)
			return fmt.Errorf("exclusion violated: %w", err)
		}
		f.Close()
		if b, err := os.ReadFile(released); err == nil {
			if rel, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && rel > start {
				// We were already waiting when the previous holder let go.
				fmt.Fprintln(out, "handover", got-rel)
			}
		}
		if err := os.Remove(marker); err != nil {
			return err
		}
		if err := os.WriteFile(released, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644); err != nil {
			return err
		}
		if _, err := m.Release(ctx, []string{"contended"}, me, false); err != nil {
			return err
		}
	}
	return nil
}

// openContender opens the store a contender locks in: the file store in
// dir (""), the git store through a clone of its own of the remote at the
// URL after "git:", or Redis at a redis:// URL.
func openContender(dir, id, spec string) (locks.Store, error) {
	switch {
	case spec == "":
		return filestore.Open(filepath.Join(dir, "locks"))
	case strings.HasPrefix(spec, "git:"):
		clone := filepath.Join(dir, "clone-"+id)
		for _, args := range [][]string{{"init", "-q", clone}, {"-C", clone, "remote", "add", "origin", strings.TrimPrefix(spec, "git:")}} {
			if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("git %v: %v: %s", args, err, out)
			}
		}
		return gitstore.Open(gitstore.Options{GitDir: filepath.Join(clone, ".git"), WorkTree: clone, Remote: "origin", ClockSkew: gitstore.DefaultClockSkew})
	}
	return redisstore.Open(context.Background(), spec, redisstore.Options{Prefix: "contention:" + filepath.Base(dir)})
}

// runContention starts procs processes sharing total acquisitions on the
// store storeSpec names (see openContender) and returns the handover
// latencies.
func runContention(t testing.TB, procs, total int, storeSpec string) []time.Duration {
	dir := t.TempDir()
	var (
		mu        sync.Mutex
		handovers []time.Duration
		wg        sync.WaitGroup
		errs      = make(chan error, procs)
	)
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "LOCKGATE_CONTENDER_DIR="+dir, "LOCKGATE_CONTENDER_STORE="+storeSpec,
				"LOCKGATE_CONTENDER_ID=p"+strconv.Itoa(i), "LOCKGATE_CONTENDER_N="+strconv.Itoa(total/procs))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("contender %d: %v: %s%s", i, err, stderr.String(), out)
				return
			}
			var local []time.Duration
			for _, line := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(line, "handover "); ok {
					ns, _ := strconv.ParseInt(v, 10, 64)
					local = append(local, time.Duration(ns))
				}
			}
			mu.Lock()
			handovers = append(handovers, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if err := errors.Join(all...); err != nil {
		t.Fatal(err)
	}
	slices.Sort(handovers)
	return handovers
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// TestContention: 8 processes contending on one key never hold it at once.
func TestContention(t *testing.T) {
	t.Parallel()
	total := 4000
	if testing.Short() {
		total = 400
	}
	h := runContention(t, 8, total, "")
	t.Logf("%d handovers: p50 %v p99 %v", len(h), pct(h, 0.5), pct(h, 0.99))
}

// TestContentionGitStore: 8 clones of one remote contending on one key
// through the git store never hold it at once.
func TestContentionGitStore(t *testing.T) {
	t.Parallel()
	h := runContention(t, 8, 8*gittest.Rounds(t, 10), "git:"+bareRemote(t))
	t.Logf("%d handovers: p50 %v p99 %v", len(h), pct(h, 0.5), pct(h, 0.99))
}

func bareRemote(t testing.TB) string {
	dir := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return dir
}

// BenchmarkContentionStores: 8 processes (8 clones for the git store)
// contend on one key, 200 acquisitions in all, on each store: handover
// latency and throughput side by side, in one run. The git store has no
// release signal: a waiter fetches every PollEvery.
func BenchmarkContentionStores(b *testing.B) {
	srv := redistest.Start(b, redistest.Options{})
	for _, kind := range []string{"file", "git", "redis"} {
		b.Run(kind, func(b *testing.B) {
			for range b.N {
				spec := map[string]string{"file": "", "redis": srv.URL()}[kind]
				if kind == "git" {
					spec = "git:" + bareRemote(b)
				}
				start := time.Now()
				h := runContention(b, 8, 200, spec)
				el := time.Since(start)
				b.ReportMetric(float64(200)/el.Seconds(), "acquisitions/s")
				b.ReportMetric(float64(pct(h, 0.5).Microseconds())/1000, "handover-p50-ms")
				b.ReportMetric(float64(pct(h, 0.99).Microseconds())/1000, "handover-p99-ms")
				b.ReportMetric(0, "violations")
			}
		})
	}
}

// BenchmarkContention: 8 processes, LOCKGATE_BENCH_ACQUISITIONS in all
// (100,000 by default); reports handover latency after a release.
func BenchmarkContention(b *testing.B) {
	total := 100000
	if v, err := strconv.Atoi(os.Getenv("LOCKGATE_BENCH_ACQUISITIONS")); err == nil && v > 0 {
		total = v
	}
	for range b.N {
		start := time.Now()
		h := runContention(b, 8, total, "")
		el := time.Since(start)
		b.ReportMetric(float64(total)/el.Seconds(), "acquisitions/s")
		b.ReportMetric(float64(pct(h, 0.5).Microseconds())/1000, "handover-p50-ms")
		b.ReportMetric(float64(pct(h, 0.99).Microseconds())/1000, "handover-p99-ms")
		b.ReportMetric(float64(len(h)), "handovers")
		b.ReportMetric(0, "violations")
	}
}
