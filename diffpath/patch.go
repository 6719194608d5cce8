package diffpath

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ParsePatch reads unified diffs and returns the changed paths in the order
// the files appear, each distinct Change once. It understands:
//
//   - git's patches: git diff [--cached], git show, git log -p, and
//     git format-patch mailboxes (several patches, mail headers, the "-- "
//     signature), with any prefixes: the default a/ b/, --no-prefix,
//     diff.mnemonicPrefix (c/ i/ w/ o/, 1/ 2/), --src-prefix/--dst-prefix;
//     rename and copy headers, new, deleted and mode-only files, binary
//     files with and without --binary, and C-quoted names;
//   - combined diffs of merges ("diff --cc path", "diff --combined path")
//     and "* Unmerged path" lines of a conflicted index;
//   - plain unified diffs without a "diff --git" line: diff -u, diff -ruN
//     and patches made by other tools, named by their "---" and "+++" lines
//     (see below).
//
// Hunks are skipped by the line counts in their "@@ -a,b +c,d @@" headers,
// so content lines that look like headers ("--- a/evil", "diff --git …")
// are content. Everything outside file sections (mail headers, commit
// messages, diffstats, "Only in" lines of diff -r) is ignored.
//
// # Names in git patches
//
// The prefixes are removed by exact prefix match, never by trimming
// characters: "a/bridge/loop.py" is "bridge/loop.py", never "ridge/loop.py".
// For each file the names come from, in this order: "rename from/to" and
// "copy from/to" headers, which carry no prefix; the "---" and "+++" lines,
// which name each side exactly; else the "diff --git A B" line, which is
// ambiguous when unquoted names contain spaces, so it is split at the space
// that makes both sides name the same path, as they do for every change
// that is not a rename or copy. Two names name the same path P when,
// trying each rule in turn:
//
//  1. they are equal: a --no-prefix diff, P is the name itself, so a file
//     really named "a/x" in a --no-prefix diff ("diff --git a/x a/x") stays
//     "a/x";
//  2. they are a known prefix pair followed by the same P: a/ b/ and the
//     mnemonic pairs i/ w/, c/ i/, c/ w/, o/ w/, 1/ 2/, each either way
//     round (git diff -R swaps them);
//  3. after removing everything up to the first "/" of each (what
//     git apply -p1 does), the rests are equal: custom prefixes such as
//     --src-prefix=x/ --dst-prefix=y/.
//
// Custom prefixes that are equal on both sides (x/ and x/) cannot be told
// from a directory and are kept; prefixes of several components (x/v1/ and
// y/v1/) lose only their first; prefixes without a trailing "/" are not
// understood. Note that git apply, which strips one component by default,
// applies a --no-prefix patch of "a/x" to "x"; this reports "a/x", the
// path the diff was made from. Two names that match no rule, such as those
// of git diff --no-index between two directories, are a *SyntaxError.
//
// # Names in plain diffs
//
// A plain section is a "---" line, a "+++" line and a hunk header. A name
// ends at the first tab (diff -u writes a timestamp after it) unless it is
// C-quoted, as GNU diff quotes names with spaces or special bytes. Then:
//
//   - equal names are the path (diff -u f f, svn and cvs patches);
//   - names that are equal after removing their first component are that
//     rest, as patch -p1 would apply them: diff -ruN old new gives
//     "old/sub/x" and "new/sub/x", which is "sub/x";
//   - otherwise the new name is the path, as patch -p0 would apply
//     diff -u f.orig f;
//   - a /dev/null side is an addition or deletion and the other name is
//     the path, with its first component removed when the line before was a
//     "diff -r…" command line or an earlier plain section of the same patch
//     was resolved by the -p1 rule, else with a leading "a/" (old side) or
//     "b/" (new side) removed, else as it is;
//   - a side whose timestamp is the Unix epoch is a file that did not exist
//     (diff -N): the section is an addition or a deletion;
//   - "Binary files X and Y differ" is a modification of the path the same
//     rules give for X and Y.
//
// Files that diff -r reports only as "Only in dir: name" are not part of
// the patch and are not returned; use diff -N to include them. Context
// diffs (diff -c) are not recognised.
//
// Every path goes through Normalize, so a bad path is a wrapped *PathError.
// A malformed file section or hunk is a *SyntaxError with its line number,
// and so is input that has text but no file section at all, so that a
// caller never takes "not a diff" for "changes nothing". Empty or blank
// input gives no changes and no error. An error from r is returned wrapped.
func ParsePatch(r io.Reader) ([]Change, error) {
	p := &patchParser{lr: lineReader{br: bufio.NewReaderSize(r, 64<<10)}, seen: map[Change]struct{}{}}
	err := p.parse()
	if p.lr.err != nil {
		// A failed read can look like a truncated patch; report the cause.
		return nil, fmt.Errorf("diffpath: reading patch: %w", p.lr.err)
	}
	if err != nil {
		return nil, err
	}
	if p.files == 0 && p.text {
		// Fail closed: "nothing changed" must not be the answer for
		// input that is not a diff at all.
		return nil, p.syntax(p.lr.n, "no file changes found; want unified diff output (colored output, --line-prefix and context diffs are not understood)")
	}
	return p.out, nil
}

