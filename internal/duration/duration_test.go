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

// TestValueZeroIsUnset: a duration flag left at zero prints as "0", which
// help takes for unset (no "(default 0s)" beside a usage that says what
// an unset flag means); any other value prints as time.Duration does.
func TestValueZeroIsUnset(t *testing.T) {
	var v Value
	if got := v.String(); got != "0" {
		t.Errorf("zero: %q, want 0", got)
	}
	if err := v.Set("90s"); err != nil || v.String() != "1m30s" {
		t.Errorf("90s: %q, %v", v.String(), err)
	}
	if err := v.Set(v.String()); err != nil || v.String() != "1m30s" {
		t.Errorf("its own string read back: %q, %v", v.String(), err)
	}
	var z Value
	if err := z.Set(z.String()); err != nil || z != 0 {
		t.Errorf("\"0\" read back: %v, %v", z, err)
	}
}

func TestUntil(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(25 * time.Minute), "in 25m"},
		{now.Add(-90 * time.Second), "1m ago"},
		{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), "never"},
	} {
		if got := Until(tt.at, now); got != tt.want {
			t.Errorf("Until(%v) = %q, want %q", tt.at, got, tt.want)
		}
	}
}
