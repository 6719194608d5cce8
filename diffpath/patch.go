package diffpath

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

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

func isBinaryLine(h string) bool {
	return strings.HasPrefix(h, "Binary files ") && strings.HasSuffix(h, " differ")
}

// cutFirst removes the first path component, as patch -p1 does.
func cutFirst(s string) (string, bool) {
	i := strings.IndexByte(s, '/')
	if i < 0 || i == len(s)-1 {
		return "", false
	}
	return s[i+1:], true
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