type patchParser struct {
	lr   lineReader
	out  []Change
	seen map[Change]struct{}
	// files counts file sections, duplicates included; text records that
	// the input had a line that was not blank.
	files int
	text  bool
	// p1 is set once a plain section was resolved by removing one leading
	// component; later /dev/null sections of the same patch follow suit.
	p1 bool
}

func (p *patchParser) add(c Change) {
	p.files++
	if _, dup := p.seen[c]; !dup {
		p.seen[c] = struct{}{}
		p.out = append(p.out, c)
	}
}

func (p *patchParser) syntax(line int, format string, args ...any) error {
	return &SyntaxError{Format: "patch", Pos: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *patchParser) normalize(line int, path string) (string, error) {
	np, err := Normalize(path)
	if err != nil {
		return "", posError("patch", line, err)
	}
	return np, nil
}

func (p *patchParser) parse() error {
	afterDiffCmd := false
	for {
		raw, ok := p.lr.next()
		if !ok {
			return nil
		}
		line := p.lr.n
		h := trimCR(raw)
		if !p.text && strings.TrimSpace(h) != "" {
			p.text = true
		}
		wasDiffCmd := afterDiffCmd
		afterDiffCmd = false
		var err error
		switch {
		case strings.HasPrefix(h, "diff --git "):
			err = p.gitSection(line, h[len("diff --git "):])
		case strings.HasPrefix(h, "diff --cc "):
			err = p.combinedSection(line, h[len("diff --cc "):])
		case strings.HasPrefix(h, "diff --combined "):
			err = p.combinedSection(line, h[len("diff --combined "):])
		case strings.HasPrefix(h, "--- ") && p.plainHeaderFollows():
			err = p.plainSection(line, h[len("--- "):], wasDiffCmd)
		case isBinaryLine(h):
			// Old git printed "Binary files differ" without names,
			// but always inside a git section.
			if names, ok := binaryNames(h); ok {
				err = p.plainBinary(line, names, wasDiffCmd)
			}
		case strings.HasPrefix(h, "* Unmerged path "):
			var path string
			if path, err = p.normalize(line, h[len("* Unmerged path "):]); err == nil {
				p.add(Change{Status: 'U', Path: path})
			}
		case strings.HasPrefix(h, "diff "):
			// GNU diff -r names each file pair on a "diff -ruN x y"
			// line; remember it for the section that follows.
			afterDiffCmd = true
		}
		if err != nil {
			return err
		}
	}
}

// gitHeader collects the extended header lines of one "diff --git" section.
type gitHeader struct {
	added, deleted        bool
	oldMode, newMode      string
	renameFrom, renameTo  *string
	copyFrom, copyTo      *string
	score                 int
	minus, plus           *string // names from "---"/"+++"; nil when absent
	minusNull, plusNull   bool
	minusLine, renameLine int
}

// gitSection parses one file of a git patch; rest is what follows
// "diff --git " on line.
func (p *patchParser) gitSection(line int, rest string) error {
	var g gitHeader
	done := false
	for !done {
		raw, ok := p.lr.peek(0)
		if !ok {
			break
		}
		h := trimCR(raw)
		at := p.lr.n + 1
		var err error
		switch {
		case strings.HasPrefix(h, "old mode "):
			g.oldMode = h[len("old mode "):]
		case strings.HasPrefix(h, "new mode "):
			g.newMode = h[len("new mode "):]
		case strings.HasPrefix(h, "deleted file mode "):
			g.deleted, g.oldMode = true, h[len("deleted file mode "):]
		case strings.HasPrefix(h, "new file mode "):
			g.added, g.newMode = true, h[len("new file mode "):]
		case strings.HasPrefix(h, "rename from "):
			g.renameFrom, err = headerName(h[len("rename from "):])
			g.renameLine = at
		case strings.HasPrefix(h, "rename old "): // git before 1.5
			g.renameFrom, err = headerName(h[len("rename old "):])
			g.renameLine = at
		case strings.HasPrefix(h, "rename to "):
			g.renameTo, err = headerName(h[len("rename to "):])
		case strings.HasPrefix(h, "rename new "):
			g.renameTo, err = headerName(h[len("rename new "):])
		case strings.HasPrefix(h, "copy from "):
			g.copyFrom, err = headerName(h[len("copy from "):])
			g.renameLine = at
		case strings.HasPrefix(h, "copy to "):
			g.copyTo, err = headerName(h[len("copy to "):])
		case strings.HasPrefix(h, "similarity index "):
			g.score = percent(h[len("similarity index "):])
		case strings.HasPrefix(h, "dissimilarity index "), strings.HasPrefix(h, "index "):
		case h == "GIT binary patch":
			// The base85 lines that follow start with a length letter
			// and contain no spaces, so the main loop skips them.
			done = true
		case isBinaryLine(h):
			done = true
		case strings.HasPrefix(h, "--- "):
			next, ok := p.lr.peek(1)
			if !ok || !strings.HasPrefix(trimCR(next), "+++ ") {
				return p.syntax(at, "%q is not followed by a \"+++ \" line", h)
			}
			p.lr.next()
			p.lr.next()
			g.minusLine = at
			if g.minus, g.minusNull, err = gitName(h[len("--- "):]); err != nil {
				return p.syntax(at, "bad name in %q: %v", h, err)
			}
			if g.plus, g.plusNull, err = gitName(trimCR(next)[len("+++ "):]); err != nil {
				return p.syntax(at+1, "bad name in %q: %v", trimCR(next), err)
			}
			if err := p.hunks(); err != nil {
				return err
			}
			return p.addGit(line, rest, &g)
		default:
			// Anything else ends the header: the next section, a
			// commit message in git log -p, a mail signature.
			return p.addGit(line, rest, &g)
		}
		if err != nil {
			return p.syntax(at, "bad name in %q: %v", h, err)
		}
		p.lr.next()
	}
	return p.addGit(line, rest, &g)
}

// addGit works out the Change of a git section from its header.
func (p *patchParser) addGit(line int, rest string, g *gitHeader) error {
	twoSided := func(kind byte, from, to *string) error {
		if from == nil || to == nil {
			what := "rename"
			if kind == 'C' {
				what = "copy"
			}
			return p.syntax(g.renameLine, "incomplete %s header: want both \"from\" and \"to\"", what)
		}
		old, err := p.normalize(g.renameLine, *from)
		if err != nil {
			return err
		}
		path, err := p.normalize(g.renameLine, *to)
		if err != nil {
			return err
		}
		p.add(Change{Status: kind, Score: g.score, Path: path, OldPath: old})
		return nil
	}
	switch {
	case g.renameFrom != nil || g.renameTo != nil:
		return twoSided('R', g.renameFrom, g.renameTo)
	case g.copyFrom != nil || g.copyTo != nil:
		return twoSided('C', g.copyFrom, g.copyTo)
	}

	st := byte('M')
	switch {
	case g.added || g.minusNull:
		st = 'A'
	case g.deleted || g.plusNull:
		st = 'D'
	case g.oldMode != "" && g.newMode != "" && modeType(g.oldMode) != modeType(g.newMode):
		st = 'T'
	}
	if g.minusNull && g.plusNull {
		return p.syntax(g.minusLine, "both sides are /dev/null")
	}

	var name string
	var ok bool
	if g.minus != nil && !g.minusNull && g.plus != nil && !g.plusNull {
		// Both sides named exactly: no need for the ambiguous line.
		if name, ok = samePath(pair{*g.minus, *g.plus}); !ok {
			return p.syntax(g.minusLine, "file names %q and %q do not name the same path and there is no rename or copy header (a git diff --no-index of two directories?)", *g.minus, *g.plus)
		}
	} else {
		cands := splitGitLine(rest)
		// A side known exactly from "---"/"+++" picks the split.
		keep := cands[:0]
		for _, c := range cands {
			if (g.minus == nil || g.minusNull || c.a == *g.minus) && (g.plus == nil || g.plusNull || c.b == *g.plus) {
				keep = append(keep, c)
			}
		}
		if name, ok = samePath(keep...); !ok {
			return p.syntax(line, "cannot tell the file name from \"diff --git %s\"", rest)
		}
	}
	path, err := p.normalize(line, name)
	if err != nil {
		return err
	}
	p.add(Change{Status: st, Path: path})
	return nil
}

// combinedSection parses "diff --cc path" or "diff --combined path", git's
// combined diff of a merge (git show, git diff during a conflict). The path
// carries no prefix.
func (p *patchParser) combinedSection(line int, rest string) error {
	name, err := headerName(rest)
	if err != nil {
		return p.syntax(line, "bad name in combined diff header: %v", err)
	}
	st := byte('M')
headers:
	for {
		raw, ok := p.lr.peek(0)
		if !ok {
			break
		}
		h := trimCR(raw)
		switch {
		case strings.HasPrefix(h, "new file mode "):
			st = 'A'
		case strings.HasPrefix(h, "deleted file mode "):
			st = 'D'
		case strings.HasPrefix(h, "index "), strings.HasPrefix(h, "mode "),
			strings.HasPrefix(h, "similarity index "), strings.HasPrefix(h, "dissimilarity index "):
		case strings.HasPrefix(h, "--- "):
			// One "---" line, or one per parent with
			// --combined-all-paths, then "+++".
			n := 1
			for {
				next, ok := p.lr.peek(n)
				if ok && strings.HasPrefix(trimCR(next), "--- ") && n < 64 {
					n++
					continue
				}
				if !ok || !strings.HasPrefix(trimCR(next), "+++ ") {
					return p.syntax(p.lr.n+1, "%q is not followed by a \"+++ \" line", h)
				}
				break
			}
			for i := 0; i <= n; i++ {
				p.lr.next()
			}
			if err := p.hunks(); err != nil {
				return err
			}
			break headers
		default:
			break headers
		}
		p.lr.next()
	}
	path, err := p.normalize(line, *name)
	if err != nil {
		return err
	}
	p.add(Change{Status: st, Path: path})
	return nil
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
// minus is what follows "--- " on line. See ParsePatch for the rules.
func (p *patchParser) plainSection(line int, minus string, afterDiffCmd bool) error {
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
	case oldNull || isEpoch(oldTS):
		st = 'A'
	case newNull || isEpoch(newTS):
		st = 'D'
	}
	name, err := p.plainPath(line, oldName, newName, afterDiffCmd)
	if err != nil {
		return err
	}
	path, err := p.normalize(line, name)
	if err != nil {
		return err
	}
	p.add(Change{Status: st, Path: path})
	return nil
}

// plainBinary handles "Binary files X and Y differ" outside a git section,
// as diff -r prints it. " and " may occur in the names too, so every split
// is tried and one that names the same path on both sides wins.
func (p *patchParser) plainBinary(line int, names string, afterDiffCmd bool) error {
	var cands []pair
	for i := 0; ; {
		j := strings.Index(names[i:], " and ")
		if j < 0 {
			break
		}
		i += j
		a, errA := plainBinaryName(names[:i])
		b, errB := plainBinaryName(names[i+len(" and "):])
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
	name, err := p.plainPath(line, c.a, c.b, afterDiffCmd)
	if err != nil {
		return err
	}
	path, err := p.normalize(line, name)
	if err != nil {
		return err
	}
	p.add(Change{Status: st, Path: path})
	return nil
}

func isBinaryLine(h string) bool {
	return strings.HasPrefix(h, "Binary files ") && strings.HasSuffix(h, " differ")
}

// binaryNames returns "X and Y" from "Binary files X and Y differ".
func binaryNames(h string) (string, bool) {
	const pre, suf = "Binary files ", " differ"
	if len(h) < len(pre)+len(suf) || !isBinaryLine(h) {
		return "", false
	}
	return h[len(pre) : len(h)-len(suf)], true
}

func plainBinaryName(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		name, rest, err := unquoteC(s)
		if err == nil && rest != "" {
			err = errBadQuote
		}
		return name, err
	}
	if s == "" {
		return "", errBadQuote
	}
	return s, nil
}

// plainPath picks the path of a plain section from its two names.
func (p *patchParser) plainPath(line int, oldName, newName string, afterDiffCmd bool) (string, error) {
	oldNull, newNull := oldName == "/dev/null", newName == "/dev/null"
	if !oldNull && !newNull {
		if oldName == newName {
			return newName, nil
		}
		if ro, ok := cutFirst(oldName); ok {
			if rn, ok := cutFirst(newName); ok && ro == rn {
				p.p1 = true
				return rn, nil
			}
		}
		return newName, nil
	}
	name, conventional := newName, "b/"
	if newNull {
		name, conventional = oldName, "a/"
	}
	if afterDiffCmd || p.p1 {
		rest, ok := cutFirst(name)
		if !ok {
			return "", p.syntax(line, "cannot remove the first component of %q as the other sections of this diff need", name)
		}
		return rest, nil
	}
	if rest, ok := strings.CutPrefix(name, conventional); ok {
		return rest, nil
	}
	return name, nil
}

// cutFirst removes the first path component, as patch -p1 does.
func cutFirst(s string) (string, bool) {
	i := strings.IndexByte(s, '/')
	if i < 0 || i == len(s)-1 {
		return "", false
	}
	return s[i+1:], true
}

// hunks skips the hunks that follow a file header, using each hunk header's
// line counts so that content lines are never taken for headers.
func (p *patchParser) hunks() error {
	for {
		raw, ok := p.lr.peek(0)
		if !ok || !bytes.HasPrefix(raw, []byte("@@")) {
			return nil
		}
		p.lr.next()
		line := p.lr.n
		old, nw, ok := parseHunkHeader(trimCR(raw))
		if !ok {
			return p.syntax(line, "malformed hunk header %s", quoteField(trimCR(raw)))
		}
		if err := p.hunkBody(line, old, nw); err != nil {
			return err
		}
	}
}

// hunkBody consumes the lines of one hunk. A unified hunk line starts with
// ' ', '-' or '+'; a combined hunk line has one such column per parent:
// a line with a '-' column is in the parents marked '-' and not in the
// result, any other line is in the result and in the parents marked ' '.
func (p *patchParser) hunkBody(header int, old []int, nw int) error {
	n := len(old)
	remaining := func() bool {
		if nw > 0 {
			return true
		}
		for _, o := range old {
			if o > 0 {
				return true
			}
		}
		return false
	}
	for remaining() {
		raw, ok := p.lr.peek(0)
		if !ok {
			return p.syntax(header, "truncated hunk: the patch ends before the hunk's last line")
		}
		at := p.lr.n + 1
		l := raw
		if len(l) > 0 && l[len(l)-1] == '\r' {
			l = l[:len(l)-1]
		}
		switch {
		case len(l) == 0:
			// Mailers strip the space of an empty context line;
			// git apply accepts that, and so do we.
			nw--
			for i := range old {
				old[i]--
			}
		case l[0] == '\\': // "\ No newline at end of file"
		default:
			if len(l) < n {
				return p.syntax(at, "corrupt hunk line %s: want %d columns of ' ', '-' or '+'", quoteField(l), n)
			}
			cols := l[:n]
			if len(bytes.Trim(cols, " +-")) != 0 {
				return p.syntax(at, "corrupt hunk line %s: the hunk header at line %d promises more lines", quoteField(l), header)
			}
			if bytes.IndexByte(cols, '-') >= 0 {
				for i := range old {
					if cols[i] == '-' {
						old[i]--
					}
				}
			} else {
				nw--
				for i := range old {
					if cols[i] == ' ' {
						old[i]--
					}
				}
			}
		}
		if nw < 0 {
			return p.syntax(at, "hunk at line %d has more lines than its header says", header)
		}
		for _, o := range old {
			if o < 0 {
				return p.syntax(at, "hunk at line %d has more lines than its header says", header)
			}
		}
		p.lr.next()
	}
	for {
		raw, ok := p.lr.peek(0)
		if !ok || len(raw) == 0 || raw[0] != '\\' {
			return nil
		}
		p.lr.next()
	}
}

// parseHunkHeader parses "@@ -a[,b] +c[,d] @@ …" and its combined form
// "@@@ -a,b -c,d +e,f @@@", returning the old-side count of each parent
// and the new-side count (a missing count means 1).
func parseHunkHeader(h string) (old []int, nw int, ok bool) {
	k := 0
	for k < len(h) && h[k] == '@' {
		k++
	}
	if k < 2 || k > 64 {
		return nil, 0, false
	}
	rest := h[k:]
	old = make([]int, k-1)
	for i := range old {
		var ok bool
		if old[i], rest, ok = hunkRange(rest, " -"); !ok {
			return nil, 0, false
		}
	}
	if nw, rest, ok = hunkRange(rest, " +"); !ok {
		return nil, 0, false
	}
	if !strings.HasPrefix(rest, " "+h[:k]) {
		return nil, 0, false
	}
	return old, nw, true
}

// hunkRange parses lead followed by "start[,count]" and returns count.
func hunkRange(s, lead string) (count int, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, lead)
	if !ok {
		return 0, "", false
	}
	num := func() (int, bool) {
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == 0 || i > 9 { // 9 digits: no overflow, far beyond any file
			return 0, false
		}
		n, _ := strconv.Atoi(s[:i])
		s = s[i:]
		return n, true
	}
	if _, ok = num(); !ok {
		return 0, "", false
	}
	count = 1
	if strings.HasPrefix(s, ",") {
		s = s[1:]
		if count, ok = num(); !ok {
			return 0, "", false
		}
	}
	return count, s, true
}

