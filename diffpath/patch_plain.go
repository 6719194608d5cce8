package diffpath

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Plain unified diffs, with no "diff --git" line: diff -u and -ruN, quilt,
// hg, and svn and cvs "Index:" sections (see ParsePatch: Names in plain
// diffs).

// indexSection reads an "Index: path" section of svn, cvs or quilt. svn
// names the repository path on the "Index:", "---" and "+++" lines alike
// (a new or deleted file has a label, never /dev/null). Sections without
// "---"/"+++" lines (binary files, property changes, copies without edits,
// svn diff --no-diff-deleted's "Index: path (deleted)") still name their
// file, so they count. quilt prints "Index:" above its own -p1 sections,
// which are read as plain sections.
func (p *patchParser) indexSection(line int, name string) error {
	p.lr.next() // the rule
	st := byte('M')
	bare := name
	if n, ok := strings.CutSuffix(name, " (deleted)"); ok {
		bare, st = n, 'D'
	} else if n, ok := strings.CutSuffix(name, " (added)"); ok {
		bare, st = n, 'A'
	}
	next, ok := p.lr.peek(0)
	h := trimCR(next)
	switch {
	case ok && strings.HasPrefix(h, "diff --git "):
		return nil // svn diff --git: the git section says it all
	case ok && strings.HasPrefix(h, "--- "):
		plus, ok := p.lr.peek(1)
		if !ok || !strings.HasPrefix(trimCR(plus), "+++ ") {
			return p.syntax(p.lr.n+1, "%q is not followed by a \"+++ \" line", h)
		}
		p.lr.next()
		// A property-only change has these lines and no hunk.
		return p.plainSection(p.lr.n, h[len("--- "):], "", name)
	}
	return p.named(line, st, bare)
}

// plainHeaderFollows reports whether the "---" line just read starts a
// plain unified diff: a "+++" line and a hunk header must follow, so that
// prose which happens to start with "--- " is not taken for a file.
func (p *patchParser) plainHeaderFollows() bool {
	plus, ok1 := p.lr.peek(0)
	hunk, ok2 := p.lr.peek(1)
	return ok1 && ok2 && bytes.HasPrefix(plus, []byte("+++ ")) && bytes.HasPrefix(hunk, []byte("@@ -"))
}

// plainSection parses a unified diff section without a "diff --git" line;
// minus is what follows "--- " on line, diffCmd the "diff …" command line
// just before it, if any, and index the name of the svn or cvs "Index:"
// line it is under, if any. See ParsePatch for the rules.
func (p *patchParser) plainSection(line int, minus, diffCmd, index string) error {
	plusRaw, _ := p.lr.next()
	plus := trimCR(plusRaw)[len("+++ "):]
	oldName, oldTS, err := plainName(minus)
	if err != nil {
		return p.syntax(line, "bad name in \"--- %s\": %v", minus, err)
	}
	newName, newTS, err := plainName(plus)
	if err != nil {
		return p.syntax(line+1, "bad name in \"+++ %s\": %v", plus, err)
	}
	if err := p.hunks(); err != nil {
		return err
	}
	oldNull, newNull := oldName == "/dev/null", newName == "/dev/null"
	st := byte('M')
	switch {
	case oldNull && newNull:
		return p.syntax(line, "both sides are /dev/null")
	case oldNull || isEpoch(oldTS) || oldTS == "(nonexistent)":
		st = 'A'
	case newNull || isEpoch(newTS) || newTS == "(nonexistent)":
		st = 'D'
	}
	if index != "" && oldName == index && newName == index {
		// svn: the repository path on every line, applied with -p0.
		if p.p0 == 0 {
			p.p0 = line
		}
		return p.named(line, st, index)
	}
	if index != "" && !oldNull && !newNull && oldName == newName {
		return p.syntax(line, "the names %q do not match \"Index: %s\"", oldName, index)
	}
	return p.plainChange(line, st, oldName, newName, diffCmd)
}

// plainChange adds the change of a plain section or binary line from its
// two names; see ParsePatch for the rules.
func (p *patchParser) plainChange(line int, st byte, oldName, newName, diffCmd string) error {
	oldNull, newNull := oldName == "/dev/null", newName == "/dev/null"
	if !oldNull && !newNull {
		name := newName
		if ro, ok := cutFirst(oldName); ok && oldName != newName {
			if rn, ok := cutFirst(newName); ok && ro == rn {
				name = rn
				if p.p1 == 0 {
					p.p1 = line
				}
			}
		}
		if name != newName {
			return p.named(line, st, name)
		}
		if p.p0 == 0 {
			p.p0 = line
		}
		if err := p.named(line, st, name); err != nil {
			return err
		}
		// As patch -p0 applies it; git apply would remove a component.
		p.items[len(p.items)-1].asWritten = true
		return nil
	}
	name := newName
	if newNull {
		name = oldName
	}
	if diffCmd != "" {
		// The command line ends with the path as cvs (diff -N x) and hg
		// (diff -r REV x, then "+++ b/x") name it; diff -r names two
		// directories' files, whose first component goes.
		if strings.HasSuffix(diffCmd, " "+name) {
			return p.named(line, st, name)
		}
		rest, ok := cutFirst(name)
		if !ok {
			return p.syntax(line, "cannot remove the first component of %q as the line %q before it needs", name, diffCmd)
		}
		return p.named(line, st, rest)
	}
	// Decided at the end, by the other sections (see devNullPath).
	p.items = append(p.items, item{c: Change{Status: st}, line: line, plain: name})
	return nil
}

