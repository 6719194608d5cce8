package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// spellingPairs are two spellings of one file on a case-insensitive file
// system (macOS, Windows): letter case beyond A-Z, the decomposed (NFD)
// and composed (NFC) forms of an accented letter, the Kelvin sign.
var spellingPairs = [][2]string{
	{"Été%d.txt", "été%d.txt"},
	{"e\u0301te\u0301%d.txt", "été%d.txt"},
	{"\u212Aelvin%d.txt", "kelvin%d.txt"},
	{"docs/Straße%d.md", "docs/STRASSE%d.md"},
}

// TestRaceUnicodeSpellings: under core.ignorecase two workers at two sites
// race for two spellings of one file; exactly one is granted and the other
// is refused naming the holder. On the file store (worktrees of one
// clone), the git store and Redis (clones of one remote).
func TestRaceUnicodeSpellings(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"file", "git", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			r := newQueueRigWith(t, store, 2, "", "")
			for _, dir := range r.sites {
				r.git(dir, "config", "core.ignorecase", "true")
			}
			for round := range rounds(t, 3) {
				for i, pair := range spellingPairs {
					raceSpellings(t, r, round*len(spellingPairs)+i, pair)
				}
			}
		})
	}
}

// raceSpellings runs one round: worker a at site 0 locks the first
// spelling while worker b at site 1 locks the second.
func raceSpellings(t *testing.T, r *queueRig, n int, pair [2]string) {
	t.Helper()
	keys := [2]string{fmt.Sprintf(pair[0], n), fmt.Sprintf(pair[1], n)}
	workers := [2]who{{"a@test", "sa"}, {"b@test", "sb"}}
	var codes [2]int
	var errs [2]string
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i], codes[i] = r.run(i, workers[i], "lock", "acquire", keys[i], "--ttl", "1h")
		}()
	}
	close(start)
	wg.Wait()
	win, lose := 0, 1
	if codes[0] != 0 {
		win, lose = 1, 0
	}
	if codes[win] != 0 || codes[lose] != 4 {
		t.Fatalf("%q and %q: exit codes %v, want one grant and one refusal (4)\n%s\n%s", keys[0], keys[1], codes, errs[0], errs[1])
	}
	if want := keys[win] + " is held by " + workers[win].worker; !strings.Contains(errs[lose], want) {
		t.Fatalf("refusal of %q does not name the holder (%q):\n%s", keys[lose], want, errs[lose])
	}
	r.must(win, workers[win], "lock", "release", keys[lose])
}
