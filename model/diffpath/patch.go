package diffpath

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/safetext"
)

// ParsePatch reads unified diffs and returns the changed paths in the order
// the files appear, each distinct Change once. It understands:
//
//   - git's patches: git diff [--cached], git show, git log -p, and
//     git format-patch mailboxes (several patches, mail headers, the "-- "
//     signature), with any prefixes: the default a/ b/, --no-prefix,
//     diff.mnemonicPrefix (c/ i/ w/ o/, 1/ 2/), --src-prefix/--dst-prefix;
//     rename and copy headers, new, deleted and mode-only files, binary
//     files with and without --binary, C-quoted names, and the
//     "Submodule path a..b" lines of --submodule=log and =diff;
//   - combined diffs of merges ("diff --cc path", "diff --combined path"),
//     with the rename sources --combined-all-paths names, and
//     "* Unmerged path" lines of a conflicted index;
//   - plain unified diffs without a "diff --git" line: diff -u, diff -ruN,
//     quilt, hg, and svn and cvs "Index:" sections (also those without
//     "---"/"+++" lines: binary files, property changes, copies, deletions),
//     named by their "---" and "+++" lines (see below).
//
// Hunks are skipped by the line counts in their "@@ -a,b +c,d @@" headers,
// so content lines that look like headers ("--- a/evil", "diff --git …")
// are content. Everything outside file sections (mail headers, commit
// messages, diffstats, "Only in" lines of diff -r) is ignored. A context
// diff (diff -c) section is an error.
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
//  3. they are custom prefixes followed by the same P. Custom prefixes
//     need not end in "/" nor be one component, so "x/v1/f" "y/v1/f" may
//     be f, v1/f or 1/f; the prefix pair is the one the most files of the
//     patch allow (a rename's headers pin it down), and a file for which
//     that is not one pair, such as the only file of a patch whose name has
//     a directory, is a *SyntaxError rather than a guess.
//
// Custom prefixes that are equal on both sides (x/ and x/) cannot be told
// from a directory and are kept, unless a rename or copy header shows them;
// ParsePatchReadings returns the reading without them too. Note that git
// apply, which strips one component by default, applies a --no-prefix
// patch of "a/x" to "x"; this reports "a/x", the path the diff was made
// from. Names that start with a
// known prefix pair but match no rule, such as those of git diff
// --no-index between two directories, are a *SyntaxError.
//
// # Names in plain diffs
//
// A plain section is a "---" line, a "+++" line and a hunk header. A name
// ends at a tab (diff -u writes a timestamp after it), at the tab after
// which only dates and labels follow when it has several (old GNU diff did
// not quote tabs in names), or, with no tab at all, before a date or svn
// label that ends the line after spaces (a tab expanded by a mailer). A
// C-quoted name ends at its quote. Then:
//
//   - equal names are the path (diff -u f f, svn and cvs patches), as
//     patch -p0 applies them;
//   - names that are equal after removing their first component are that
//     rest, as patch -p1 would apply them: diff -ruN old new gives
//     "old/sub/x" and "new/sub/x", which is "sub/x";
//   - otherwise the new name is the path, as patch -p0 would apply
//     diff -u f.orig f;
//   - a /dev/null side is an addition or deletion. The other name is the
//     path as the "diff …" command line before it ends with it (cvs, hg),
//     else with its first component removed after a "diff -r…" line, else
//     with the -p level the other plain sections of the patch show (a
//     quilt patch may start with a new file). A name with a directory in a
//     patch without such sections, or with sections of both levels, is a
//     *SyntaxError: "b/y" may be b/y or y;
//   - a side whose timestamp is the Unix epoch, or svn's "(nonexistent)",
//     is a file that did not exist: the section is an addition or deletion;
//   - "Binary files X and Y differ" is a modification of the path the same
//     rules give for X and Y; hg's "Binary file X has changed" names X.
//
// Files that diff -r reports only as "Only in dir: name" are not part of
// the patch and are not returned; use diff -N to include them.
//
// Every path goes through Normalize, so a bad path is a wrapped *PathError.
// A malformed file section or hunk is a *SyntaxError with its line number,
// and so is input that has text but no file section at all, so that a
// caller never takes "not a diff" for "changes nothing". Empty or blank
// input gives no changes and no error. An error from r is returned wrapped.
func ParsePatch(r io.Reader) ([]Change, error) {
	changes, _, err := ParsePatchReadings(r)
	return changes, err
}

