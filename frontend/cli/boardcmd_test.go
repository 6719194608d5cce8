package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/frontend/board"
	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/session"
)

// BenchmarkBoardFrame: one frame of the running board as it is made every
// second — the store listed, the recent events read, the queue computed
// from the same listing, the frame rendered (30 rows of locks, 10 of
// packages) — with 10,000 live locks, without a work packages file
// (locks-ms) and with one of 1,000 packages (locks+queue-ms: 100 claimed,
// 300 done, 50 failed, 550 ready, half of those after a dependency not
// done, and every package's file held by another worker), frame by frame
// in turn; queue-step-ms is the queue's own part (the file read, the
// queue computed from a listing). BENCHMARKS.md "The lock board".
func BenchmarkBoardFrame(b *testing.B) {
	r := gittest.New(b)
	r.Write("README.md", "x\n")
	r.Commit("init")
	ctx := context.Background()
	e, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "viewer", WorkerType: "human"})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Open(ctx, service.Purpose{}); err != nil {
		b.Fatal(err)
	}
	now := e.Now()
	put := func(l locks.Lock) {
		l.Token, l.Session, l.HolderType = "t-"+l.Key, "s-"+l.Holder, "agent"
		if l.CreatedAt.IsZero() {
			l.CreatedAt = now.Add(-time.Minute)
		}
		if _, _, err := e.LockStore().Acquire(ctx, l, now); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 10000 {
		put(locks.Lock{Key: fmt.Sprintf("src/pkg%03d/f%05d.go", i%100, i), Holder: fmt.Sprintf("agent-%d", i%10),
			ExpiresAt: now.Add(time.Hour + time.Duration(i)*time.Second), Reason: "bench"})
	}
	var wps strings.Builder
	wps.WriteString("packages:\n")
	for i := range 1000 {
		fmt.Fprintf(&wps, "  - id: WP-%04d\n    title: part %d\n    locks:\n      files: [src/pkg%03d/f%05d.go]\n", i, i, (i*10)%100, i*10)
		if i >= 450 && i%2 == 0 {
			fmt.Fprintf(&wps, "    depends_on: [WP-%04d]\n", i-1)
		}
		task := fmt.Sprintf("task:WP-%04d", i)
		finished := now.Add(-time.Minute)
		switch {
		case i < 100:
			put(locks.Lock{Key: task, Holder: fmt.Sprintf("agent-%d", i%10), Action: session.ClaimAction, TaskID: fmt.Sprintf("WP-%04d", i),
				ExpiresAt: now.Add(time.Duration(i+1) * time.Minute)})
		case i < 400:
			put(locks.Lock{Key: task, Holder: "agent-0", Action: session.DoneAction, ExpiresAt: locks.Never, FinishedAt: &finished})
		case i < 450:
			put(locks.Lock{Key: task, Holder: "agent-1", Action: session.FailedAction, Reason: "tests red", ExpiresAt: locks.Never, FinishedAt: &finished})
		}
	}
	r.Write("work-packages.yaml", wps.String())
	// The two boards alternate frame by frame, so both see the same
	// machine state; the one without the section reads no file.
	without, with := e.Board(), e.Board()
	v := board.View{Sort: "holder", Height: 30, Packages: 10, Selected: -1}
	// The file is moved aside for the board without the section, and back.
	file, aside := filepath.Join(r.Dir, "work-packages.yaml"), filepath.Join(r.Dir, "aside.yaml")
	frame := func(src *service.Board, from, to, want string) time.Duration {
		if err := os.Rename(from, to); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		s, err := src.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		out := board.Frame(s, v)
		took := time.Since(start)
		if !strings.Contains(out, "live lock(s)") || !strings.Contains(out, want) {
			b.Fatalf("wrong frame, lacks %q:\n%s", want, out)
		}
		return took
	}
	first, err := with.Snapshot(ctx)
	if err != nil {
		b.Fatal(err)
	}
	entries := first.Locks
	var plain, queue, step time.Duration
	b.ResetTimer()
	for range b.N {
		plain += frame(without, file, aside, "recent events:")
		queue += frame(with, aside, file, "550 ready, 100 claimed, 300 done, 50 failed")
		// The queue's own step, on a listing read before.
		start := time.Now()
		with.QueueOf(entries)
		step += time.Since(start)
	}
	b.ReportMetric(float64(step.Microseconds())/float64(b.N)/1000, "queue-step-ms")
	b.ReportMetric(float64(plain.Microseconds())/float64(b.N)/1000, "locks-ms/frame")
	b.ReportMetric(float64(queue.Microseconds())/float64(b.N)/1000, "locks+queue-ms/frame")
	b.ReportMetric(float64(queue)/float64(plain), "x")
}
