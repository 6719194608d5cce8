package pathmatch

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// PatternError reports a pattern that doublestar.ValidatePattern refuses.
type PatternError struct {
	Index   int    // position in the list given to NewMatcher
	Pattern string // the pattern as given
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("invalid pattern %q (unclosed [ or {, or a trailing \\)", e.Pattern)
}

// Unwrap lets errors.Is(err, doublestar.ErrBadPattern) hold.
func (e *PatternError) Unwrap() error { return doublestar.ErrBadPattern }

// Naive returns a copy of m that calls doublestar.Match for every pattern:
// the reference the fast paths are tested and benchmarked against.
func (m *Matcher) Naive() *Matcher {
	if m == nil {
		return nil
	}
	c := *m
	c.naive = true
	return &c
}

// Matcher matches paths against a fixed list of doublestar patterns.
//
// For every pattern p and path s, the Matcher reports a match exactly when
// doublestar.Match(p, s) returns (true, nil); with ignoreCase, exactly when
// doublestar.Match(lockkey.Folded(p), lockkey.Folded(s)) does.
//
// Patterns are sorted at construction into shapes that need little work per
// path:
//
//	a/b.txt                 exact   one map lookup of the whole path
//	dir/**  **              dir     one map lookup per ancestor directory
//	**/name  d/**/name      tail    one map lookup per path suffix that starts a segment
//	**/testdata/**          seg     one map lookup per segment
//	*.ext  d/t*.sql         shallow one map lookup of the directory
//	**/*.ext  d/**/t*.py    deep    one map lookup per distinct suffix length
//
// A brace group with plain alternatives after a literal prefix
// (src/{api,web}/**) is expanded first, and each alternative is sorted on its
// own. Everything else (?, [...], \, several * in a name, ...) is "hard": it
// goes through doublestar.Match, but only for paths that start with the
// pattern's literal prefix.
//
// A Matcher is immutable and safe for concurrent use; a nil or zero
// Matcher matches nothing.
type Matcher struct {
	patterns   []string // as given, for callers that report them
	ignoreCase bool
	naive      bool // tests and benchmarks only: doublestar.Match for every pattern

	lowered []string // patterns as matched (lowercased with ignoreCase)
	empty   []int    // patterns that match the empty path; odd enough to precompute

	always   []int            // "**"
	exact    map[string][]int // literal pattern -> indices
	dirs     map[string][]int // "P/**" keyed by P
	dirLens  lengthSet        // len(P) of every dirs key, to skip hopeless lookups
	tails    map[string][]preEntry
	tailLens lengthSet
	segs     map[string][]preEntry // "pre**/D/**" keyed by D
	segLens  lengthSet
	segMax   int                       // longest D: bounds the scan for Ds that span segments
	shallow  map[string][]shallowEntry // "pre H*L" keyed by pre
	deep     map[string][]deepEntry    // "pre**/H*L" keyed by L
	sufLens  []int                     // distinct lengths of deep's keys, ascending
	hard     []hardEntry
}

// preEntry is a pattern "pre**/L" (tail) indexed by L, or "pre**/D/**"
// (seg) indexed by D; pre is "" or ends in "/".
type preEntry struct {
	pre string
	idx int
}

// shallowEntry is a pattern "pre H*L" indexed by pre: the name's directory
// is pre and its base name starts with H and ends with L.
type shallowEntry struct {
	head, tail string
	idx        int
}

// deepEntry is a pattern "pre**/H*L" indexed by L.
type deepEntry struct {
	pre, head string
	idx       int
}

// hardEntry is a pattern left to doublestar.Match; prefix is a literal every
// matching path starts with. Policies repeat patterns (each profile allows
// **/testdata/**), so equal patterns share one entry and one Match call.
type hardEntry struct {
	pattern string
	prefix  string
	idxs    []int
}

// lengthSet is a set of small ints; lengths of 256 and more all share one bit.
type lengthSet struct {
	small [4]uint64
	long  bool
}

func (s *lengthSet) add(n int) {
	if n < 256 {
		s.small[n>>6] |= 1 << (n & 63)
		return
	}
	s.long = true
}

