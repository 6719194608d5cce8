package lockkey

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// A pattern may spell a name the literal rules refuse: `[.]git/x` and
// `.gi?/x` match `.git/x`, `[.][.]/x` matches `../x`. segmentReach decides
// what one segment of a pattern can match by running the segment over a
// small automaton of the refused names, the way doublestar would match the
// segment against them, so that such a pattern is refused as its literal
// is.

// The states of the automaton of refused names. gitDir and gitStream
// accept every name IsGitDir reports; dotDot accepts "..".
const (
	nameStart = iota
	nameDot   // "." (also the start of ".git")
	dotDot    // ".."
	dotG      // ".g"
	dotGi     // ".gi"
	bareG     // "g" (GIT~1)
	bareGi    // "gi"
	bareGit   // "git"
	bareTilde // "git~"
	gitDir    // ".git" or "git~1", then trailing dots and spaces
	gitStream // the same with a ":stream" suffix: any character may follow
	nameStates
)

// nameAlphabet holds every character the automaton moves on before a
// stream suffix; once in gitStream, every character keeps it there.
const nameAlphabet = ".gGiItT~1 :"

// nameNext is the state after reading c in state s, or -1 when no refused
// name begins so.
func nameNext(s int, c byte) int {
	lower := c | 0x20 // ASCII letters only: the others never match below
	switch s {
	case nameStart:
		switch {
		case c == '.':
			return nameDot
		case lower == 'g':
			return bareG
		}
	case nameDot:
		switch {
		case c == '.':
			return dotDot
		case lower == 'g':
			return dotG
		}
	case dotG:
		if lower == 'i' {
			return dotGi
		}
	case dotGi:
		if lower == 't' {
			return gitDir
		}
	case bareG:
		if lower == 'i' {
			return bareGi
		}
	case bareGi:
		if lower == 't' {
			return bareGit
		}
	case bareGit:
		if c == '~' {
			return bareTilde
		}
	case bareTilde:
		if c == '1' {
			return gitDir
		}
	case gitDir:
		switch c {
		case '.', ' ':
			return gitDir
		case ':':
			return gitStream
		}
	}
	return -1
}

// segmentReach reports whether the pattern segment seg (no slash, no
// braces, a valid doublestar pattern) can match a name that IsGitDir
// reports, and whether it can match "..".
func segmentReach(seg string) (gitName, parent bool) {
	var states [nameStates]bool
	states[nameStart] = true
	for i := 0; i < len(seg); i++ {
		var allows func(c byte) bool
		switch seg[i] {
		case '*':
			states = starClosure(states)
			continue
		case '?':
			allows = wildcard
		case '[':
			end := classEnd(seg, i)
			if end < 0 {
				// ValidatePattern refused it before; fail closed anyway.
				return true, true
			}
			class := seg[i : end+1]
			allows = func(c byte) bool {
				ok, err := doublestar.Match(class, string(rune(c)))
				return ok || err != nil
			}
			i = end
		default:
			lit := seg[i]
			allows = func(c byte) bool { return c == lit }
		}
		states = step(states, allows)
	}
	return states[gitDir] || states[gitStream], states[dotDot]
}

// step is the set of states after one character that allows accepts.
func step(states [nameStates]bool, allows func(c byte) bool) [nameStates]bool {
	var next [nameStates]bool
	for s, on := range states {
		if !on {
			continue
		}
		if s == gitStream {
			// Every pattern character matches some character, and any
			// may follow the stream's colon.
			next[gitStream] = true
			continue
		}
		for i := 0; i < len(nameAlphabet); i++ {
			if c := nameAlphabet[i]; allows(c) {
				if n := nameNext(s, c); n >= 0 {
					next[n] = true
				}
			}
		}
	}
	return next
}

// wildcard is the characters `*` and `?` stand for here: all but the colon
// of an NTFS stream. A stream is named by a colon written out; were `*` to
// stand for it, every segment ending in `*` and anything (`*.py` matches
// `.git:.py`) would be refused.
func wildcard(c byte) bool { return c != ':' }

// starClosure is the set of states after any number of characters.
func starClosure(states [nameStates]bool) [nameStates]bool {
	for {
		next := step(states, wildcard)
		grown := false
		for s, on := range next {
			if on && !states[s] {
				states[s], grown = true, true
			}
		}
		if !grown {
			return states
		}
	}
}

// checkSegments refuses a pattern alternative (braces expanded) one of
// whose segments can match what the literal rules refuse: a name of git's
// own directory, or a ".." that climbs out of the repository. A segment
// that is only `*` or `**` matches every name and is not one of them:
// `**` locks the whole worktree, and nothing inside .git is ever staged.
func checkSegments(alt string) *fail {
	depth := 0 // segments below the root, with each ".." the pattern may match taken as one
	for _, seg := range strings.Split(alt, "/") {
		if seg == "**" || seg == "*" {
			if seg == "*" {
				depth++
			}
			continue // ** may match no segment at all
		}
		if !hasMeta(seg) {
			depth++
			continue
		}
		gitName, parent := segmentReach(seg)
		if gitName {
			return refuse(".git is git's own directory and cannot be locked", "", "")
		}
		if parent {
			depth--
			if depth < 0 {
				return refuse("path escapes the repository through ..", pathForm, "")
			}
			continue
		}
		depth++
	}
	return nil
}
