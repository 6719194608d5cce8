package diffpath

import (
	"slices"
	"strconv"
	"strings"
)

// The sections of git's patches: "diff --git" headers, their rename,
// copy and mode lines, and the names on them (see ParsePatch: Names in git
// patches).

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