// plainBinary handles "Binary files X and Y differ" outside a git section,
// as diff -r prints it. " and " may occur in the names too, so every split
// is tried and one that names the same path on both sides wins.
func (p *patchParser) plainBinary(line int, names string, diffCmd string) error {
	var cands []pair
	for i := 0; ; {
		j := strings.Index(names[i:], " and ")
		if j < 0 {
			break
		}
		i += j
		a, errA := quotedOrRest(names[:i])
		b, errB := quotedOrRest(names[i+len(" and "):])
		if errA == nil && errB == nil {
			cands = append(cands, pair{a, b})
		}
		i++
	}
	if len(cands) == 0 {
		return p.syntax(line, "cannot tell the file names in \"Binary files %s differ\"", names)
	}
	c := cands[0]
	for _, k := range cands {
		if k.a == k.b {
			c = k
			break
		}
		if ra, ok := cutFirst(k.a); ok {
			if rb, ok := cutFirst(k.b); ok && ra == rb {
				c = k
				break
			}
		}
	}
	st := byte('M')
	switch {
	case c.a == "/dev/null" && c.b == "/dev/null":
		return p.syntax(line, "both sides are /dev/null")
	case c.a == "/dev/null":
		st = 'A'
	case c.b == "/dev/null":
		st = 'D'
	}
	return p.plainChange(line, st, c.a, c.b, diffCmd)
}

// binaryNames returns "X and Y" from "Binary files X and Y differ".
func binaryNames(h string) (string, bool) {
	const pre, suf = "Binary files ", " differ"
	if len(h) < len(pre)+len(suf) || !isBinaryLine(h) {
		return "", false
	}
	return h[len(pre) : len(h)-len(suf)], true
}

// plainName decodes the name of a "---" or "+++" line and returns the
// label that follows it, if any: a timestamp, svn's "(revision 5)". The
// name ends at a tab, or, as tabs inside names were not quoted by old GNU
// diff, at the tab after which only labels follow. A line without a tab
// may have had it expanded to spaces by a mailer or an editor; a date or
// svn label at its end is then cut off, as git apply does.
func plainName(s string) (name, label string, err error) {
	if strings.HasPrefix(s, `"`) {
		name, rest, err := unquoteC(s)
		if err != nil {
			return "", "", err
		}
		if rest != "" && rest[0] != '\t' {
			return "", "", errBadQuote
		}
		return name, strings.TrimPrefix(rest, "\t"), nil
	}
	switch tabs := strings.Count(s, "\t"); {
	case tabs == 1:
		name, label, _ = strings.Cut(s, "\t")
	case tabs > 1:
		for i := 0; i < len(s); i++ {
			if s[i] == '\t' && allLabels(s[i+1:]) {
				name, label = s[:i], s[i+1:]
				break
			}
		}
		if name == "" {
			return "", "", errTabs
		}
	default:
		name = s
		if n := expandedLabel(s); n > 0 {
			name, label = strings.TrimRight(s[:len(s)-n], " "), s[len(s)-n:]
		}
	}
	if name == "" {
		return "", "", errBadQuote
	}
	return name, label, nil
}

var errTabs = errors.New("several tabs and no date after the last: cannot tell where the name ends")

// allLabels reports whether s is labels separated by tabs: dates, svn's
// "(revision 5)" and "(.../trunk)", cvs's revision "1.1"; or empty (git
// ends a name that has a space with a tab and nothing after it).
func allLabels(s string) bool {
	if s == "" {
		return true
	}
	for _, f := range strings.Split(s, "\t") {
		paren := strings.HasPrefix(f, "(") && strings.HasSuffix(f, ")")
		rev := f != "" && strings.Trim(f, "0123456789.") == "" && strings.Contains(f, ".")
		if !isDate(f) && !paren && !rev {
			return false
		}
	}
	return true
}

// expandedLabel returns the length of a date or svn label that ends s after
// one or more spaces, else 0. Only svn's own English labels are
// recognised: a file may well be named "photo (1)".
func expandedLabel(s string) int {
	best := 0
	for i, words := len(s)-2, 0; i > 0 && words < 8; i-- {
		if s[i] != ' ' || s[i+1] == ' ' {
			continue
		}
		words++
		if l := s[i+1:]; isDate(l) || isSvnLabel(l) {
			best = len(l)
		}
	}
	return best
}

func isSvnLabel(l string) bool {
	if l == "(working copy)" || l == "(nonexistent)" {
		return true
	}
	n, ok := strings.CutPrefix(l, "(revision ")
	n, ok2 := strings.CutSuffix(n, ")")
	_, err := strconv.Atoi(n)
	return ok && ok2 && err == nil
}

// dateLayouts are the timestamps diff tools write after a name: GNU diff
// -u (with or without fractions and zone), diff -c and old diff -u, hg,
// cvs. Parsing accepts fractional seconds after the seconds field.
var dateLayouts = []string{
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05",
	"Mon Jan _2 15:04:05 2006",
	"Mon Jan _2 15:04:05 2006 -0700",
	"Mon Jan 02 15:04:05 2006",
	"Mon Jan 02 15:04:05 2006 -0700",
	"2 Jan 2006 15:04:05 -0700",
}

func isDate(s string) bool {
	if len(s) < 16 || len(s) > 48 {
		return false
	}
	for _, layout := range dateLayouts {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// isEpoch reports whether a diff -u timestamp is the Unix epoch, which
// diff -N writes for a file that does not exist (in the local time zone).
func isEpoch(ts string) bool {
	if !strings.HasPrefix(ts, "1970-01-01 ") && !strings.HasPrefix(ts, "1969-12-31 ") {
		return false
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999 -0700", "2006-01-02 15:04:05 -0700"} {
		if t, err := time.Parse(layout, ts); err == nil {
			return t.Unix() == 0
		}
	}
	return false
}
