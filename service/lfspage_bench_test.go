package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
)

// lfsBenchWorkspace is a workspace on the file store holding n path
// locks of other workers, written straight into the store (a command a
// lock would take hours at 10,000).
func lfsBenchWorkspace(b *testing.B, n int) *service.Workspace {
	b.Helper()
	ctx := context.Background()
	r := gittest.New(b)
	r.Write("README.md", "x\n")
	r.Write(".lockgate.yaml", "version: 1\nworkflow: {auto_commit: false, auto_push: false}\n")
	r.Commit("init")
	e, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "alice", WorkerType: "human", Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	if err := e.Open(ctx, service.Purpose{TakesLocks: true}); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for i := range n {
		rec := locks.Lock{Key: fmt.Sprintf("art/f%05d.psd", i), Token: fmt.Sprintf("t%d", i), Holder: fmt.Sprintf("w%d", i%7),
			HolderType: "human", CreatedAt: now, ExpiresAt: now.Add(4 * time.Hour)}
		if _, _, err := e.LockStore().Acquire(ctx, rec, now); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// BenchmarkLFSPage: one page of git-lfs's list (100 locks, what a client
// asks with limit=100) and the first page of its verify, on the file
// store with 10, 1,000 and 10,000 live locks. x-vs-10 is each case's time
// against the 10-lock case's, measured in the same run.
func BenchmarkLFSPage(b *testing.B) {
	ctx := context.Background()
	var base float64
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("locks=%d", n), func(b *testing.B) {
			e := lfsBenchWorkspace(b, n)
			b.ResetTimer()
			for range b.N {
				res, err := e.LFSListLocks(ctx, service.LFSListRequest{Limit: 100})
				if err != nil || len(res.Locks) != min(n, 100) {
					b.Fatalf("list: %d locks, %v", len(res.Locks), err)
				}
			}
			b.StopTimer()
			per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if n == 10 {
				base = per
			}
			if base > 0 {
				b.ReportMetric(per/base, "x-vs-10")
			}
		})
	}
}