func (s *lengthSet) has(n int) bool {
	if n < 256 {
		return s.small[n>>6]&(1<<(n&63)) != 0
	}
	return s.long
}

// NewMatcher compiles patterns. It fails with a *PatternError for the first
// pattern doublestar.ValidatePattern refuses. With ignoreCase, patterns and
// paths are compared folded as lock keys are (lockkey.Folded: Unicode case
// folding and normal form, core.ignorecase), so that a policy and the
// locks agree on which spellings are one file.
func NewMatcher(patterns []string, ignoreCase bool) (*Matcher, error) {
	m := &Matcher{
		patterns:   slices.Clone(patterns),
		ignoreCase: ignoreCase,
		lowered:    make([]string, len(patterns)),
		exact:      map[string][]int{},
		dirs:       map[string][]int{},
		tails:      map[string][]preEntry{},
		segs:       map[string][]preEntry{},
		shallow:    map[string][]shallowEntry{},
		deep:       map[string][]deepEntry{},
	}
	sufLens := map[int]bool{}
	hard := map[string]int{} // pattern -> index into m.hard
	for i, p := range patterns {
		if ignoreCase {
			p = lockkey.Folded(p)
		}
		// Validate both forms: folding cannot change validity today, but
		// the matcher relies on it, so do not assume it.
		if !doublestar.ValidatePattern(patterns[i]) || !doublestar.ValidatePattern(p) {
			return nil, &PatternError{Index: i, Pattern: patterns[i]}
		}
		m.lowered[i] = p
		if ok, err := doublestar.Match(p, ""); ok && err == nil {
			m.empty = append(m.empty, i)
		}
		alts := expandBraces(p, maxExpansions)
		if alts == nil {
			alts = []string{p}
		}
		for _, a := range alts {
			m.add(a, i, sufLens, hard)
		}
	}
	for n := range sufLens {
		m.sufLens = append(m.sufLens, n)
	}
	slices.Sort(m.sufLens)
	return m, nil
}

// maxExpansions bounds the patterns one brace pattern may expand into;
// beyond it the pattern stays hard.
const maxExpansions = 64

// add indexes pattern p (already lowercased and expanded) as pattern idx.
func (m *Matcher) add(p string, idx int, sufLens map[int]bool, hard map[string]int) {
	sh := classify(p)
	switch sh.kind {
	case shapeExact:
		m.exact[p] = append(m.exact[p], idx)
	case shapeAll:
		m.always = append(m.always, idx)
	case shapeDir:
		m.dirs[sh.pre] = append(m.dirs[sh.pre], idx)
		m.dirLens.add(len(sh.pre))
	case shapeTail:
		m.tails[sh.lit] = append(m.tails[sh.lit], preEntry{pre: sh.pre, idx: idx})
		m.tailLens.add(len(sh.lit))
	case shapeSeg:
		m.segs[sh.lit] = append(m.segs[sh.lit], preEntry{pre: sh.pre, idx: idx})
		m.segLens.add(len(sh.lit))
		m.segMax = max(m.segMax, len(sh.lit))
	case shapeShallow:
		m.shallow[sh.pre] = append(m.shallow[sh.pre], shallowEntry{head: sh.head, tail: sh.lit, idx: idx})
	case shapeDeep:
		m.deep[sh.lit] = append(m.deep[sh.lit], deepEntry{pre: sh.pre, head: sh.head, idx: idx})
		sufLens[len(sh.lit)] = true
	default:
		if j, ok := hard[p]; ok {
			m.hard[j].idxs = append(m.hard[j].idxs, idx)
			return
		}
		hard[p] = len(m.hard)
		m.hard = append(m.hard, hardEntry{pattern: p, prefix: sh.pre, idxs: []int{idx}})
	}
}

// Len returns the number of patterns.
func (m *Matcher) Len() int {
	if m == nil {
		return 0
	}
	return len(m.patterns)
}

// Pattern returns pattern i as given to NewMatcher.
func (m *Matcher) Pattern(i int) string { return m.patterns[i] }