// Reading is the second way to read an ambiguous patch (see
// ParsePatchReadings): Changes with Prefix removed from the paths that the
// first reading takes as written.
type Reading struct {
	Prefix  string // the first component and "/", such as "x/"
	Changes []Change
}

// ParsePatchReadings is ParsePatch, and also returns the other way to read
// a patch whose prefix cannot be told from a directory. git diff
// --src-prefix=x/ --dst-prefix=x/ writes "diff --git x/src/f x/src/f" for
// src/f, exactly what --no-prefix writes for a file at x/src/f; git apply,
// which removes one component by default, applies it to src/f. A patch is
// read both ways when every name it reads as written (rule 1 of git
// sections, and plain sections applied as patch -p0 applies them) has a
// directory, all of them the same first component D, and no other section
// pins the prefixes: no git section with known or custom prefixes, and no
// rename or copy whose headers show the prefix to be empty. Then changes
// is the patch read as written and alt the same patch with "D/" removed
// from those names; else alt is nil. When the renames and copies all show
// the prefix to be "D/", the patch is not ambiguous: changes is that
// reading and alt is nil.
//
// A caller that judges paths must judge both readings and refuse the patch
// when they differ, unless the repository the patch is for rules one out
// (a reading that modifies a file the repository does not have).
func ParsePatchReadings(r io.Reader) (changes []Change, alt *Reading, err error) {
	p := &patchParser{lr: lineReader{br: bufio.NewReaderSize(r, 64<<10)}, votes: map[pair]int{}}
	err = p.parse()
	if p.lr.err != nil {
		// A failed read can look like a truncated patch; report the cause.
		return nil, nil, fmt.Errorf("diffpath: reading patch: %w", p.lr.err)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(p.items) == 0 && p.text {
		// Fail closed: "nothing changed" must not be the answer for
		// input that is not a diff at all.
		return nil, nil, p.syntax(p.lr.n, "no file changes found; want unified diff output (colored output, --line-prefix and context diffs are not understood)")
	}
	return p.finish()
}

type patchParser struct {
	lr lineReader
	// items are the file sections in input order; some are decided only
	// at the end, when every section has been seen (see finish).
	items []item
	// text records that the input had a line that was not blank.
	text bool
	// p0, p1 are the first lines of plain sections whose two names showed
	// that the diff is applied with patch -p0 or -p1; /dev/null sections
	// of the same patch follow them.
	p0, p1 int
	// votes counts, over the git sections whose names differ by custom
	// prefixes, how many allow each (source, destination) prefix pair.
	votes map[pair]int
	// pinned records a git section read by a known or custom prefix pair:
	// the patch has prefixes that differ, so names read as written are
	// not a hidden equal prefix (see ParsePatchReadings).
	pinned bool
}

// item is one file section's Change. A plain /dev/null section leaves
// Path empty and sets plain to the name it gives; a git section with custom
// prefixes sets custom to the path each possible prefix pair leaves.
type item struct {
	c      Change
	line   int
	plain  string
	custom map[pair]string
	header string // the "diff --git" names, for custom's error
	// asWritten marks a path read as written although it may begin with
	// a prefix equal on both sides (see ParsePatchReadings).
	asWritten bool
	// prefixes are the (source, destination) prefix pairs that a rename
	// or copy's "diff --git" line allows around its headers' names.
	prefixes map[pair]bool
}

func (p *patchParser) add(c Change) { p.items = append(p.items, item{c: c}) }

// finish decides the sections left open, normalizes every path and drops
// duplicates. It returns the second reading of an ambiguous patch too (see
// ParsePatchReadings).
func (p *patchParser) finish() (changes []Change, alt *Reading, err error) {
	all := make([]Change, len(p.items))
	for i, it := range p.items {
		c := it.c
		switch {
		case it.custom != nil:
			c.Path, err = p.customPath(it)
		case it.plain != "":
			c.Path, err = p.devNullPath(it)
			// Read as patch -p0 reads it, as the sections before do.
			it.asWritten = p.p1 == 0
			p.items[i].asWritten = it.asWritten
		}
		if err != nil {
			return nil, nil, err
		}
		all[i] = c
	}
	dir, asWritten, strip := p.hiddenPrefix(all)
	if dir == "" || !strip {
		return dedup(all), nil, nil
	}
	stripped := make([]Change, len(all))
	for i, c := range all {
		if p.items[i].asWritten {
			c.Path = c.Path[len(dir)+1:]
		}
		stripped[i] = c
	}
	if !asWritten {
		return dedup(stripped), nil, nil
	}
	return dedup(all), &Reading{Prefix: dir + "/", Changes: dedup(stripped)}, nil
}

// hiddenPrefix returns the first component that every path read as
// written begins with, when each of them has more than one component and
// no git section pins the prefixes, else "". asWritten and strip report
// whether the renames and copies of the patch allow no prefix, and dir+"/"
// on both sides.
func (p *patchParser) hiddenPrefix(all []Change) (dir string, asWritten, strip bool) {
	if p.pinned {
		return "", false, false
	}
	for i, it := range p.items {
		if !it.asWritten {
			continue
		}
		d, _, ok := strings.Cut(all[i].Path, "/")
		if !ok || dir != "" && d != dir {
			return "", false, false
		}
		dir = d
	}
	asWritten, strip = true, true
	for _, it := range p.items {
		if it.prefixes != nil {
			asWritten = asWritten && it.prefixes[pair{}]
			strip = strip && it.prefixes[pair{dir + "/", dir + "/"}]
		}
	}
	return dir, asWritten, strip
}

func dedup(cs []Change) []Change {
	var out []Change
	seen := make(map[Change]struct{}, len(cs))
	for _, c := range cs {
		if _, dup := seen[c]; !dup {
			seen[c] = struct{}{}
			out = append(out, c)
		}
	}
	return out
}

// customPath picks the prefix pair that the most git sections of the patch
// allow: a patch made by one git diff has one pair, and files whose names
// begin differently (x/src/a and x/tool) leave only the real one common to
// all. A file whose pair is not so singled out (a one-file patch of
// x/v1/f y/v1/f, where the prefixes may be x/ and y/ or x/v1/ and y/v1/)
// is refused rather than guessed.
func (p *patchParser) customPath(it item) (string, error) {
	best, n := "", 0
	max := 0
	for pp, path := range it.custom {
		switch v := p.votes[pp]; {
		case v > max:
			max, best, n = v, path, 1
		case v == max:
			n++
		}
	}
	if n != 1 || best == "" {
		return "", p.syntax(it.line, "cannot tell where the custom prefixes end in \"diff --git %s\"; write the patch with git's default a/ b/ prefixes or --no-prefix", it.header)
	}
	return p.normalize(it.line, best)
}

// devNullPath decides the path of a plain section with a /dev/null side
// from the other plain sections: patch -p1 removes the first component,
// -p0 nothing. A name without a "/" has nothing to remove.
func (p *patchParser) devNullPath(it item) (string, error) {
	name := it.plain
	switch {
	case p.p0 != 0 && p.p1 != 0:
		return "", p.syntax(it.line, "cannot tell the path of %q: the sections at lines %d and %d apply with different patch -p levels", name, p.p0, p.p1)
	case p.p1 != 0:
		rest, ok := cutFirst(name)
		if !ok {
			return "", p.syntax(it.line, "cannot remove the first component of %q as the section at line %d needs", name, p.p1)
		}
		return p.normalize(it.line, rest)
	case p.p0 != 0 || strings.IndexByte(name, '/') < 0:
		return p.normalize(it.line, name)
	}
	return "", p.syntax(it.line, "cannot tell whether %q starts with a directory prefix to remove: no other section of this diff names its file on both sides (use git diff, or diff -ruN on two directories)", name)
}

// syntax is a SyntaxError at line. Strings and errors in args come from the
// input, and are shortened: a name megabytes long is never echoed whole.
func (p *patchParser) syntax(line int, format string, args ...any) error {
	for i, v := range args {
		switch v := v.(type) {
		case string:
			args[i] = safetext.Shorten(v)
		case error:
			args[i] = safetext.Shorten(v.Error())
		}
	}
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
	diffCmd := "" // a "diff -r …" line just before, else ""
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
		prevCmd := diffCmd
		diffCmd = ""
		var err error
		switch {
		case strings.HasPrefix(h, "diff --git "):
			err = p.gitSection(line, h[len("diff --git "):])
		case strings.HasPrefix(h, "diff --cc "):
			err = p.combinedSection(line, h[len("diff --cc "):])
		case strings.HasPrefix(h, "diff --combined "):
			err = p.combinedSection(line, h[len("diff --combined "):])
		case strings.HasPrefix(h, "--- ") && p.plainHeaderFollows():
			err = p.plainSection(line, h[len("--- "):], prevCmd, "")
		case isBinaryLine(h):
			// Old git printed "Binary files differ" without names,
			// but always inside a git section.
			if names, ok := binaryNames(h); ok {
				err = p.plainBinary(line, names, prevCmd)
			}
		case strings.HasPrefix(h, "* Unmerged path "):
			err = p.named(line, 'U', h[len("* Unmerged path "):])
		case strings.HasPrefix(h, "Index: ") && p.ruleFollows('='):
			err = p.indexSection(line, h[len("Index: "):])
		case strings.HasPrefix(h, "Property changes on: ") && p.ruleFollows('_'):
			// svn: a change of properties only (svn:executable, …).
			p.lr.next()
			err = p.named(line, 'M', h[len("Property changes on: "):])
		case len(h) > len("Binary file  has changed") && strings.HasPrefix(h, "Binary file ") && strings.HasSuffix(h, " has changed"):
			// hg without --git: the name is the repository path. The
			// length test keeps "Binary file has changed", where prefix
			// and suffix overlap, from slicing out of range.
			err = p.named(line, 'M', h[len("Binary file "):len(h)-len(" has changed")])
		case strings.HasPrefix(h, "Submodule "):
			err = p.submodule(line, h)
		case strings.HasPrefix(h, "*** ") && p.contextHeaderFollows():
			err = p.syntax(line, "context diff (diff -c) found; only unified diffs are understood (diff -u)")
		case strings.HasPrefix(h, "diff "):
			// GNU diff -r names each file pair on a "diff -ruN x y"
			// line, hg on "diff -r REV path"; remember it for the
			// section that follows.
			diffCmd = h
		}
		if err != nil {
			return err
		}
	}
}

