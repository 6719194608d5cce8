package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

func writeJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return bw.Flush()
}

// table prints aligned rows; the first row is the header. Output is
// buffered: tabwriter alone makes a system call per cell.
func table(w io.Writer, rows [][]string) {
	bw := bufio.NewWriterSize(w, 64<<10)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
	_ = bw.Flush()
}

// human renders a duration the way people read ages: 45s, 12m, 3h5m, 2d4h.
func human(d time.Duration) string {
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

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// until says when t is relative to now: "in 25m" or "25m ago".
func until(t, now time.Time) string {
	if t.Before(now) {
		return human(now.Sub(t)) + " ago"
	}
	return "in " + human(t.Sub(now))
}
