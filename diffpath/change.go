package diffpath

import "strings"

// Change is one changed path as git reports it.
type Change struct {
	// Status is git's status letter: 'A' added, 'M' modified, 'D' deleted,
	// 'R' renamed, 'C' copied, 'T' type changed (file, symlink, submodule),
	// 'U' unmerged, 'X' unknown. For a merge's combined diff, which has one
	// letter per parent, see combine.
	Status byte
	// Score is the similarity percentage of a rename or copy ("R087" → 87),
	// else 0.
	Score int
	// Path is the path after the change (for a deletion, the deleted path).
	Path string
	// OldPath is the source of a rename or copy, else "".
	OldPath string
}

// Touched returns the paths the change touches: Path, and OldPath for
// renames and copies. Both sides count: a rename removes the old path, and a
// copy's source is read by the change, so a lock on either must be honoured.
func (c Change) Touched() []string {
	if c.OldPath != "" && c.OldPath != c.Path {
		return []string{c.Path, c.OldPath}
	}
	return []string{c.Path}
}

// statusLetters are the letters git's diff machinery can print
// (diff.h DIFF_STATUS_*); 'B' (broken pair) never reaches the output.
const statusLetters = "ACDMRTUX"

func isStatusLetter(c byte) bool { return strings.IndexByte(statusLetters, c) >= 0 }

// status is a parsed status field.
type status struct {
	letters string // one letter per parent; two or more for a combined diff
	score   int    // digits after a single letter ("R087"), else 0
}

func (s status) combined() bool { return len(s.letters) > 1 }

// paths reports how many path fields follow the status in -z output:
// two for a rename or copy, one otherwise; a combined entry has one, or one
// per parent plus the result with --combined-all-paths.
func (s status) paths(allPaths bool) int {
	switch {
	case s.combined() && allPaths:
		return len(s.letters) + 1
	case s.combined():
		return 1
	case s.letters[0] == 'R' || s.letters[0] == 'C':
		return 2
	}
	return 1
}

// parseStatus parses a name-status or raw status field: a letter with an
// optional score of up to three digits ("M", "R087", "C100", "M050" for a
// broken pair with -B), or one letter per parent for a combined diff ("MM",
// "AA", "RM"), which never carries a score.
func parseStatus[T ~string | ~[]byte](f T) (status, bool) {
	n := 0
	for n < len(f) && isStatusLetter(f[n]) {
		n++
	}
	if n == 0 {
		return status{}, false
	}
	digits := f[n:]
	if n > 1 && len(digits) > 0 || len(digits) > 3 {
		return status{}, false
	}
	score := 0
	for i := 0; i < len(digits); i++ {
		d := digits[i]
		if d < '0' || d > '9' {
			return status{}, false
		}
		score = score*10 + int(d-'0')
	}
	if score > 100 {
		return status{}, false
	}
	return status{letters: internLetters(f[:n]), score: score}, true
}

// internLetters avoids allocating for the single-letter statuses that make
// up nearly all of git's output.
func internLetters[T ~string | ~[]byte](b T) string {
	if len(b) == 1 {
		i := strings.IndexByte(statusLetters, b[0])
		return statusLetters[i : i+1]
	}
	return string(b)
}

// change builds the Change for a parsed status and its (already normalized)
// path fields, as returned by status.paths.
func (s status) change(paths []string) Change {
	if !s.combined() {
		c := Change{Status: s.letters[0], Path: paths[len(paths)-1]}
		if len(paths) == 2 {
			c.OldPath, c.Score = paths[0], s.score
		}
		return c
	}
	return combine(s.letters, paths)
}

// combine maps a combined-diff entry (git diff-tree --cc/-c, git diff during
// a conflicted merge) to one Change. The status is the parents' common letter
// when they agree and 'M' otherwise: the path exists in the merge result and
// differs from at least one parent. With --combined-all-paths the parents'
// paths precede the result's; the first one that differs from the result
// becomes OldPath and the status becomes 'R' (or 'C') when a parent says so.
// Without --combined-all-paths git prints only the result's path, so a
// rename in a merge ("RM") has an empty OldPath.
func combine(letters string, paths []string) Change {
	st := letters[0]
	for i := 1; i < len(letters); i++ {
		if letters[i] != st {
			st = 'M'
			break
		}
	}
	c := Change{Status: st, Path: paths[len(paths)-1]}
	for _, p := range paths[:len(paths)-1] {
		if p != c.Path {
			c.OldPath = p
			break
		}
	}
	if c.OldPath != "" && st != 'R' && st != 'C' {
		switch {
		case strings.IndexByte(letters, 'R') >= 0:
			c.Status = 'R'
		case strings.IndexByte(letters, 'C') >= 0:
			c.Status = 'C'
		}
	}
	return c
}
