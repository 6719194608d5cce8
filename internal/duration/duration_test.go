package duration

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0":       0,
		"90s":     90 * time.Second,
		"1h30m":   90 * time.Minute,
		"2d":      48 * time.Hour,
		"1w":      7 * 24 * time.Hour,
		"4d3h":    99 * time.Hour,
		"1w2d3h":  (9*24 + 3) * time.Hour,
		"1.5d":    36 * time.Hour,
		"-2d":     -48 * time.Hour,
		"+1d":     24 * time.Hour,
		"2d30m5s": 48*time.Hour + 30*time.Minute + 5*time.Second,
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "2", "2dd", "2x", "d2", "-", "1.2.3d", "99999999999w", "16000w", "2d 3h", "2D"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, got)
		}
	}
}

// FuzzParse: no input panics, and whatever parses, Go's own spelling of it
// parses back to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"4d3h", "1w", "1.5d", "-2d", "90m", "0", "2dd", "16000w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(d.String())
		if err != nil || back != d {
			t.Fatalf("Parse(%q) = %v, which reads back as %v, %v", s, d, back, err)
		}
		// What hints print reads back, to the precision they print.
		if back, err := Parse(Format(d)); err != nil || back.Abs() > d.Abs() || d.Abs()-back.Abs() >= time.Hour {
			t.Fatalf("Format(%v) = %q, which reads back as %v, %v", d, Format(d), back, err)
		}
	})
}
