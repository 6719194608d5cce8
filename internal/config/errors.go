package config

import (
	"fmt"
	"sort"
	"strings"
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

// Error is every problem found in one file, sorted by line.
type Error struct {
	Problems []Problem
}

// Error returns one line per problem.
func (e *Error) Error() string {
	if len(e.Problems) == 0 {
		return "invalid configuration"
	}
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// problems collects Problems for one file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(line, col int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	msg = strings.TrimSpace(oneLine.Replace(msg))
	if line < 0 {
		line = WholeFile
	}
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Column: col, Msg: msg})
}

// merge appends the problems of vs.
func (ps *problems) merge(vs *problems) { ps.list = append(ps.list, vs.list...) }

// err returns the collected problems as a *Error sorted by line, or nil.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := append([]Problem(nil), ps.list...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
	return &Error{Problems: list}
}

// quote renders a user value for a message, shortened when long.
func quote(s string) string {
	const max = 60
	if len(s) > max {
		r := []rune(s)
		if len(r) > max {
			s = string(r[:max]) + "…"
		}
	}
	return fmt.Sprintf("%q", s)
}
