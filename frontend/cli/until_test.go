package cli

import (
	"testing"
	"time"
)

func TestUntilValue(t *testing.T) {
	t.Parallel()
	var ago time.Duration
	var at time.Time
	u := &untilValue{ago: &ago, at: &at}
	if err := u.Set("2h"); err != nil || ago != 2*time.Hour || !at.IsZero() || u.String() != "2h" {
		t.Fatalf("2h: %v, %v, %v, %q", err, ago, at, u.String())
	}
	if err := u.Set("2026-01-02T15:04:05+01:00"); err != nil || ago != 0 || !at.Equal(time.Date(2026, 1, 2, 14, 4, 5, 0, time.UTC)) || u.String() != "2026-01-02T14:04:05Z" {
		t.Fatalf("time: %v, %v, %v, %q", err, ago, at, u.String())
	}
	for _, bad := range []string{"", "-1h", "yesterday", "2026-01-02", "1h 2026-01-02T15:04:05Z"} {
		if err := u.Set(bad); err == nil {
			t.Fatalf("--until %q was taken", bad)
		}
	}
}

// FuzzUntilValue: --until takes any string from the command line: it is
// a non-negative duration or a time, or an error, never a panic.
func FuzzUntilValue(f *testing.F) {
	for _, s := range []string{"2h", "1d", "90s", "2026-01-02T15:04:05Z", "2026-01-02T15:04:05.5+01:00", "", "-1h", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var ago time.Duration
		var at time.Time
		u := &untilValue{ago: &ago, at: &at}
		if err := u.Set(s); err != nil {
			return
		}
		if ago < 0 || ago != 0 && !at.IsZero() {
			t.Fatalf("%q: ago %v, at %v", s, ago, at)
		}
		_ = u.String()
	})
}
