package service

import (
	"slices"
	"strings"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// logActions are the actions the journal package defines (docs/formats.md,
// the journal). `log --action` takes only these, so that a mistyped one
// is refused rather than matching nothing.
var logActions = journal.Actions()

// checkLogAction refuses an action filter no event can have (exit 2),
// naming the nearest action; the whole list is in docs/formats.md (the
// list does not fit in one message).
func checkLogAction(action string) error {
	if action == "" || slices.Contains(logActions, action) {
		return nil
	}
	best, dist := "", -1
	for _, a := range logActions {
		if d := editDistance(strings.ToLower(action), a); dist < 0 || d < dist {
			best, dist = a, d
		}
	}
	// A name far from every action is no typo of one: suggesting the
	// nearest would only mislead.
	if dist > max(2, len(action)/3) {
		return Usagef("log: --action %q is not an action lockgate writes (every action: docs/formats.md, the journal)", action)
	}
	return Usagef("log: --action %q is not an action lockgate writes; did you mean %s? (every action: docs/formats.md, the journal)", action, best)
}

// editDistance is the Levenshtein distance of a and b, in bytes: the
// actions are ASCII.
func editDistance(a, b string) int {
	// d[j] is the distance of a's first i bytes to b's first j.
	d := make([]int, len(b)+1)
	for j := range d {
		d[j] = j
	}
	for i := range len(a) {
		diag := d[0] // d[j-1] of the row before
		d[0] = i + 1
		for j := range len(b) {
			cost := 1
			if a[i] == b[j] {
				cost = 0
			}
			next := min(d[j+1]+1, d[j]+1, diag+cost)
			diag, d[j+1] = d[j+1], next
		}
	}
	return d[len(b)]
}