// Match reports whether any pattern matches path, and the index of the first
// one in the order given to NewMatcher.
func (m *Matcher) Match(path string) (index int, ok bool) {
	var buf [16]int
	got := m.appendMatches(buf[:0], path)
	if len(got) == 0 {
		return -1, false
	}
	return slices.Min(got), true
}

// MatchAll calls fn with the index of every pattern that matches path, in
// ascending order, once each.
func (m *Matcher) MatchAll(path string, fn func(index int)) {
	var buf [16]int
	got := m.appendMatches(buf[:0], path)
	sortSmall(got)
	for j, i := range got {
		if j == 0 || i != got[j-1] { // expanded alternatives may match twice
			fn(i)
		}
	}
}

// MatchedAny reports, per pattern, whether it matches at least one of
// paths: which pattern locks a change set touches.
func (m *Matcher) MatchedAny(paths []string) []bool {
	hit := make([]bool, m.Len())
	var buf []int
	for _, p := range paths {
		buf = m.AppendMatches(buf[:0], p)
		for _, i := range buf {
			hit[i] = true
		}
	}
	return hit
}

// AppendMatches appends the index of every pattern matching path to dst,
// ascending and each once; reusing dst, it does not allocate.
func (m *Matcher) AppendMatches(dst []int, path string) []int {
	start := len(dst)
	dst = m.appendMatches(dst, path)
	got := dst[start:]
	sortSmall(got)
	out := dst[:start]
	for j, i := range got {
		if j == 0 || i != got[j-1] { // expanded alternatives may match twice
			out = append(out, i)
		}
	}
	return out
}

// appendMatches appends the indices of all patterns matching path to dst,
// in no particular order. An index appears once per alternative of its
// pattern that matches: a pattern without braces lives in exactly one index
// structure, and each structure can match it at most once per path.
func (m *Matcher) appendMatches(dst []int, name string) []int {
	if m == nil {
		return dst
	}
	if m.ignoreCase {
		name = lockkey.Folded(name)
	}
	if name == "" {
		return append(dst, m.empty...)
	}
	if m.naive {
		for i, p := range m.lowered {
			if ok, err := doublestar.Match(p, name); ok && err == nil {
				dst = append(dst, i)
			}
		}
		return dst
	}
	dst = append(dst, m.always...)
	if len(m.exact) > 0 {
		dst = append(dst, m.exact[name]...)
	}

	// Positions of "/" in name: segment k starts at 0 or one past slash
	// k-1 and ends at slash k or the end of the name.
	var sl [32]int
	slashes := sl[:0]
	for i := 0; ; {
		j := strings.IndexByte(name[i:], '/')
		if j < 0 {
			break
		}
		slashes = append(slashes, i+j)
		i += j + 1
	}
	dst = m.appendDirs(dst, name, slashes)
	dst = m.appendTails(dst, name, slashes)
	dst = m.appendSegs(dst, name, slashes)
	parent := name[:segStart(slashes, len(slashes))]
	dst = m.appendLast(dst, name, parent, name[len(parent):])
	for _, h := range m.hard {
		if strings.HasPrefix(name, h.prefix) {
			if ok, err := doublestar.Match(h.pattern, name); ok && err == nil {
				dst = append(dst, h.idxs...)
			}
		}
	}
	return dst
}

// segStart returns where segment k of a name starts, given the positions
// of its slashes: at 0, or one past slash k-1.
func segStart(slashes []int, k int) int {
	if k == 0 {
		return 0
	}
	return slashes[k-1] + 1
}

// appendDirs appends the "P/**" patterns matching name: P itself and
// everything below it.
func (m *Matcher) appendDirs(dst []int, name string, slashes []int) []int {
	if len(m.dirs) == 0 {
		return dst
	}
	for _, i := range slashes {
		if m.dirLens.has(i) {
			dst = append(dst, m.dirs[name[:i]]...)
		}
	}
	if m.dirLens.has(len(name)) {
		dst = append(dst, m.dirs[name]...)
	}
	return dst
}

