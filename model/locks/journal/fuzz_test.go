package journal

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzScan feeds arbitrary journal contents to ScanReader: it must never
// panic, must report damage as a *CorruptLineError with a line inside the
// input, and every event it returns must survive a write/read round trip.
func FuzzScan(f *testing.F) {
	f.Add([]byte(goodLine + "\n"))
	f.Add([]byte(goodLine + "\n" + goodLine[:30]))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte("\n")) + 1
		var got []Event
		err := ScanReader(bytes.NewReader(data), func(line int, ev Event) error {
			if line < 1 || line > lines {
				t.Fatalf("line %d outside 1..%d", line, lines)
			}
			got = append(got, ev)
			return nil
		})
		if err != nil {
			var ce *CorruptLineError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, not *CorruptLineError", err, err)
			}
			if ce.Line < 1 || ce.Line > lines {
				t.Fatalf("corrupt line %d outside 1..%d", ce.Line, lines)
			}
		}
		// Skipping finds the same events up to the first bad line, and
		// only lines inside the input.
		var all []Event
		var bad int
		serr := ScanReaderSkipping(bytes.NewReader(data), func(line int, ev Event) error {
			all = append(all, ev)
			return nil
		}, func(ce *CorruptLineError) {
			if ce.Line < 1 || ce.Line > lines {
				t.Fatalf("skipped line %d outside 1..%d", ce.Line, lines)
			}
			bad++
		})
		if serr != nil || len(all) < len(got) || (err == nil) != (bad == 0) {
			t.Fatalf("skipping: %v, %d events (strict %d), %d skipped (strict error %v)", serr, len(all), len(got), bad, err)
		}
		for _, ev := range got {
			buf, err := encode([]Event{ev})
			if err != nil {
				continue // Append refuses it (no worker, say): nothing to compare
			}
			back, err := ParseLine(buf)
			if err != nil {
				t.Fatalf("re-reading %q: %v", buf, err)
			}
			if !back.Timestamp.Equal(ev.Timestamp) {
				t.Fatalf("timestamp %v became %v", ev.Timestamp, back.Timestamp)
			}
			back.Timestamp = ev.Timestamp
			if ev.ID == "" {
				back.ID = "" // encode assigns ids to events without one
			}
			if !reflect.DeepEqual(back, ev) {
				t.Fatalf("round trip changed %+v into %+v", ev, back)
			}
		}
	})
}

// FuzzQuickTime: whatever the line, a timestamp quickTime reads is the
// one ParseLine decodes, when it decodes the line at all.
func FuzzQuickTime(f *testing.F) {
	f.Add([]byte(goodLine))
	f.Add([]byte(`{"id":"a","timestamp":"2026-01-02T03:04:05Z","action":"x","Timestamp":"2030-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"id":"a","timestamp":"2026-01-02T03:04:05Z","action":"x","times\u0074amp":"2030-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"id":"a","timestamp":"2026-01-02T03:04:05.123456789+02:00","action":"x"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		at, ok := quickTime(line)
		if !ok {
			return
		}
		ev, err := ParseLine(line)
		if err == nil && !ev.Timestamp.Equal(at) {
			t.Fatalf("%q: quickTime %v, ParseLine %v", line, at, ev.Timestamp)
		}
	})
}
