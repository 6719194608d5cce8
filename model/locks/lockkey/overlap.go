package lockkey

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Bounds on the work of one pattern-vs-pattern comparison; beyond them
// Overlap falls back to a cruder (still conservative) test.
const (
	maxOverlapAlternatives = 64
	maxOverlapCells        = 1 << 20
)

// IsPattern reports whether a canonical key covers more than itself: a path
// pattern, or a logical key whose value has glob metacharacters (flag:billing/*,
// or an api path template such as api:GET /v1/users/{id}). A store must
// compare such a key with others through Overlap; any other key only
// overlaps itself and the patterns that cover it.
func IsPattern(key string) bool {
	if key == WorkflowKey || key == ClaimKey {
		return false
	}
	// Namespaces never contain metacharacters, so the whole key can be tested.
	return hasMeta(key)
}

// Overlap reports whether two canonical keys may name a common resource. It
// is conservative: when it cannot tell, it says true. It is symmetric and
// never panics, whatever the input.
//
// Equal keys overlap. Paths and patterns overlap each other when some path
// may match both; they never overlap a namespaced key. Namespaced keys
// overlap only within one namespace, by equality unless a value has glob
// metacharacters, in which case the values are compared like patterns with
// / as separator (api path templates {id} count as *). The reserved keys
// workflow and claim only overlap themselves.
func Overlap(a, b string) bool {
	if a == b {
		return true
	}
	if a == WorkflowKey || a == ClaimKey || b == WorkflowKey || b == ClaimKey {
		return false
	}
	nsA, va, okA := splitNS(a)
	nsB, vb, okB := splitNS(b)
	if okA != okB || nsA != nsB {
		return false
	}
	if nsA == BranchNamespace {
		return overlapBranch(a, b)
	}
	if !okA {
		return globOverlap(a, b)
	}
	if nsA == "api" {
		va, vb = templatesToStar(va), templatesToStar(vb)
	}
	return globOverlap(va, vb)
}

// templatesToStar turns OpenAPI path templates ({id}) into *, since
// /v1/users/{id} and /v1/users/42 may be the same endpoint.
func templatesToStar(v string) string {
	if !strings.Contains(v, "{") {
		return v
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(v, '{')
		if i < 0 {
			break
		}
		j := strings.IndexAny(v[i+1:], "{}")
		if j < 0 || v[i+1+j] != '}' {
			// Not a template; leave the brace to the pattern rules.
			b.WriteString(v[:i+1])
			v = v[i+1:]
			continue
		}
		b.WriteString(v[:i])
		b.WriteByte('*')
		v = v[i+1+j+1:]
	}
	b.WriteString(v)
	return b.String()
}

// globOverlap reports whether two slash-separated globs may match a common
// string.
func globOverlap(a, b string) bool {
	ma, mb := hasMeta(a), hasMeta(b)
	switch {
	case !ma && !mb:
		return a == b
	case ma && !mb:
		return matchOrTrue(a, b)
	case !ma && mb:
		return matchOrTrue(b, a)
	}
	if !doublestar.ValidatePattern(a) || !doublestar.ValidatePattern(b) {
		return true
	}
	if mayCrossSeparator(a) || mayCrossSeparator(b) {
		return prefixCompatible(a, b)
	}
	altsA, okA := expandBraces(a, maxOverlapAlternatives)
	altsB, okB := expandBraces(b, maxOverlapAlternatives)
	if !okA || !okB {
		return prefixCompatible(a, b)
	}
	splitA := make([][]string, len(altsA))
	cells := 0
	for i, x := range altsA {
		splitA[i] = strings.Split(x, "/")
		cells += len(splitA[i]) + 1
	}
	splitB := make([][]string, len(altsB))
	cellsB := 0
	for i, y := range altsB {
		splitB[i] = strings.Split(y, "/")
		cellsB += len(splitB[i]) + 1
	}
	if cells*cellsB > maxOverlapCells {
		return prefixCompatible(a, b)
	}
	for _, x := range splitA {
		for _, y := range splitB {
			if segmentsOverlap(x, y) {
				return true
			}
		}
	}
	return false
}