// named adds a Change for a header that names one repository path as it
// is, without prefix: "* Unmerged path", svn "Property changes on:", hg
// "Binary file … has changed", git "Submodule …".
func (p *patchParser) named(line int, st byte, name string) error {
	path, err := p.normalize(line, name)
	if err != nil {
		return err
	}
	p.add(Change{Status: st, Path: path})
	return nil
}

// ruleFollows reports whether the next line is a rule of c characters, as
// svn and cvs print under "Index:" ('=') and "Property changes on:" ('_').
func (p *patchParser) ruleFollows(c byte) bool {
	next, ok := p.lr.peek(0)
	next = bytes.TrimRight(next, "\r")
	return ok && len(next) >= 10 && len(bytes.Trim(next, string(c))) == 0
}

// contextHeaderFollows reports a context diff's "*** name" "--- name"
// "***************" header, so that such a section is refused, not skipped.
func (p *patchParser) contextHeaderFollows() bool {
	minus, ok1 := p.lr.peek(0)
	stars, ok2 := p.lr.peek(1)
	return ok1 && ok2 && bytes.HasPrefix(minus, []byte("--- ")) && bytes.HasPrefix(stars, []byte("***************"))
}

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

// submodule reads git's --submodule=log and =diff headers, which replace
// the section of a submodule whose commit changed:
//
//	Submodule path 1234567..89abcde:
//	Submodule path 1234567...89abcde (rewind):
//	Submodule path 0000000...89abcde (new submodule)
//	Submodule path contains modified content
//
// The path is printed as it is, unquoted, so it is what precedes the
// commit range.
func (p *patchParser) submodule(line int, h string) error {
	rest := h[len("Submodule "):]
	for _, suf := range []string{" contains modified content", " contains untracked content"} {
		if name, ok := strings.CutSuffix(rest, suf); ok {
			return p.named(line, 'M', name)
		}
	}
	st := byte('M')
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		switch rest[i+2 : len(rest)-1] {
		case "new submodule":
			st = 'A'
		case "submodule deleted":
			st = 'D'
		}
		rest = rest[:i]
	} else if !strings.HasSuffix(rest, ":") {
		return nil // prose, not git's header
	} else {
		rest = strings.TrimSuffix(strings.TrimSuffix(rest, ":"), " (rewind)")
	}
	sp := strings.LastIndexByte(rest, ' ')
	if sp <= 0 || !isCommitRange(rest[sp+1:]) {
		return nil // prose that starts with "Submodule"
	}
	return p.named(line, st, rest[:sp])
}

