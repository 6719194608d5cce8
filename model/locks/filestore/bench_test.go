package filestore

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/locktest"
)

// BenchmarkAcquireRelease measures a durable acquire+release pair (every
// fsync on) and reports its p50 and p99 latency and pairs per second.
func BenchmarkAcquireRelease(b *testing.B) {
	s := openStore(b, b.TempDir())
	ctx := context.Background()
	now := time.Now()
	rec := locktest.NewLock("src/bench.go", "bench", now, time.Hour)
	var durs []time.Duration
	start := time.Now()
	for b.Loop() {
		t0 := time.Now()
		if _, _, err := s.Acquire(ctx, rec, now); err != nil {
			b.Fatal(err)
		}
		if err := s.Release(ctx, rec.Key, rec.Token); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t0))
	}
	elapsed := time.Since(start)
	slices.Sort(durs)
	pct := func(p float64) float64 {
		return float64(durs[int(p*float64(len(durs)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(len(durs))/elapsed.Seconds(), "pairs/s")
}

// fill creates n path locks and m pattern locks, skipping fsyncs.
func fill(b *testing.B, s *Store, n, m int) {
	b.Helper()
	s.noSync = true
	defer func() { s.noSync = false }()
	ctx := context.Background()
	now := time.Now()
	for i := range n {
		key := fmt.Sprintf("src/pkg%03d/file%05d.go", i%100, i)
		if _, _, err := s.Acquire(ctx, locktest.NewLock(key, "filler", now, time.Hour), now); err != nil {
			b.Fatal(err)
		}
	}
	for i := range m {
		key := fmt.Sprintf("src/pkg%03d/**", i)
		if i%2 == 1 {
			key = fmt.Sprintf("docs/area%03d/*.md", i)
		}
		if _, _, err := s.Acquire(ctx, locktest.NewLock(key, "filler", now, time.Hour), now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOverlapping checks one path against 10,000 path locks and 100
// pattern locks; it reports how many record files each check reads.
func BenchmarkOverlapping(b *testing.B) {
	s := openStore(b, b.TempDir())
	fill(b, s, 10000, 100)
	ctx := context.Background()
	before := s.reads.Load()
	var found int
	for b.Loop() {
		entries, err := s.Overlapping(ctx, "src/pkg042/file00042.go")
		if err != nil {
			b.Fatal(err)
		}
		found = len(entries)
	}
	b.ReportMetric(float64(s.reads.Load()-before)/float64(b.N), "reads/op")
	b.ReportMetric(float64(found), "found")
}

// BenchmarkList lists a store of 10,000 locks.
func BenchmarkList(b *testing.B) {
	s := openStore(b, b.TempDir())
	fill(b, s, 9900, 100)
	ctx := context.Background()
	for b.Loop() {
		entries, err := s.List(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(entries) != 10000 {
			b.Fatalf("List returned %d entries", len(entries))
		}
	}
}
