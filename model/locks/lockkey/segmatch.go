package lockkey

import (
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// A pattern may spell a name the literal rules refuse in disguise:
// `[.]git/x` and `.GI[T]/x` match only `.git/x`-like paths, `[.][.]/x`
// only `../x`. segmentOnly decides whether every name one segment of a
// pattern matches is such a name, by running the segment over a small
// automaton of the refused names, so that such a pattern is refused as
// its literal is. A segment that can also match an ordinary name (`.gi?`,
// `.*`, `??`, `*git`) is allowed: a pattern is matched only against
// paths inside the repository, where it finds those ordinary names, and
// nothing inside `.git` is ever staged.

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

// segmentOnly reports whether every name seg matches is a name of git's
// directory (gitName), or is ".." (parent). It runs the segment over the
// automaton for all of its matches at once: a character class, `?` or
// `*` that lets one character through on which some state has no move
// means some match is an ordinary name. A class with a character outside
// ASCII is taken to match an ordinary name too (the automaton's names are
// ASCII).
func segmentOnly(seg string) (gitName, parent bool) {
	var states [nameStates]bool
	states[nameStart] = true
	for i := 0; i < len(seg); i++ {
		var allows func(c byte) bool
		switch seg[i] {
		case '*':
			// Zero characters leave the states as they are; one or more
			// must keep every state alive on every character.
			if !everyCharMoves(states, wildcard) {
				return false, false
			}
			continue
		case '?':
			allows = wildcard
		case '[':
			end := classEnd(seg, i)
			if end < 0 {
				return false, false // doublestar refused it already
			}
			class := seg[i : end+1]
			for j := 0; j < len(class); j++ {
				if class[j] >= 0x80 {
					return false, false
				}
			}
			allows = func(c byte) bool {
				ok, err := doublestar.Match(class, string(rune(c)))
				return ok && err == nil
			}
			i = end
		case '\\':
			if i+1 < len(seg) {
				i++
			}
			lit := seg[i]
			allows = func(c byte) bool { return c == lit }
		default:
			lit := seg[i]
			allows = func(c byte) bool { return c == lit }
		}
		if !everyCharMoves(states, allows) {
			return false, false
		}
		states = step(states, allows)
	}
	only := func(accept ...int) bool {
		for s, on := range states {
			if on && !slices.Contains(accept, s) {
				return false
			}
		}
		return true
	}
	return only(gitDir, gitStream), only(dotDot)
}

// everyCharMoves reports whether every state of states has a move on
// every ASCII character allows lets through: a character without one
// ends a match that is not a refused name.
func everyCharMoves(states [nameStates]bool, allows func(c byte) bool) bool {
	for c := 1; c < 0x80; c++ {
		if !allows(byte(c)) {
			continue
		}
		for s, on := range states {
			if on && s != gitStream && nameNext(s, byte(c)) < 0 {
				return false
			}
		}
	}
	return true
}

// step is the set of states after one character that allows accepts.
func step(states [nameStates]bool, allows func(c byte) bool) [nameStates]bool {
	var next [nameStates]bool
	for s, on := range states {
		if !on {
			continue
		}
		if s == gitStream {
			// Any character may follow the stream's colon.
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

// wildcard is the characters `*` and `?` stand for: any.
func wildcard(byte) bool { return true }

// checkSegments refuses a pattern alternative (braces expanded) one of
// whose segments matches only what the literal rules refuse: a name of
// git's own directory, or a ".." that climbs out of the repository.
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
		gitName, parent := segmentOnly(seg)
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
