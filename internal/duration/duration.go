package duration

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Parse reads s as a Go duration whose terms may also be in days (d) and
// weeks (w): "2d", "1w2d", "4d3h", "1.5d", "-2h". Like Go, a bare "0" is
// zero and any other number needs a unit.
func Parse(s string) (time.Duration, error) {
	if !strings.ContainsAny(s, "dw") {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, invalid(s)
		}
		return d, nil
	}
	rest, neg := s, false
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		neg, rest = rest[0] == '-', rest[1:]
	}
	if rest == "" {
		return 0, invalid(s)
	}
	var total time.Duration
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		j := i
		for j < len(rest) && (rest[j] < '0' || rest[j] > '9') && rest[j] != '.' {
			j++
		}
		num, unit := rest[:i], rest[i:j]
		rest = rest[j:]
		if num == "" || unit == "" {
			return 0, invalid(s)
		}
		scale := time.Duration(1)
		switch unit {
		case "d":
			unit, scale = "h", 24
		case "w":
			unit, scale = "h", 24*7
		}
		term, err := time.ParseDuration(num + unit)
		if err != nil || term > math.MaxInt64/scale {
			return 0, invalid(s)
		}
		term *= scale
		if total > math.MaxInt64-term {
			return 0, invalid(s)
		}
		total += term
	}
	if neg {
		total = -total
	}
	return total, nil
}

func invalid(s string) error {
	return fmt.Errorf("invalid duration %q: use a duration such as 90m, 1h30m, 2d or 1w", s)
}

// Format renders a duration the way people read ages: 45s, 12m, 3h5m,
// 2d4h (seconds dropped past a minute, minutes past two days). Parse reads
// each of them back.
func Format(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var s string
	switch {
	case d < time.Minute:
		s = fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		s = fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		h := int(d.Hours())
		m := int(d.Minutes()) - 60*h
		s = fmt.Sprintf("%dh", h)
		if m > 0 {
			s += fmt.Sprintf("%dm", m)
		}
	default:
		days := int(d.Hours()) / 24
		s = fmt.Sprintf("%dd%dh", days, int(d.Hours())-24*days)
	}
	if neg {
		return "-" + s
	}
	return s
}

// Value is a duration flag (it implements pflag.Value) read by Parse.
type Value time.Duration

// Set parses s into v.
func (v *Value) Set(s string) error {
	d, err := Parse(s)
	if err != nil {
		return err
	}
	*v = Value(d)
	return nil
}

// String formats v like time.Duration; zero, the flag's usual default, is
// "0", which help leaves out (help says what an unset flag means).
func (v *Value) String() string {
	if *v == 0 {
		return "0"
	}
	return time.Duration(*v).String()
}

// Type names the flag's value in help.
func (v *Value) Type() string { return "duration" }

// Until says when t is relative to now, as people read it: "in 25m" or
// "25m ago"; "never" for an expiry in the year 9999, which records kept
// until removed carry (a finished work package's, the queue epoch).
func Until(t, now time.Time) string {
	if t.Year() >= 9999 {
		return "never"
	}
	if t.Before(now) {
		return Format(now.Sub(t)) + " ago"
	}
	return "in " + Format(t.Sub(now))
}
