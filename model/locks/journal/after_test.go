package journal

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// appendRaw appends lines to the journal as they are, as a hand edit or
// a crash leaves them.
func appendRaw(t *testing.T, j *Journal, lines string) {
	t.Helper()
	f, err := os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(lines); err != nil {
		t.Fatal(err)
	}
}

// hourly is n events an hour apart, the last at end.
func hourly(worker string, n int, end time.Time) []Event {
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{Timestamp: end.Add(-time.Duration(n-1-i) * time.Hour), Worker: worker, Action: ActionAcquire, Key: fmt.Sprintf("%s%d", worker, i)}
	}
	return evs
}

// ReadFrom's end stops before the first line whose event the workflow
// branch, which holds it as Append writes it, gives back otherwise: one
// without an id, one dated in another time zone. A line in another form
// that reads back the same (fields in another order, a field of a newer
// version, a byte that is not UTF-8) does not stop it. The lines after
// are read all the same.
func TestReadFromStopsBeforeALineNotAsWritten(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		line string
		stop bool
	}{
		{`{"timestamp":"2026-03-01T10:00:00Z","worker":"w","worker_type":"","action":"lock_acquire"}`, true},
		{`{"id":"z","timestamp":"2026-03-01T11:00:00+01:00","worker":"w","worker_type":"","action":"lock_acquire"}`, true},
		{`{"id":"e","timestamp":"2026-03-01T10:00:00Z","worker":"w","worker_type":"","action":"lock_acquire","expires_at":"2026-03-01T12:00:00+01:00"}`, true},
		{`{"timestamp":"2026-03-01T10:00:00Z","id":"o","worker":"w","worker_type":"","action":"lock_acquire"}`, false},
		{`{"id":"x","timestamp":"2026-03-01T10:00:00Z","worker":"w","worker_type":"","action":"lock_acquire","newer":1}`, false},
		{"{\"id\":\"u\",\"timestamp\":\"2026-03-01T10:00:00Z\",\"worker\":\"w\",\"worker_type\":\"\",\"action\":\"lock_acquire\",\"details\":\"\xff\"}", false},
		{`{"id":"x","timestamp":"2026-03-01T10:00:00Z","worker":"w","worker_type":"","action":"lock_acquire"}`, false},
	} {
		j := Open(filepath.Join(t.TempDir(), "events.jsonl"))
		if err := j.Append(hourly("a", 3, now.Add(-time.Hour))...); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(j.Path())
		if err != nil {
			t.Fatal(err)
		}
		appendRaw(t, j, tc.line+"\n")
		if err := j.Append(hourly("b", 2, now)...); err != nil {
			t.Fatal(err)
		}
		all, err := os.Stat(j.Path())
		if err != nil {
			t.Fatal(err)
		}
		evs, end, _, err := j.ReadFrom(0, "")
		if err != nil || len(evs) != 6 {
			t.Fatalf("%s: %d events, %v", tc.line, len(evs), err)
		}
		want := all.Size()
		if tc.stop {
			want = fi.Size()
		}
		if end != want {
			t.Fatalf("%s: end %d, want %d (the line stops it: %v)", tc.line, end, want, tc.stop)
		}
	}
}

// ReadRecentAfter returns what ReadRecent returns of the lines after the
// mark: the events at or after since, the lines that are not events
// numbered in the file, those dated before since passed over, and a torn
// last line.
func TestReadRecentAfterIsReadRecentOfItsLines(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	j := Open(filepath.Join(t.TempDir(), "events.jsonl"))
	before := hourly("a", 30, now.Add(-10*time.Hour))
	if err := j.Append(before...); err != nil {
		t.Fatal(err)
	}
	_, off, head, err := j.ReadFrom(0, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(hourly("b", 20, now.Add(-time.Hour))...); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, j, "not json\n"+
		`{"id":"old","timestamp":"2026-02-01T00:00:00Z","action":`+"\n"+
		`{"id":"new","timestamp":"2026-03-01T11:59:00Z","action":`+"\n")
	if err := j.Append(hourly("c", 3, now)...); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, j, `{"id":"torn","timestamp":"2026-03`)
	for _, since := range []time.Time{{}, now.Add(-48 * time.Hour), now.Add(-5 * time.Hour), now.Add(time.Hour)} {
		want, wantBad, _, err := j.ReadRecent(since)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range before {
			if !ev.Timestamp.Before(since) {
				want = want[1:] // the lines before the mark are its first
			}
		}
		got, bad, _, ok, err := j.ReadRecentAfter(off, head, since)
		if err != nil || !ok {
			t.Fatalf("since %v: %v, %v", since, ok, err)
		}
		if len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("since %v: %d events, want %d", since, len(got), len(want))
		}
		if fmt.Sprint(bad) != fmt.Sprint(wantBad) || len(bad) != len(wantBad) {
			t.Fatalf("since %v: lines not events %v, want %v", since, bad, wantBad)
		}
		for i := range bad {
			if bad[i].Path != wantBad[i].Path || bad[i].Line != wantBad[i].Line || bad[i].Torn != wantBad[i].Torn {
				t.Fatalf("since %v: line %+v, want %+v", since, bad[i], wantBad[i])
			}
		}
	}
	// A mark of another segment, or inside a line: nothing read.
	if _, _, _, ok, err := j.ReadRecentAfter(off, "0123456789abcdef", time.Time{}); ok || err != nil {
		t.Fatalf("another segment: %v, %v", ok, err)
	}
	if _, _, _, ok, err := j.ReadRecentAfter(off-1, head, time.Time{}); ok || err != nil {
		t.Fatalf("inside a line: %v, %v", ok, err)
	}
}