// pair is one way of reading the two names of a "diff --git" line.
type pair struct{ a, b string }

// splitGitLine returns the ways to read "A B" after "diff --git ". Quoted
// names are unambiguous; unquoted names may contain spaces, so every space
// gives a candidate.
func splitGitLine(rest string) []pair {
	if strings.HasPrefix(rest, `"`) {
		a, r, err := unquoteC(rest)
		if err != nil || !strings.HasPrefix(r, " ") {
			return nil
		}
		b, err := quotedOrRest(r[1:])
		if err != nil {
			return nil
		}
		return []pair{{a, b}}
	}
	var out []pair
	for i := 0; i < len(rest); i++ {
		if rest[i] != ' ' {
			continue
		}
		if b, err := quotedOrRest(rest[i+1:]); err == nil && i > 0 {
			out = append(out, pair{rest[:i], b})
		}
	}
	return out
}

func quotedOrRest(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		name, rest, err := unquoteC(s)
		if err == nil && rest != "" {
			err = errBadQuote
		}
		return name, err
	}
	if s == "" {
		return "", errBadQuote
	}
	return s, nil
}

// knownPrefixes are the prefix pairs git writes: the default and the
// diff.mnemonicPrefix ones, listed as (src, dst); the reversed pairs of
// git diff -R are tried too.
var knownPrefixes = [][2]string{
	{"a/", "b/"},
	{"i/", "w/"}, // git diff: index vs work tree
	{"c/", "i/"}, // git diff --cached: commit vs index
	{"c/", "w/"}, // git diff HEAD: commit vs work tree
	{"o/", "w/"}, // git diff HEAD:file file: object vs work tree
	{"1/", "2/"}, // git diff --no-index
}

