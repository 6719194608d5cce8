package gittest

import (
	"os"
	"strconv"
	"testing"
)

// DefaultRoundsPercent is the share of their full round counts that the
// slow race tests run when LOCKGATE_TEST_ROUNDS is unset: enough to catch
// a double grant or a lost event on every run, small enough that `make
// test` stays within minutes on a busy two-core machine. `make stress`
// runs them at 100.
const DefaultRoundsPercent = 25

// Rounds is how many of full rounds a slow race test runs: full scaled by
// LOCKGATE_TEST_ROUNDS (a percentage, 1–10000; DefaultRoundsPercent when
// unset), at least 2; with -short, a twentieth. A malformed value fails the
// test rather than silently running another count.
func Rounds(t testing.TB, full int) int {
	t.Helper()
	pct := DefaultRoundsPercent
	if s := os.Getenv("LOCKGATE_TEST_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 10000 {
			t.Fatalf("LOCKGATE_TEST_ROUNDS=%q: want a percentage from 1 to 10000", s)
		}
		pct = n
	}
	if testing.Short() {
		pct = min(pct, 5)
	}
	return max(full*pct/100, 2)
}
