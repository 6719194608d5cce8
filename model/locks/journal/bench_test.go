package journal

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
)

// reportLatency adds p50 and p99 of the per-append durations to b's output.
func reportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)*50/100].Nanoseconds()), "p50-ns/op")
	b.ReportMetric(float64(d[min(len(d)*99/100, len(d)-1)].Nanoseconds()), "p99-ns/op")
}

func benchEvent(i int) Event {
	return Event{Worker: "agent-abc123", WorkerType: "agent", Action: ActionAcquire,
		Key: "src/api/users.py", Session: "s", Details: "bench " + strconv.Itoa(i)}
}

// BenchmarkAppend measures one synced append of one event.
func BenchmarkAppend(b *testing.B) {
	j := newJournal(b)
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if err := j.Append(benchEvent(i)); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, durs)
}

// BenchmarkAppendLargeFile shows that an append costs the same after 100
// and after 100,000 existing events (docs/formats.md: The journal).
func BenchmarkAppendLargeFile(b *testing.B) {
	for _, existing := range []int{100, 100_000} {
		b.Run(fmt.Sprintf("existing=%d", existing), func(b *testing.B) {
			j := newJournal(b)
			const batch = 10_000
			for done := 0; done < existing; done += batch {
				evs := make([]Event, min(batch, existing-done))
				for i := range evs {
					evs[i] = benchEvent(done + i)
				}
				if err := j.Append(evs...); err != nil {
					b.Fatal(err)
				}
			}
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := j.Append(benchEvent(i)); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, durs)
		})
	}
}

// BenchmarkMultiProcess: 8 processes × 10,000 appends at once; the journal
// must hold every line, whole, in each process's order.
func BenchmarkMultiProcess(b *testing.B) {
	const procs, each = 8, 10000
	for range b.N {
		j := newJournal(b)
		start := time.Now()
		runWorkers(b, j, procs, each)
		el := time.Since(start) - 500*time.Millisecond // the common start delay
		checkJournal(b, j, procs, each, "proc")
		b.ReportMetric(float64(procs*each)/el.Seconds(), "events/s")
		b.ReportMetric(0, "torn-or-lost")
	}
}

// BenchmarkReadRecent reads the last hour of a journal of 10,000 events a
// minute apart: the lines before it are dated, not decoded.
func BenchmarkReadRecent(b *testing.B) {
	j := newJournal(b)
	end := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	evs := make([]Event, 10_000)
	for i := range evs {
		evs[i] = benchEvent(i)
		evs[i].Timestamp = end.Add(-time.Duration(len(evs)-i) * time.Minute)
	}
	if err := j.Append(evs...); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		got, _, _, err := j.ReadRecent(end.Add(-time.Hour))
		if err != nil || len(got) != 60 {
			b.Fatalf("%d events, %v", len(got), err)
		}
	}
}
