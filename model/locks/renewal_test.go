package locks

import (
	"context"
	"testing"
	"time"
)

// TestRenewalTiming: a renewal the store did not confirm is retried after
// a backoff that doubles from 250 ms to at most 2 s, never past the
// deadline; a hold gives up a tenth of the TTL before expiry, between
// half a second and five seconds; an attempt is bounded by the deadline
// only while it lies ahead.
func TestRenewalTiming(t *testing.T) {
	b := time.Duration(0)
	var got []time.Duration
	for range 5 {
		b = NextBackoff(b)
		got = append(got, b)
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("backoffs %v, want %v", got, want)
		}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		every, backoff time.Duration
		deadline       time.Time
		want           time.Duration
	}{
		{10 * time.Second, 0, now.Add(time.Second), 10 * time.Second},
		{10 * time.Second, time.Second, now.Add(time.Minute), time.Second},
		{10 * time.Second, 2 * time.Second, now.Add(300 * time.Millisecond), 300 * time.Millisecond},
		{10 * time.Second, 2 * time.Second, now.Add(-time.Second), 0},
	} {
		if w := RetryWait(c.every, c.backoff, c.deadline, now); w != c.want {
			t.Errorf("RetryWait(%v, %v, deadline in %v) = %v, want %v", c.every, c.backoff, c.deadline.Sub(now), w, c.want)
		}
	}
	for ttl, want := range map[time.Duration]time.Duration{time.Second: 500 * time.Millisecond, time.Minute: 5 * time.Second, 20 * time.Second: 2 * time.Second} {
		if m := HoldMargin(ttl); m != want {
			t.Errorf("HoldMargin(%v) = %v, want %v", ttl, m, want)
		}
	}
	ctx, cancel := UntilDeadline(context.Background(), now.Add(time.Hour), now)
	if d, ok := ctx.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Errorf("an attempt with an hour left has deadline %v, %v", d, ok)
	}
	cancel()
	ctx, cancel = UntilDeadline(context.Background(), now.Add(-time.Second), now)
	if _, ok := ctx.Deadline(); ok {
		t.Error("an attempt past the deadline was bounded anew")
	}
	cancel()
}