// appendTails appends the "pre**/L" patterns matching name: it starts
// with pre and L, starting at a segment boundary at or after pre, ends it.
func (m *Matcher) appendTails(dst []int, name string, slashes []int) []int {
	if len(m.tails) == 0 {
		return dst
	}
	for k := 0; k <= len(slashes); k++ {
		b := segStart(slashes, k)
		if b == len(name) || !m.tailLens.has(len(name)-b) {
			continue
		}
		for _, e := range m.tails[name[b:]] {
			if b >= len(e.pre) && strings.HasPrefix(name, e.pre) {
				dst = append(dst, e.idx)
			}
		}
	}
	return dst
}

// appendSegs appends the "pre**/D/**" patterns matching name: D, starting
// at a segment boundary at or after pre, ends at a "/" or at the end of
// the name.
func (m *Matcher) appendSegs(dst []int, name string, slashes []int) []int {
	if len(m.segs) == 0 {
		return dst
	}
	for k := 0; k <= len(slashes); k++ {
		b := segStart(slashes, k)
		for j := k; j <= len(slashes); j++ {
			e := len(name)
			if j < len(slashes) {
				e = slashes[j]
			}
			if e-b > m.segMax {
				break
			}
			if e == b || !m.segLens.has(e-b) {
				continue
			}
			for _, en := range m.segs[name[b:e]] {
				if b >= len(en.pre) && strings.HasPrefix(name, en.pre) {
					dst = append(dst, en.idx)
				}
			}
		}
	}
	return dst
}

// appendLast appends the patterns that match name by its last segment,
// base, in directory parent.
func (m *Matcher) appendLast(dst []int, name, parent, base string) []int {
	// "pre H*L": directly in pre, the name starts with H and ends in L.
	for _, e := range m.shallow[parent] {
		if len(base) >= len(e.head)+len(e.tail) && strings.HasPrefix(base, e.head) && strings.HasSuffix(base, e.tail) {
			dst = append(dst, e.idx)
		}
	}
	// "pre**/H*L": below pre at any depth, the last segment starts with
	// H and ends in L. L has no "/", so the name ending in L means the
	// last segment does; the rest after pre must not be empty.
	for _, n := range m.sufLens {
		if n > len(base) {
			break
		}
		for _, e := range m.deep[name[len(name)-n:]] {
			if len(base) >= len(e.head)+n && strings.HasPrefix(base, e.head) &&
				len(name) > len(e.pre) && strings.HasPrefix(name, e.pre) {
				dst = append(dst, e.idx)
			}
		}
	}
	return dst
}

