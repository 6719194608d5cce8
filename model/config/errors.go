package config

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// WholeFile is the Line of a Problem that concerns the whole file rather than
// one line of it (unreadable encoding, a YAML error without a position).
const WholeFile = 0

// Problem is one thing wrong with a configuration file.
type Problem struct {
	File   string // the file name as given to Load / LoadBytes
	Line   int    // 1-based; WholeFile (0) when no line applies
	Column int    // 1-based; 0 when unknown
	Msg    string // one line, no trailing period
}

// String formats p as "file:line: msg" ("file: msg" for whole-file problems).
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Msg)
}

// Error is the problems found in one file, sorted by line: all of them, or
// the first MaxProblems found and the number of the others in Omitted.
type Error struct {
	Problems []Problem
	Omitted  int
}

// MaxProblems bounds the problems kept per file, and ShownProblems those an
// error message lists: a broken or hostile file must not flood the
// terminal or the memory.
const (
	MaxProblems   = 1000
	ShownProblems = 20
)

// Error returns one line per problem, at most ShownProblems of them,
// followed by a count of the rest.
func (e *Error) Error() string {
	if len(e.Problems) == 0 {
		return "invalid configuration"
	}
	n := min(len(e.Problems), ShownProblems)
	lines := make([]string, n, n+1)
	for i, p := range e.Problems[:n] {
		lines[i] = p.String()
	}
	if more := len(e.Problems) - n + e.Omitted; more > 0 {
		lines = append(lines, fmt.Sprintf("%s: … and %s more problems", e.Problems[0].File, thousands(more)))
	}
	return strings.Join(lines, "\n")
}

// thousands formats n with commas: 1,234,567.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// problems collects Problems for one file.
type problems struct {
	file    string
	list    []Problem
	omitted int // problems past MaxProblems, only counted
}

func (ps *problems) add(line, col int, format string, args ...any) {
	if len(ps.list) >= MaxProblems {
		ps.omitted++
		return
	}
	msg := fmt.Sprintf(format, args...)
	msg = clip(strings.TrimSpace(oneLine.Replace(msg)), maxMessage)
	if line < 0 {
		line = WholeFile
	}
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Column: col, Msg: msg})
}

// merge appends the problems of vs, up to MaxProblems.
func (ps *problems) merge(vs *problems) {
	room := max(MaxProblems-len(ps.list), 0)
	keep := vs.list[:min(room, len(vs.list))]
	ps.list = append(ps.list, keep...)
	ps.omitted += vs.omitted + len(vs.list) - len(keep)
}

// err returns the collected problems as a *Error sorted by line, or nil.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := append([]Problem(nil), ps.list...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
	return &Error{Problems: list, Omitted: ps.omitted}
}

// maxMessage bounds one problem's message: values are quoted short, but a
// path may still carry a long mapping key.
const maxMessage = 400

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// quote renders a user value for a message, shortened when long.
func quote(s string) string {
	const max = 60
	if utf8.RuneCountInString(s) > max {
		i, n := 0, 0
		for i < len(s) && n < max {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			n++
		}
		s = s[:i] + "…"
	}
	return fmt.Sprintf("%q", s)
}