// isCommitRange reports "abc1234..def5678" or "abc1234...def5678".
func isCommitRange(s string) bool {
	a, b, ok := strings.Cut(s, "..")
	b = strings.TrimPrefix(b, ".")
	return ok && isAbbrev(a) && isAbbrev(b)
}

func isAbbrev(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
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
		// The names on the "diff --git" line are the prefixes and these
		// paths: evidence for the prefixes of the patch's other files.
		voted := map[pair]bool{}
		for _, c := range splitGitLine(rest) {
			if strings.HasSuffix(c.a, *from) && strings.HasSuffix(c.b, *to) {
				voted[pair{c.a[:len(c.a)-len(*from)], c.b[:len(c.b)-len(*to)]}] = true
			}
		}
		for pp := range voted {
			p.votes[pp]++
		}
		p.items = append(p.items, item{c: Change{Status: kind, Score: g.score, Path: path, OldPath: old}, prefixes: voted})
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

	var cands []pair
	if g.minus != nil && !g.minusNull && g.plus != nil && !g.plusNull {
		// Both sides named exactly: no need for the ambiguous line.
		cands = []pair{{*g.minus, *g.plus}}
	} else {
		// A side known exactly from "---"/"+++" picks the split.
		for _, c := range splitGitLine(rest) {
			if (g.minus == nil || g.minusNull || c.a == *g.minus) && (g.plus == nil || g.plusNull || c.b == *g.plus) {
				cands = append(cands, c)
			}
		}
	}
	if name, equal, ok := samePath(cands...); ok {
		if err := p.named(line, st, name); err != nil {
			return err
		}
		p.items[len(p.items)-1].asWritten = equal
		p.pinned = p.pinned || !equal
		return nil
	}
	p.pinned = true
	custom := customPrefixes(cands)
	if len(custom) == 0 || slices.ContainsFunc(cands, knownPrefixed) {
		if g.minus != nil && !g.minusNull && g.plus != nil && !g.plusNull {
			return p.syntax(g.minusLine, "file names %q and %q do not name the same path and there is no rename or copy header (a git diff --no-index of two directories?)", *g.minus, *g.plus)
		}
		return p.syntax(line, "cannot tell the file name from \"diff --git %s\"", rest)
	}
	for pp := range custom {
		p.votes[pp]++
	}
	p.items = append(p.items, item{c: Change{Status: st}, line: line, custom: custom, header: rest})
	return nil
}