// sortSmall sorts a short slice of indices; insertion sort beats the
// generic sort for the few matches a path usually has.
func sortSmall(a []int) {
	if len(a) > 12 {
		slices.Sort(a)
		return
	}
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

type shapeKind uint8

const (
	shapeHard    shapeKind = iota
	shapeExact             // literal
	shapeAll               // **
	shapeDir               // P/**           pre = P
	shapeTail              // pre**/L        L literal, may contain "/"
	shapeSeg               // pre**/D/**     D literal, may contain "/"
	shapeShallow           // pre H*L        H, L literal without "/"
	shapeDeep              // pre**/H*L      H, L literal without "/"
)

type shape struct {
	kind shapeKind
	pre  string // shapeDir: P; shapeHard: literal prefix of every match; else "" or ends in "/"
	head string // H of shapeShallow and shapeDeep
	lit  string
}

// metaChars are the bytes that make doublestar do more than compare runes.
const metaChars = `*?[{\`

// classify sorts a valid pattern into a shape. The fast shapes are only
// used where their meaning provably equals doublestar.Match's:
//
//   - the literal parts must be valid UTF-8 without U+FFFD, because
//     doublestar compares decoded runes and every invalid byte decodes to
//     U+FFFD, so "\xff" and "\xfe" would match each other there;
//   - no backslash anywhere: an escaped "\/" starts a segment for "**" but
//     does not count as "/" at the end of the path, so escapes stay hard.
func classify(p string) shape {
	mi := strings.IndexAny(p, metaChars)
	clean := utf8.ValidString(p) && !strings.ContainsRune(p, utf8.RuneError)
	if mi < 0 {
		if clean {
			return shape{kind: shapeExact, lit: p}
		}
		return shape{kind: shapeHard, pre: hardPrefix(p, len(p))}
	}
	if clean && !strings.ContainsRune(p, '\\') {
		pre := p[:strings.LastIndexByte(p[:mi], '/')+1]
		tail := p[len(pre):]
		switch {
		case tail == "**":
			if pre == "" {
				return shape{kind: shapeAll}
			}
			return shape{kind: shapeDir, pre: pre[:len(pre)-1]}
		case strings.HasPrefix(tail, "**/"):
			l := tail[3:]
			if l != "" && !strings.ContainsAny(l, metaChars) {
				return shape{kind: shapeTail, pre: pre, lit: l}
			}
			if d, ok := strings.CutSuffix(l, "/**"); ok && d != "" && !strings.ContainsAny(d, metaChars) {
				return shape{kind: shapeSeg, pre: pre, lit: d}
			}
			if h, t, ok := segmentStar(l); ok {
				return shape{kind: shapeDeep, pre: pre, head: h, lit: t}
			}
		default:
			if h, t, ok := segmentStar(tail); ok {
				return shape{kind: shapeShallow, pre: pre, head: h, lit: t}
			}
		}
	}
	return shape{kind: shapeHard, pre: hardPrefix(p, mi)}
}

// segmentStar splits a one-segment pattern "H*L" with exactly one star and
// no other meta character or "/".
func segmentStar(s string) (head, tail string, ok bool) {
	i := strings.IndexByte(s, '*')
	if i < 0 || strings.ContainsAny(s[:i], metaChars+"/") || strings.ContainsAny(s[i+1:], metaChars+"/") {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// expandBraces rewrites p = L{a,b,...}R into L a R, L b R, ... (and R's own
// groups in turn), or returns nil when p has no group it may expand.
//
// doublestar matches a group by trying p with each alternative in its place,
// from the state it had on reaching "{". The result equals matching each
// expansion on its own only when nothing before "{" can backtrack and no
// alternative can make a remainder of the pattern match the empty string, so
// a group is expanded only when
//
//   - L, the part before "{", has no meta character (nothing to backtrack);
//   - every alternative is non-empty and has no meta character and no "}";
//   - R has no "[" or "\": a character class can make doublestar return
//     ErrBadPattern (hence false) halfway through one alternative, which
//     would hide a later alternative that matches.
//
// FuzzMatcher checks the equivalence. Duplicate alternatives are dropped;
// more than max expansions give nil.
func expandBraces(p string, max int) []string {
	mi := strings.IndexAny(p, metaChars)
	if mi < 0 || p[mi] != '{' {
		return nil
	}
	end := strings.IndexByte(p[mi:], '}')
	if end < 0 {
		return nil
	}
	end += mi
	body, rest := p[mi+1:end], p[end+1:]
	if strings.ContainsAny(body, metaChars) || strings.ContainsAny(rest, "[\\") {
		return nil
	}
	var out []string
	for _, a := range strings.Split(body, ",") {
		if a == "" {
			return nil
		}
		e := p[:mi] + a + rest
		more := expandBraces(e, max)
		if more == nil {
			if strings.IndexByte(rest, '{') >= 0 {
				// R's group could not be expanded: keep the whole pattern
				// hard rather than reason about a half-expanded one.
				return nil
			}
			more = []string{e}
		}
		for _, x := range more {
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		if len(out) > max {
			return nil
		}
	}
	return out
}

// hardPrefix returns a literal that every path matching p starts with, given
// that p[:mi] has no meta characters. It drops a final "/" because "a/**"
// also matches "a", and it gives up on anything doublestar would not compare
// byte for byte.
func hardPrefix(p string, mi int) string {
	pre := p[:mi]
	if !utf8.ValidString(pre) || strings.ContainsRune(pre, utf8.RuneError) {
		return ""
	}
	return strings.TrimSuffix(pre, "/")
}