// samePath returns the path that a pair of names both denote, trying the
// rules of ParsePatch in order over all candidates: equal names, a known
// prefix pair, then a first component each.
func samePath(cands ...pair) (string, bool) {
	for _, c := range cands {
		if c.a == c.b {
			return c.a, true
		}
	}
	for _, c := range cands {
		for _, kp := range knownPrefixes {
			for _, sd := range [2][2]string{kp, {kp[1], kp[0]}} {
				ra, okA := strings.CutPrefix(c.a, sd[0])
				rb, okB := strings.CutPrefix(c.b, sd[1])
				if okA && okB && ra == rb && ra != "" {
					return ra, true
				}
			}
		}
	}
	for _, c := range cands {
		ra, okA := cutFirst(c.a)
		rb, okB := cutFirst(c.b)
		if okA && okB && ra == rb {
			return ra, true
		}
	}
	return "", false
}

// headerName decodes the name of a "rename from", "copy to" or "diff --cc"
// header: C-quoted, or the rest of the line verbatim.
func headerName(s string) (*string, error) {
	name, err := quotedOrRest(s)
	if err != nil {
		return nil, err
	}
	return &name, nil
}

// gitName decodes the name of a "---" or "+++" line in a git section. git
// ends an unquoted name that contains a space with a tab, so that patch(1)
// finds its end; a tab inside a name is always quoted.
func gitName(s string) (name *string, isNull bool, err error) {
	n, _, err := plainName(s)
	if err != nil {
		return nil, false, err
	}
	return &n, n == "/dev/null", nil
}