// combinedSection parses "diff --cc path" or "diff --combined path", git's
// combined diff of a merge (git show, git diff during a conflict). The path
// carries no prefix. With --combined-all-paths there is one "---" line per
// parent, naming the file as that parent had it: a parent's other name is
// a rename source and is returned too.
func (p *patchParser) combinedSection(line int, rest string) error {
	name, err := headerName(rest)
	if err != nil {
		return p.syntax(line, "bad name in combined diff header: %v", err)
	}
	path, err := p.normalize(line, *name)
	if err != nil {
		return err
	}
	st := byte('M')
	var olds []string
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
			at := p.lr.n + 1
			var minus []string
			for i := 0; i < n; i++ {
				raw, _ := p.lr.next()
				minus = append(minus, trimCR(raw)[len("--- "):])
			}
			raw, _ := p.lr.next()
			if n > 1 {
				if olds, err = p.combinedSources(at, *name, path, minus, trimCR(raw)[len("+++ "):]); err != nil {
					return err
				}
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
	if len(olds) == 0 {
		p.add(Change{Status: st, Path: path})
	}
	for _, old := range olds {
		p.add(Change{Status: 'R', Path: path, OldPath: old})
	}
	return nil
}

// combinedSources returns the parents' names for the file that differ
// from name, the path of the merge result, given the --combined-all-paths
// "---" lines (from line at) and the "+++" line. The "+++" name is the
// destination prefix and name; the source prefix is the one a parent that
// kept the name shows, else the one paired with the destination prefix.
func (p *patchParser) combinedSources(at int, name, path string, minus []string, plus string) ([]string, error) {
	dst, dstNull, err := gitName(plus)
	if err != nil || dstNull {
		return nil, p.syntax(at+len(minus), "bad name in \"+++ %s\" of a combined diff", plus)
	}
	q, ok := strings.CutSuffix(*dst, name)
	if !ok {
		return nil, p.syntax(at+len(minus), "\"+++ %s\" does not name %q", plus, name)
	}
	names := make([]string, len(minus))
	src, known := "", false
	for i, m := range minus {
		n, _, err := gitName(m)
		if err != nil {
			return nil, p.syntax(at+i, "bad name in \"--- %s\": %v", m, err)
		}
		names[i] = *n
		if s, ok := strings.CutSuffix(*n, name); ok && !known {
			src, known = s, true
		}
	}
	if !known {
		switch q {
		case "":
			known = true
		case "b/":
			src, known = "a/", true
		}
	}
	if !known {
		return nil, p.syntax(at, "cannot tell the source prefix of the renamed %q in a combined diff; write it with git's default a/ b/ prefixes or --no-prefix", name)
	}
	var olds []string
	for i, n := range names {
		if n == "/dev/null" {
			continue
		}
		rest, ok := strings.CutPrefix(n, src)
		if !ok {
			return nil, p.syntax(at+i, "%q does not start with the prefix %q of the other names", n, src)
		}
		old, err := p.normalize(at+i, rest)
		if err != nil {
			return nil, err
		}
		if old != path && !slices.Contains(olds, old) {
			olds = append(olds, old)
		}
	}
	return olds, nil
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

// quotedOrRest is a whole name: a C-quoted one with nothing after its
// quote, or a non-empty one as it is.
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

// samePath returns the path that a pair of names both denote by the first
// two rules of ParsePatch: equal names (then equal is true), or a known
// prefix pair.
func samePath(cands ...pair) (path string, equal, ok bool) {
	for _, c := range cands {
		if c.a == c.b {
			return c.a, true, true
		}
	}
	for _, c := range cands {
		for _, kp := range knownPrefixes {
			for _, sd := range [2][2]string{kp, {kp[1], kp[0]}} {
				ra, okA := strings.CutPrefix(c.a, sd[0])
				rb, okB := strings.CutPrefix(c.b, sd[1])
				if okA && okB && ra == rb && ra != "" {
					return ra, false, true
				}
			}
		}
	}
	return "", false, false
}

// knownPrefixed reports names that start with a known prefix pair: they
// are not read as custom prefixes, so that a/dA/x b/dB/x (git diff
// --no-index of two directories) is refused, not taken for prefixes
// a/dA/ and b/dB/.
func knownPrefixed(c pair) bool {
	for _, kp := range knownPrefixes {
		if strings.HasPrefix(c.a, kp[0]) && strings.HasPrefix(c.b, kp[1]) ||
			strings.HasPrefix(c.a, kp[1]) && strings.HasPrefix(c.b, kp[0]) {
			return true
		}
	}
	return false
}

// customPrefixes returns every way to read names that differ as custom
// prefixes followed by one path: each (source, destination) prefix pair
// and the path it leaves, a non-empty common ending that does not start
// with "/". git's --src-prefix and --dst-prefix need not end in "/", so
// "asub/x" "bsub/x" may be sub/x (prefixes a, b) as well as x (asub/,
// bsub/). A pair that leaves different paths for different splits of the
// "diff --git" line maps to "".
func customPrefixes(cands []pair) map[pair]string {
	m := map[pair]string{}
	for _, c := range cands {
		n := 0
		for n < len(c.a) && n < len(c.b) && c.a[len(c.a)-1-n] == c.b[len(c.b)-1-n] {
			n++
		}
		if n == len(c.a) || n == len(c.b) {
			continue // one name ends the other: an empty prefix
		}
		for k := 1; k <= n; k++ {
			path := c.a[len(c.a)-k:]
			if path[0] == '/' {
				continue
			}
			pp := pair{c.a[:len(c.a)-k], c.b[:len(c.b)-k]}
			if old, ok := m[pp]; ok && old != path {
				path = ""
			}
			m[pp] = path
		}
	}
	return m
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
		line, err := l.readLine()
		if err != nil {
			l.eof = true
			if !errors.Is(err, io.EOF) {
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

// MaxLineBytes bounds one line of a patch: a longer one (no diff has
// one; a minified file's line is far shorter) is an error rather than
// memory without end.
const MaxLineBytes = 64 << 20

// readLine is bufio.Reader.ReadBytes('\n') with MaxLineBytes enforced.
func (l *lineReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxLineBytes {
			return nil, fmt.Errorf("line %d is longer than %d MiB", l.n+len(l.q)+1, MaxLineBytes>>20)
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
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
