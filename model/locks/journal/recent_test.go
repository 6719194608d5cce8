package journal

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ReadRecent decodes only the lines of events at or after since (those
// Append wrote): the same number of lines at 10 and at 2,000 older
// events; lines it cannot date are decoded and checked as ReadSkipping
// checks them.
func TestReadRecent(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	since := now.Add(-time.Hour)
	decoded := map[int]int{}
	for _, n := range []int{10, 2000} {
		j := Open(filepath.Join(t.TempDir(), "events.jsonl"))
		old := make([]Event, n)
		for i := range old {
			old[i] = Event{Timestamp: now.Add(-48*time.Hour + time.Duration(i)*time.Second), Worker: "w", Action: ActionAcquire, Key: fmt.Sprintf("k%d", i)}
		}
		if err := j.Append(old...); err != nil {
			t.Fatal(err)
		}
		// An old line another tool wrote, whose fields come in another
		// order: decoded, and left out by its time.
		f, err := os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, `{"timestamp":"%s","id":"other","worker":"w","action":"lock_acquire"}`+"\n", now.Add(-47*time.Hour).Format(time.RFC3339))
		// A line that names the timestamp twice: decoded, and kept by
		// the time encoding/json reads, the last.
		fmt.Fprintf(f, `{"id":"twice","timestamp":"%s","worker":"w","action":"lock_acquire","Timestamp":"%s"}`+"\n",
			now.Add(-47*time.Hour).Format(time.RFC3339), now.Add(-time.Minute).Format(time.RFC3339))
		f.Close()
		if err := j.Append(Event{Timestamp: now.Add(-time.Minute), Worker: "w", Action: ActionRelease, Key: "k0"}); err != nil {
			t.Fatal(err)
		}
		evs, bad, d, err := j.ReadRecent(since)
		if err != nil || len(bad) != 0 {
			t.Fatalf("%d: %v, %v", n, bad, err)
		}
		if len(evs) != 2 || evs[0].ID != "twice" || evs[1].Action != ActionRelease {
			t.Fatalf("%d: events %+v", n, evs)
		}
		all, _, err := j.ReadSkipping(since)
		if err != nil || len(all) != len(evs) {
			t.Fatalf("%d: ReadSkipping %d events, %v", n, len(all), err)
		}
		decoded[n] = d
	}
	if decoded[10] != 3 || decoded[2000] != 3 {
		t.Fatalf("lines decoded: %v, want 3 each", decoded)
	}
}