// LastBefore returns the events of the last lines before the mark, as
// many as asked for, or those the segment holds; after a line that is not
// an event, only those after it; nothing for a mark of another segment.
func TestLastBefore(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	j := Open(filepath.Join(t.TempDir(), "events.jsonl"))
	evs := hourly("a", 300, now) // more than the first read back
	if err := j.Append(evs...); err != nil {
		t.Fatal(err)
	}
	_, off, head, err := j.ReadFrom(0, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(hourly("b", 5, now.Add(time.Hour))...); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 10, 120, 300, 400} {
		got, err := j.LastBefore(off, head, n)
		if err != nil {
			t.Fatal(err)
		}
		want := evs[max(0, len(evs)-n):]
		if len(got) != len(want) {
			t.Fatalf("%d: %d events, want %d", n, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || !got[i].Timestamp.Equal(want[i].Timestamp) {
				t.Fatalf("%d: event %d is %+v, want %+v", n, i, got[i], want[i])
			}
		}
	}
	if got, err := j.LastBefore(off, "0123456789abcdef", 10); got != nil || err != nil {
		t.Fatalf("another segment: %v, %v", got, err)
	}
	appendRaw(t, j, "not json\n")
	if err := j.Append(hourly("c", 2, now.Add(2*time.Hour))...); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	got, err := j.LastBefore(fi.Size(), head, 10)
	if err != nil || len(got) != 2 || got[0].Worker != "c" {
		t.Fatalf("after a line that is not an event: %+v, %v", got, err)
	}
}

// FuzzLastBefore: whatever the journal holds and wherever the mark, LastBefore
// never fails on it nor panics, and returns the events of the last lines
// before the mark, after the last of them that is not an event.
func FuzzLastBefore(f *testing.F) {
	f.Add([]byte(goodLine+"\n"+goodLine+"\n"), 200, 2)
	f.Add([]byte(goodLine+"\nnot json\n"+goodLine+"\n\n"), 1000, 3)
	f.Add([]byte("\n\n{}\n"+goodLine+"\r\n"), 30, 1)
	f.Fuzz(func(t *testing.T, data []byte, at, n int) {
		if n < 0 || n > 50 || at < 0 {
			return
		}
		j := Open(filepath.Join(t.TempDir(), "events.jsonl"))
		if err := os.WriteFile(j.Path(), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, head, err := j.ReadFrom(0, "")
		if err != nil {
			t.Fatal(err)
		}
		// The mark at the start of a line, as ReadFrom gives it.
		off := bytes.LastIndexByte(data[:min(at, len(data))], '\n') + 1
		got, err := j.LastBefore(int64(off), head, n)
		if err != nil {
			t.Fatal(err)
		}
		var want []Event
		if off > 0 && n > 0 && head != "" {
			lines := bytes.Split(data[:off-1], []byte("\n"))
			for _, line := range lines[max(0, len(lines)-n):] {
				if len(bytes.TrimSpace(line)) == 0 {
					continue
				}
				ev, err := ParseLine(line)
				if err != nil {
					want = nil
					continue
				}
				want = append(want, ev)
			}
		}
		if len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("mark %d, %d lines: %d events, want %d", off, n, len(got), len(want))
		}
	})
}
