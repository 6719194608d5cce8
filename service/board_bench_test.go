package service_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
)

// BenchmarkBoardEvents: one board frame (Board.Snapshot: the store
// listed, the last events read, no work packages file) against a day
// with 2,000 events of history, 1,000 of them on the workflow branch and
// every one in the journal, frame by frame in turn with the frame as it
// read the events before, from the journal alone (journal-ms: the store
// listed, the journal's day read). BENCHMARKS.md "The board's last events".
func BenchmarkBoardEvents(b *testing.B) {
	ctx := context.Background()
	r := gittest.New(b)
	r.Write("README.md", "x\n")
	r.Write(".lockgate.yaml", "version: 1\nworkflow: {auto_commit: false, auto_push: false}\n")
	r.Commit("init")
	e, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "alice", WorkerType: "human", Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Open(ctx, service.Purpose{TakesLocks: true}); err != nil {
		b.Fatal(err)
	}
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("api:GET /v1/r%04d", i)
	}
	if _, err := e.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: keys[:500]}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Locks().Acquire(ctx, lockops.AcquireRequest{Keys: keys[500:]}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.SyncWorkflow(ctx, service.SyncRequest{NoPush: true}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Locks().Release(ctx, lockops.ReleaseRequest{Keys: keys}); err != nil {
		b.Fatal(err)
	}
	board := e.Board()
	if v, err := board.Snapshot(ctx); err != nil || len(v.Events) == 0 {
		b.Fatalf("first frame: %d events, %v", len(v.Events), err)
	}
	var before, after time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := e.LockStore().List(ctx); err != nil {
			b.Fatal(err)
		}
		if _, _, _, err := e.JournalFile().ReadRecent(e.Now().Add(-24 * time.Hour)); err != nil {
			b.Fatal(err)
		}
		before += time.Since(start)
		start = time.Now()
		if _, err := board.Snapshot(ctx); err != nil {
			b.Fatal(err)
		}
		after += time.Since(start)
	}
	b.ReportMetric(float64(before.Microseconds())/float64(b.N)/1000, "journal-ms/frame")
	b.ReportMetric(float64(after.Microseconds())/float64(b.N)/1000, "log-ms/frame")
	b.ReportMetric(float64(after)/float64(before), "x")
}