// plainName decodes the name of a "---" or "+++" line and returns the
// timestamp that follows it after a tab, if any.
func plainName(s string) (name, timestamp string, err error) {
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
	name, timestamp, _ = strings.Cut(s, "\t")
	if name == "" {
		return "", "", errBadQuote
	}
	return name, timestamp, nil
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

// percent parses "87%" (a similarity index) and returns 0 when malformed.
func percent(s string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if err != nil || n < 0 || n > 100 {
		return 0
	}
	return n
}

// modeType returns the file type bits of an octal git mode.
func modeType(m string) int64 {
	v, err := strconv.ParseInt(m, 8, 64)
	if err != nil {
		return -1
	}
	return v & 0o170000
}

func trimCR[T ~string | ~[]byte](b T) string {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return string(b)
}

// lineReader reads lines (without their newline) and lets the parser look a
// few lines ahead. Lines are owned copies.
type lineReader struct {
	br  *bufio.Reader
	q   [][]byte // lines read ahead
	n   int      // number of the last line returned by next
	eof bool
	err error // a read error other than io.EOF
}

func (l *lineReader) peek(i int) ([]byte, bool) {
	for len(l.q) <= i {
		if l.eof {
			return nil, false
		}
		line, err := l.br.ReadBytes('\n')
		if err != nil {
			l.eof = true
			if err != io.EOF {
				l.err = err
				return nil, false
			}
			if len(line) == 0 {
				return nil, false
			}
		}
		l.q = append(l.q, bytes.TrimSuffix(line, []byte{'\n'}))
	}
	return l.q[i], true
}

func (l *lineReader) next() ([]byte, bool) {
	line, ok := l.peek(0)
	if !ok {
		return nil, false
	}
	copy(l.q, l.q[1:])
	l.q = l.q[:len(l.q)-1]
	l.n++
	return line, true
}