// matchOrTrue matches a literal against a glob; an invalid glob may match
// anything as far as we can tell.
func matchOrTrue(glob, literal string) bool {
	ok, err := doublestar.Match(glob, literal)
	return err != nil || ok
}

// mayCrossSeparator reports constructs that can match a '/' and so defeat
// the segment-wise comparison: escapes, and character classes that are
// negated, contain '/' or a range spanning it.
func mayCrossSeparator(s string) bool {
	if strings.ContainsRune(s, '\\') {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '[' {
			continue
		}
		end := classEnd(s, i)
		if end < 0 {
			return true
		}
		if classMayMatchSlash(s[i+1 : end]) {
			return true
		}
		i = end
	}
	return false
}

func classMayMatchSlash(class string) bool {
	if class == "" || class[0] == '!' || class[0] == '^' {
		return true
	}
	rs := []rune(class)
	for i := 0; i < len(rs); i++ {
		if rs[i] == '/' {
			return true
		}
		if i+2 < len(rs) && rs[i+1] == '-' {
			if rs[i] <= '/' && '/' <= rs[i+2] {
				return true
			}
			i += 2
		}
	}
	return false
}

// prefixCompatible is the crude test: every match of a glob starts with the
// glob's literal prefix, so two globs whose prefixes disagree are disjoint.
func prefixCompatible(a, b string) bool {
	pa, pb := literalPrefix(a, "*?[{\\"), literalPrefix(b, "*?[{\\")
	return strings.HasPrefix(pa, pb) || strings.HasPrefix(pb, pa)
}

func literalPrefix(s, meta string) string {
	if i := strings.IndexAny(s, meta); i >= 0 {
		return s[:i]
	}
	return s
}

// segmentsOverlap decides whether two brace-free patterns, split at '/',
// may match a common path. `**` matches any number of segments (zero
// included, as doublestar lets `a/**` match `a`); any other segment matches
// exactly one. cell (i, j) holds whether a[i:] and b[j:] may overlap.
func segmentsOverlap(a, b []string) bool {
	n, m := len(a), len(b)
	w := m + 1
	dp := make([]bool, (n+1)*w)
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			v := i == n && j == m
			if !v && i < n && a[i] == "**" {
				v = dp[(i+1)*w+j] || j < m && dp[i*w+j+1]
			}
			if !v && j < m && b[j] == "**" {
				v = dp[i*w+j+1] || i < n && dp[(i+1)*w+j]
			}
			if !v && i < n && j < m && a[i] != "**" && b[j] != "**" {
				v = dp[(i+1)*w+j+1] && segmentOverlap(a[i], b[j])
			}
			dp[i*w+j] = v
		}
	}
	return dp[0]
}

// segmentOverlap decides whether two single-segment globs may match a
// common segment: literals by equality, a literal against a glob by
// matching, two globs by their literal prefixes and suffixes (every match
// starts with the one and ends with the other); otherwise assume overlap.
func segmentOverlap(x, y string) bool {
	mx, my := hasMeta(x), hasMeta(y)
	switch {
	case !mx && !my:
		return x == y
	case mx && !my:
		return matchOrTrue(collapseStars(x), y)
	case !mx && my:
		return matchOrTrue(collapseStars(y), x)
	}
	px, py := literalPrefix(x, "*?["), literalPrefix(y, "*?[")
	if !strings.HasPrefix(px, py) && !strings.HasPrefix(py, px) {
		return false
	}
	sx, sy := literalSuffix(x), literalSuffix(y)
	return strings.HasSuffix(sx, sy) || strings.HasSuffix(sy, sx)
}

// collapseStars turns runs of stars inside a segment into one. Within a
// path such a run acts like *, but doublestar does not let a trailing run
// match nothing (d*** does not match d on its own, yet c/d***/* matches
// c/d/0), so matching a lone segment needs the plain *.
func collapseStars(seg string) string {
	for strings.Contains(seg, "**") {
		seg = strings.ReplaceAll(seg, "**", "*")
	}
	return seg
}

// literalSuffix is the text after the last metacharacter; ']' counts, so
// that a class's closing bracket ends the suffix.
func literalSuffix(s string) string {
	return s[strings.LastIndexAny(s, "*?[]")+1:]
}
