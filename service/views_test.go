package service

import (
	"strings"
	"testing"
)

// TestWorkLoopUntitledPackage: a package without a title is named by its
// id alone, not followed by empty parentheses.
func TestWorkLoopUntitledPackage(t *testing.T) {
	_, _, open := queueRepo(t, "packages:\n  - id: WP-1\n    locks:\n      files: [src/a.go]\n  - id: WP-2\n    title: two\n    locks:\n      files: [src/b.go]\n")
	w, said := workLoop(open("alice"), WorkRequest{})
	runs(t, w, nil)
	all := strings.Join(*said, "\n")
	if !strings.Contains(all, "claimed WP-1 until ") || !strings.Contains(all, "claimed WP-2 (two) until ") || strings.Contains(all, "()") {
		t.Errorf("the loop said:\n%s\nwant WP-1 named without a title, WP-2 with its own", all)
	}
}
