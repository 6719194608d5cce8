package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

// BenchmarkClaimQueue: `lockgate claim` (the next ready package) as a
// whole process, with 100, 1,000 and 10,000 packages of one file each, the
// first half of them done (so that a claim passes them all before it finds
// a ready one), on the file store, the git store (a bare remote on disk)
// and Redis. Alternately, as the baseline, `lockgate lock acquire` of one
// key on the same store in the same state. Each claim is given back
// (`release-package`, not timed) and each lock released, so that every
// round finds the same state. Reported: p50 and p99 of both, and the
// ratio of the p50s.
func BenchmarkClaimQueue(b *testing.B) {
	bin := lockgateBinary(b)
	for _, store := range []string{"file", "git", "redis"} {
		b.Run(store, func(b *testing.B) {
			var redisURL string
			if store == "redis" {
				redisURL = redistest.Start(b, redistest.Options{}).URL()
			}
			for _, n := range []int{10, 100, 1000, 10000} {
				b.Run(fmt.Sprint(n), func(b *testing.B) {
					r, env := queueRepo(b, store, redisURL, n)
					var claims, acquires, releases []time.Duration
					b.ResetTimer()
					for i := range b.N {
						acquires = append(acquires, timed(b, r.Dir, env, bin, "lock", "acquire", "bench/baseline.go"))
						b.StopTimer()
						timed(b, r.Dir, env, bin, "lock", "release", "bench/baseline.go")
						b.StartTimer()
						start := time.Now()
						out := runOut(b, r.Dir, env, bin, "claim")
						claims = append(claims, time.Since(start))
						b.StopTimer()
						// The first ready package: the one after the done half.
						if want := queueID(n / 2); out != want {
							b.Fatalf("round %d: claim handed out %q, want %s", i, out, want)
						}
						releases = append(releases, timed(b, r.Dir, env, bin, "release-package", out))
						b.StartTimer()
					}
					b.StopTimer()
					c50, c99 := percentile(claims, 0.5), percentile(claims, 0.99)
					a50, a99 := percentile(acquires, 0.5), percentile(acquires, 0.99)
					b.ReportMetric(ms(c50, 1), "claim-p50-ms")
					b.ReportMetric(ms(c99, 1), "claim-p99-ms")
					b.ReportMetric(ms(a50, 1), "acquire-p50-ms")
					b.ReportMetric(ms(a99, 1), "acquire-p99-ms")
					b.ReportMetric(float64(c50)/float64(a50), "x-acquire")
					// release-package reads what done reads (the package,
					// the claims of its worker) and is timed apart.
					b.ReportMetric(ms(percentile(releases, 0.5), 1), "release-p50-ms")
				})
			}
		})
	}
}

func queueID(i int) string { return fmt.Sprintf("WP-%05d", i) }

// runOut runs name args in dir and returns its trimmed standard output.
func runOut(b *testing.B, dir string, env []string, name string, args ...string) string {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// queueRepo makes a repository whose work-packages.yaml lists n packages
// (WP-00000 …, one file each) on the given store, the first n/2 of them
// done.
func queueRepo(b *testing.B, store, redisURL string, n int) (*gittest.Repo, []string) {
	policy := "version: 1\nlocks: {store: " + store + "}\nworkflow: {auto_commit: false}\n"
	var r *gittest.Repo
	var env []string
	if store == "git" {
		r, env = gitStoreClone(b, gitStoreRemotes(b)["file"], policy)
	} else {
		r, env = benchRepo(b)
		r.Write(".lockgate.yaml", policy)
		r.Commit("policy")
	}
	if redisURL != "" {
		env = append(env, "LOCK_REDIS_URL="+redisURL)
	}
	var y strings.Builder
	y.WriteString("packages:\n")
	for i := range n {
		fmt.Fprintf(&y, "  - id: %s\n    title: package %d\n    locks:\n      files: [src/p%05d.go]\n", queueID(i), i, i)
	}
	r.Write("work-packages.yaml", y.String())
	// The first command records the clone's store (and, on Redis, its
	// fence floor), as it would in use.
	timed(b, r.Dir, env, lockgateBinary(b), "lock", "acquire", "bench/first.go")
	timed(b, r.Dir, env, lockgateBinary(b), "lock", "release", "bench/first.go")
	seedDone(b, r.Dir, env, n/2)
	// A claim knows the packages file by its stamp once it has not
	// changed for two seconds (docs/formats.md), as a committed file
	// in use has not: time that, not a file written a moment ago.
	time.Sleep(2 * time.Second)
	return r, env
}

// seedDone writes the task records of packages 0 … done-1 as `lockgate
// done` leaves them, straight into the clone's store (in one change on
// the git store): finishing thousands of packages one command at a time
// would take longer than the benchmark.
func seedDone(b *testing.B, dir string, env []string, done int) {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	// git commands run in process read the environment.
	for k, v := range vars {
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" {
			b.Setenv(k, v)
		}
	}
	ctx := context.Background()
	ws, err := service.Load(ctx, service.Options{Dir: dir, As: "seed@bench", WorkerType: "agent", Session: "seed",
		Getenv: func(k string) string { return vars[k] }})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	if err := ws.Open(ctx, service.Purpose{TakesLocks: true}); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	put := func(s locks.Store) error {
		for i := range done {
			rec := locks.Lock{Key: lockkey.TaskKey(queueID(i)), Holder: ws.Owner().Holder, HolderType: ws.Owner().HolderType, Session: ws.Owner().Session,
				Action: session.DoneAction, PID: os.Getpid(), Host: "bench", CreatedAt: now, ExpiresAt: locks.Never,
				TaskID: queueID(i), Token: locks.NewToken(), FinishedAt: &now}
			if _, _, err := s.Acquire(ctx, rec, now); err != nil {
				return fmt.Errorf("seed %s: %w", rec.Key, err)
			}
		}
		return nil
	}
	if tx, ok := ws.LockStore().(locks.Transactor); ok {
		err = tx.Transact(ctx, put)
	} else {
		err = put(ws.LockStore())
	}
	if err != nil {
		b.Fatal(err)
	}
	q, err := ws.Queue().Packages(ctx, mustPackages(b, ws), false)
	if err != nil {
		b.Fatal(err)
	}
	if q.Counts[queue.PackageDone] != done {
		b.Fatalf("seeded %d done packages, the queue counts %d", done, q.Counts[queue.PackageDone])
	}
}

func mustPackages(b *testing.B, ws *service.Workspace) *config.WorkPackages {
	wps, err := ws.Queue().LoadPackages("")
	if err != nil {
		b.Fatal(err)
	}
	return wps
}
