package board

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func lock(key, who string, created, expires time.Duration) locks.Entry {
	return locks.Entry{Lock: locks.Lock{Key: key, Holder: who, HolderType: "agent", CreatedAt: t0.Add(created), ExpiresAt: t0.Add(expires), Reason: "why " + who}}
}

func TestFrame(t *testing.T) {
	s := Snapshot{Store: "the file store", Now: t0, StaleAfter: time.Hour, Locks: []locks.Entry{
		lock("src/b.go", "bob", -30*time.Minute, 30*time.Minute),
		lock("src/a.go", "alice", -3*time.Hour, 10*time.Minute), // stale
		lock("gone.go", "carol", -2*time.Hour, -time.Minute),    // expired: not shown
		lock("feature:F1:pause", "dan", -time.Minute, time.Hour),
		{Name: "bad.lock", Err: fmt.Errorf("not JSON")},
	}, Events: []service.EventView{{Timestamp: t0, Worker: "bob", Action: "lock_acquire", Key: "src/b.go"}}}
	out := Frame(s, View{Sort: "expiry", Selected: 0})
	for _, want := range []string{
		"4 live lock(s) in the file store",
		"PAUSED F1 by dan (agent) until 2026-11-26T13:00:00Z (in 1h): why dan",
		"> ?", "CORRUPT: not JSON", // corrupt records first: never free
		"  alice", "STALE", "in 10m",
		"  bob                  agent  src/b.go", "█████░░░░░",
		"12:00:00 bob", "lock_acquire",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("frame lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "gone.go") {
		t.Errorf("an expired lock is shown:\n%s", out)
	}
	// The holder sort, and a filter on one worker.
	if out := Frame(s, View{Sort: "holder", Worker: "bob", Selected: -1}); !strings.Contains(out, "worker bob") || strings.Contains(out, "alice ") {
		t.Errorf("filtered frame:\n%s", out)
	}
	// Text from the records cannot steer the terminal.
	s.Locks = []locks.Entry{lock("x\x1b[31m", "evil\x1b]0;t\a", 0, time.Hour)}
	if out := Frame(s, View{}); strings.ContainsAny(out, "\x1b\a") {
		t.Errorf("raw control characters in the frame: %q", out)
	}
}

// BenchmarkFrame10k: a frame of a board with 10,000 live locks (sorted,
// 30 rows shown) — held to 100 ms.
func BenchmarkFrame10k(b *testing.B) {
	var s Snapshot
	s.Store, s.Now, s.StaleAfter = "the file store", t0, time.Hour
	for i := range 10000 {
		s.Locks = append(s.Locks, lock(fmt.Sprintf("src/pkg%03d/f%05d.go", i%100, i), fmt.Sprintf("agent-%d", i%10), -time.Minute, time.Duration(i)*time.Second+time.Minute))
	}
	b.ResetTimer()
	for range b.N {
		if out := Frame(s, View{Sort: "holder", Height: 30}); !strings.Contains(out, "10000 live lock(s)") {
			b.Fatal("wrong frame")
		}
	}
}

func TestKeys(t *testing.T) {
	r, w := io.Pipe()
	out := make(chan string, 16)
	go keys(r, out)
	go func() {
		_, _ = w.Write([]byte("s\x1b[A\x1b[Bq\x03\x1b[5~c"))
		w.Close()
	}()
	var got []string
	for k := range out {
		got = append(got, k)
	}
	if want := []string{"s", "up", "down", "q", "ctrl+c", "c"}; !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
}

// The keys change the view; c asks, and only y clears.
func TestModelKeys(t *testing.T) {
	m := &model{view: View{Sort: Sorts[0]}}
	m.setSnap(Snapshot{Now: t0, Locks: []locks.Entry{
		lock("a.go", "alice", 0, time.Hour), lock("b.go", "bob", 0, 2*time.Hour),
	}}, nil)
	if a, _ := m.key("s"); a != "" || m.view.Sort != "holder" {
		t.Fatalf("s: %q, sort %s", a, m.view.Sort)
	}
	m.key("down")
	if m.view.Selected != 1 {
		t.Fatalf("down: selected %d", m.view.Selected)
	}
	m.key("c")
	if a, _ := m.key("n"); a != "" || m.status != "not cleared" {
		t.Fatalf("c n: %q, %q", a, m.status)
	}
	m.key("c")
	if a, k := m.key("y"); a != "clear" || k != "b.go" {
		t.Fatalf("c y: %q %q, want clear b.go", a, k)
	}
	m.key("w")
	if m.view.Worker != "alice" || m.view.Selected != 0 {
		t.Fatalf("w: worker %q", m.view.Worker)
	}
	if a, _ := m.key("q"); a != "quit" {
		t.Fatalf("q: %q", a)
	}
}

// TestFrameFitsWidth: on a screen narrower than the full rows the lock
// rows shrink to fit, the reason first and then the key, so that no row
// wraps; without a width they keep their full columns.
func TestFrameFitsWidth(t *testing.T) {
	long := lock("src/a/very/long/path/to/some/deeply/nested/file.go", "alice", -3*time.Hour, time.Hour) // stale
	long.Reason = "a reason long enough to need the whole reason column and more"
	s := Snapshot{Store: "the file store", Now: t0, StaleAfter: time.Hour, Locks: []locks.Entry{
		long, lock("src/b.go", "bob", 0, time.Hour), {Name: "bad.lock", Err: fmt.Errorf("not JSON: %s", strings.Repeat("x", 80))},
	}}
	rowsOf := func(out string) []string {
		var rows []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "alice") || strings.Contains(l, "bob") || strings.Contains(l, "CORRUPT") || strings.Contains(l, "HOLDER") {
				rows = append(rows, l)
			}
		}
		return rows
	}
	for _, width := range []int{110, 100, 80} {
		rows := rowsOf(Frame(s, View{Sort: "key", Selected: -1, Width: width}))
		if len(rows) != 4 {
			t.Fatalf("width %d: rows %q", width, rows)
		}
		for _, r := range rows {
			if n := len([]rune(r)); n > width {
				t.Errorf("width %d: a row of %d columns: %q", width, n, r)
			}
		}
	}
	// The reason gives way before the key.
	out := Frame(s, View{Sort: "key", Selected: -1, Width: 110})
	if !strings.Contains(out, "src/a/very/long/path/to/some/deep… a reason long en… in 1h") {
		t.Errorf("at 110 columns the key should keep its column and the reason shrink:\n%s", out)
	}
	if out := Frame(s, View{Sort: "key", Selected: -1, Width: 80}); !strings.Contains(out, "src/a/very/l… a reaso… in 1h") {
		t.Errorf("at 80 columns the key should shrink too:\n%s", out)
	}
	// Without a width the rows are as they always were.
	if full := rowsOf(Frame(s, View{Sort: "key", Selected: -1})); len([]rune(full[2])) != 117 {
		t.Errorf("full row of %d columns, want 117: %q", len([]rune(full[2])), full[2])
	}
}
