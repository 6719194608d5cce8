package pathmatch

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// refMatch is the definition the Matcher must agree with.
func refMatch(pattern, path string, ignoreCase bool) bool {
	if ignoreCase {
		pattern, path = lockkey.Folded(pattern), lockkey.Folded(path)
	}
	ok, err := doublestar.Match(pattern, path)
	return ok && err == nil
}

// checkAgainstDoublestar compares a Matcher over patterns with refMatch on
// one path: construction fails exactly for invalid patterns, and Match and
// MatchAll report exactly the patterns doublestar matches.
func checkAgainstDoublestar(t *testing.T, patterns []string, path string, ignoreCase bool) {
	t.Helper()
	m, err := NewMatcher(patterns, ignoreCase)
	invalid := -1
	for i, p := range patterns {
		if !doublestar.ValidatePattern(p) || (ignoreCase && !doublestar.ValidatePattern(lockkey.Folded(p))) {
			invalid = i
			break
		}
	}
	if invalid >= 0 {
		var pe *PatternError
		if !errors.As(err, &pe) || pe.Index != invalid || !errors.Is(err, doublestar.ErrBadPattern) {
			t.Fatalf("NewMatcher(%q) error = %v, want *PatternError at %d", patterns, err, invalid)
		}
		return
	}
	if err != nil {
		t.Fatalf("NewMatcher(%q) = %v", patterns, err)
	}
	var want []int
	for i, p := range patterns {
		if refMatch(p, path, ignoreCase) {
			want = append(want, i)
		}
	}
	var got []int
	m.MatchAll(path, func(i int) { got = append(got, i) })
	if !slices.Equal(got, want) {
		t.Fatalf("MatchAll(%q) over %q (ignoreCase=%v) = %v, doublestar says %v", path, patterns, ignoreCase, got, want)
	}
	i, ok := m.Match(path)
	if ok != (len(want) > 0) || ok && i != want[0] || !ok && i != -1 {
		t.Fatalf("Match(%q) over %q (ignoreCase=%v) = %d, %v; doublestar says %v", path, patterns, ignoreCase, i, ok, want)
	}
}

func TestMatcher(t *testing.T) {
	t.Parallel()
	patterns := []string{
		"DESIGN_DOCUMENT.md", // 0 exact
		"bridge/loop_pkg/**", // 1 dir
		"**/*.py",            // 2 deep suffix
		"docs/*.md",          // 3 shallow suffix
		"**/api.py",          // 4 tail
		"src/**/handlers/x",  // 5 tail with pre and "/"
		"src/{api,web}/**",   // 6 hard
		"tests/test_?.py",    // 7 hard
		"**",                 // 8 all
	}
	tests := []struct {
		name string
		path string
		want []int
	}{
		{name: "exact", path: "DESIGN_DOCUMENT.md", want: []int{0, 8}},
		{name: "exact is whole path", path: "x/DESIGN_DOCUMENT.md", want: []int{8}},
		{name: "dir itself", path: "bridge/loop_pkg", want: []int{1, 8}},
		{name: "dir child", path: "bridge/loop_pkg/a.py", want: []int{1, 2, 8}},
		{name: "dir sibling with same prefix", path: "bridge/loop_pkgx/a.txt", want: []int{8}},
		{name: "deep suffix at top", path: "setup.py", want: []int{2, 8}},
		{name: "shallow suffix", path: "docs/a.md", want: []int{3, 8}},
		{name: "shallow suffix is one level", path: "docs/x/a.md", want: []int{8}},
		{name: "tail basename", path: "lib/api.py", want: []int{2, 4, 8}},
		{name: "tail at top", path: "api.py", want: []int{2, 4, 8}},
		{name: "tail is whole segment", path: "lib/myapi.py", want: []int{2, 8}},
		{name: "tail with pre, zero dirs", path: "src/handlers/x", want: []int{5, 8}},
		{name: "tail with pre, deep", path: "src/a/b/handlers/x", want: []int{5, 8}},
		{name: "tail with pre, wrong pre", path: "lib/handlers/x", want: []int{8}},
		{name: "hard braces", path: "src/web/a.go", want: []int{6, 8}},
		{name: "hard braces and tail", path: "src/api/handlers/x", want: []int{5, 6, 8}},
		{name: "hard question mark", path: "tests/test_a.py", want: []int{2, 7, 8}},
		{name: "hard no match", path: "tests/test_ab.py", want: []int{2, 8}},
		{name: "empty path", path: "", want: []int{8}},
	}
	m, err := NewMatcher(patterns, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []int
			m.MatchAll(tt.path, func(i int) { got = append(got, i) })
			if !slices.Equal(got, tt.want) {
				t.Errorf("MatchAll(%q) = %v, want %v", tt.path, got, tt.want)
			}
			checkAgainstDoublestar(t, patterns, tt.path, false)
		})
	}
}

func TestMatcherIgnoreCase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		pattern    string
		path       string
		ignoreCase bool
		want       bool
	}{
		{name: "exact, case differs, sensitive", pattern: "DESIGN_DOCUMENT.md", path: "design_document.md", want: false},
		{name: "exact, case differs, ignored", pattern: "DESIGN_DOCUMENT.md", path: "design_document.MD", ignoreCase: true, want: true},
		{name: "dir, ignored", pattern: "Bridge/**", path: "bridge/Loop.py", ignoreCase: true, want: true},
		{name: "dir, sensitive", pattern: "Bridge/**", path: "bridge/Loop.py", want: false},
		{name: "suffix, ignored", pattern: "**/*.PY", path: "a/B.py", ignoreCase: true, want: true},
		{name: "hard, ignored", pattern: "src/[A-C]*.go", path: "SRC/b.GO", ignoreCase: true, want: true},
		{name: "non-ASCII, ignored", pattern: "docs/Été/**", path: "DOCS/éTÉ/a", ignoreCase: true, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := NewMatcher([]string{tt.pattern}, tt.ignoreCase)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.Match(tt.path); ok != tt.want {
				t.Errorf("Match(%q) with %q = %v, want %v", tt.path, tt.pattern, ok, tt.want)
			}
			checkAgainstDoublestar(t, []string{tt.pattern}, tt.path, tt.ignoreCase)
		})
	}
}

func TestNilMatcher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    *Matcher
	}{
		{name: "nil", m: nil},
		{name: "zero", m: &Matcher{}},
		{name: "no patterns", m: func() *Matcher { m, _ := NewMatcher(nil, true); return m }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, p := range []string{"", "a", "a/b"} {
				if i, ok := tt.m.Match(p); ok || i != -1 {
					t.Errorf("Match(%q) = %d, %v", p, i, ok)
				}
				tt.m.MatchAll(p, func(i int) { t.Errorf("MatchAll(%q) called fn(%d)", p, i) })
			}
			if tt.m.Len() != 0 {
				t.Errorf("Len() = %d", tt.m.Len())
			}
		})
	}
}

func TestNewMatcherInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		patterns []string
		index    int
	}{
		{name: "unclosed class", patterns: []string{"ok/**", "bad/[x"}, index: 1},
		{name: "unclosed brace", patterns: []string{"{a"}, index: 0},
		{name: "stray closing brace", patterns: []string{"a", "b", "a}"}, index: 2},
		{name: "trailing backslash", patterns: []string{`a\`}, index: 0},
		{name: "empty class", patterns: []string{"[]"}, index: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewMatcher(tt.patterns, false)
			var pe *PatternError
			if !errors.As(err, &pe) || pe.Index != tt.index || pe.Pattern != tt.patterns[tt.index] {
				t.Fatalf("NewMatcher(%q) = %v, want *PatternError at %d", tt.patterns, err, tt.index)
			}
			if !errors.Is(err, doublestar.ErrBadPattern) {
				t.Errorf("error %v does not wrap doublestar.ErrBadPattern", err)
			}
		})
	}
}

// TestMatcherEdgeCases pins the corners where a fast path could drift from
// doublestar; every case is checked against doublestar itself.
func TestMatcherEdgeCases(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("l", 300)
	tests := []struct {
		name     string
		patterns []string
		paths    []string
	}{
		{name: "dir matches itself and trailing slash", patterns: []string{"a/**", "/**", "a//**"}, paths: []string{"a", "a/", "ab", "a/b/c", "/", "/a", "a//", "a//b"}},
		{name: "doublestar alone and on empty", patterns: []string{"**", "**/", "**/*", "*", "/**/"}, paths: []string{"", "a", "a/", "/", "a/b"}},
		{name: "deep suffix needs a segment", patterns: []string{"a/**/*", "a/**/*.go", "**/*.go"}, paths: []string{"a", "a/", "a/x", "a/.go", ".go", "a/b/", "x/a/b.go", "a.go/x"}},
		{name: "tail with slashes", patterns: []string{"**/a/b", "x/**/a/b", "**/a/"}, paths: []string{"a/b", "x/a/b", "x/y/a/b", "xa/b", "a/", "q/a/", "x/a/b/"}},
		{name: "shallow with pre", patterns: []string{"d/*.md", "*.md", "d/*"}, paths: []string{"d/a.md", "a.md", "d/x/a.md", "d/", "d", ".md", "d/.md"}},
		{name: "escapes stay hard", patterns: []string{`a\/**`, `a\*`, `\**/x`, `**/\*.go`}, paths: []string{"a", "a/", "a/b", "a*", "ab", "*/x", "*x/x", "b/*.go"}},
		{name: "invalid UTF-8 decodes to U+FFFD", patterns: []string{"\xff", "\ufffd", "a/\xfe/**", "**/*\ufffd", "*\xff"}, paths: []string{"\xff", "\xfe", "\ufffd", "a/\xff/b", "x\xc3", "\xc3\xa9"}},
		{name: "mid-segment doublestar", patterns: []string{"a**", "a/**b", "**.go", "a/**/**"}, paths: []string{"ab", "a/b", "a/xb", "x.go", "a/x.go", "a", "a/b/c"}},
		{name: "multibyte suffix", patterns: []string{"**/*é", "*é", "é/**"}, paths: []string{"é", "xé", "a/bé", "\xc3é", "e\u0301", "é/x"}},
		{name: "literal brackets and commas", patterns: []string{"a]b", "a,b", "**/a,b"}, paths: []string{"a]b", "a,b", "x/a,b"}},
		{name: "duplicates", patterns: []string{"a/**", "a/**", "a/b", "a/b"}, paths: []string{"a/b", "a"}},
		{name: "brace expansion", patterns: []string{"src/{api,web}/**", "{a,b}/{c,d}/*.go", "x{a,ab}y", "{a/,b}**", "d/{x,x}*.md", "{a,a/b}/**"}, paths: []string{"src/api", "src/web/x", "src/apix", "a/d/z.go", "b/c/.go", "xay", "xaby", "a/", "a/b", "bz", "d/x.md", "d/xy.md", "a/b/c"}},
		{name: "braces kept hard", patterns: []string{"{a,ab}[!b[]", "{,a}/**", "*{a,b}", "{a,b}\\*", "{a,{b,c}}/x", "{a,b}/{c,[d]}"}, paths: []string{"abx", "ab", "a", "/x", "a/x", "za", "a*", "c/x", "b/d"}},
		{name: "head and tail in one segment", patterns: []string{"db/t1_*.sql", "**/test_*.py", "x/**/ab*b", "ab*b", "a*"}, paths: []string{"db/t1_.sql", "db/t1_x.sql", "db/t1.sql", "db/x/t1_x.sql", "test_.py", "a/test_x.py", "x/abb", "x/ab", "x/y/abxb", "abb", "ab", "abab", "a", "a/b"}},
		{name: "directory anywhere", patterns: []string{"**/testdata/**", "src/**/a/b/**", "**/a//**", "**//a/**", "**/x/"}, paths: []string{"testdata", "testdata/", "x/testdata/y", "x/testdatax/y", "xtestdata/y", "src/a/b", "src/q/a/b/c", "a/b", "src/a/bc", "a//x", "a/", "x//a/y", "/a/", "x/", "q/x/"}},
		{name: "kelvin sign lowercases to k", patterns: []string{"\u212a/**", "**/*\u212a"}, paths: []string{"k/x", "K/x", "\u212a/x", "xk"}},
		{name: "names longer than the length bitmap", patterns: []string{long + "/**", "**/" + long, "**/" + long + "/**", long + "y"},
			paths: []string{long, long + "/x", "a/" + long, "a/" + long + "/b", long + "y", long + "x", "l"}},
		{name: "many matches", patterns: slices.Repeat([]string{"**", "a/**", "**/*.go", "a/b.go", "a/*"}, 5), paths: []string{"a/b.go", "a/c.go", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, ic := range []bool{false, true} {
				for _, p := range tt.paths {
					checkAgainstDoublestar(t, tt.patterns, p, ic)
				}
			}
		})
	}
}

// Pieces random patterns and paths are built from: meta characters, the
// separator, case pairs, multibyte and invalid UTF-8, and U+FFFD.
var (
	patternPieces = []string{"a", "b", "ab", "A", "B", "/", "/", "*", "*", "**", "**/", "/**", ".go", ".", "?", "[ab]", "[!a]", "[A-Z]", "{a,b}", "{,a/}", "**/a/**", "{ab,a}", "{a/,b}", "{*,a}", `\*`, `\/`, `\a`, "é", "É", "\xff", "\ufffd", "\u212a", "k", ",", "]", "}", "["}
	pathPieces    = []string{"a", "b", "ab", "A", "B", "/", "/", "/", ".go", ".", "é", "É", "\xff", "\xc3", "\ufffd", "k", "K", "*", "x", ""}
)

func randomString(r *rand.Rand, pieces []string, max int) string {
	var b strings.Builder
	for range r.IntN(max + 1) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestMatcherProperty is the fuzz target's property over a fixed-seed random
// sample, so that plain `go test` exercises it too.
func TestMatcherProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	n := 30000
	if testing.Short() {
		n = 3000
	}
	for range n {
		patterns := make([]string, 1+r.IntN(5))
		for i := range patterns {
			patterns[i] = randomString(r, patternPieces, 6)
		}
		ic := r.IntN(2) == 0
		for range 4 {
			checkAgainstDoublestar(t, patterns, randomString(r, pathPieces, 7), ic)
		}
		// Also try a path built from the pattern itself: it hits the
		// literal parts, where fast paths live.
		checkAgainstDoublestar(t, patterns, strings.NewReplacer("**", "x/y", "*", "z", "?", "q").Replace(patterns[0]), ic)
	}
}

// FuzzMatcher checks that the compiled Matcher never panics and agrees with
// doublestar.Match. patterns holds up to 8 patterns separated by newlines.
func FuzzMatcher(f *testing.F) {
	f.Add("docs/**\n**/*.go", "docs/a.go", false)
	f.Add("DESIGN_DOCUMENT.md", "design_document.md", true)
	f.Add("a/**/b\n*.md", "a/x/b", false)
	f.Fuzz(func(t *testing.T, patterns, path string, ignoreCase bool) {
		list := strings.Split(patterns, "\n")
		if len(list) > 8 {
			list = list[:8]
		}
		checkAgainstDoublestar(t, list, path, ignoreCase)
	})
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		want    shape
	}{
		{name: "literal", pattern: "bridge/loop.py", want: shape{kind: shapeExact, lit: "bridge/loop.py"}},
		{name: "everything", pattern: "**", want: shape{kind: shapeAll}},
		{name: "dir", pattern: "bridge/loop_pkg/**", want: shape{kind: shapeDir, pre: "bridge/loop_pkg"}},
		{name: "root dir", pattern: "/**", want: shape{kind: shapeDir, pre: ""}},
		{name: "basename anywhere", pattern: "**/api.py", want: shape{kind: shapeTail, lit: "api.py"}},
		{name: "path below dir", pattern: "src/**/handlers/x.go", want: shape{kind: shapeTail, pre: "src/", lit: "handlers/x.go"}},
		{name: "directory anywhere", pattern: "**/testdata/**", want: shape{kind: shapeSeg, lit: "testdata"}},
		{name: "directories below dir", pattern: "src/**/a/b/**", want: shape{kind: shapeSeg, pre: "src/", lit: "a/b"}},
		{name: "extension anywhere", pattern: "**/*.md", want: shape{kind: shapeDeep, lit: ".md"}},
		{name: "extension below dir", pattern: "tests/**/test_*.py", want: shape{kind: shapeDeep, pre: "tests/", head: "test_", lit: ".py"}},
		{name: "extension at top", pattern: "*.md", want: shape{kind: shapeShallow, lit: ".md"}},
		{name: "name in dir", pattern: "db/t1_*.sql", want: shape{kind: shapeShallow, pre: "db/", head: "t1_", lit: ".sql"}},
		{name: "question mark", pattern: "tools/lint?.cfg", want: shape{kind: shapeHard, pre: "tools/lint"}},
		{name: "dir then class", pattern: "a/[bc]/**", want: shape{kind: shapeHard, pre: "a"}},
		{name: "two stars in a name", pattern: "src/*_*.go", want: shape{kind: shapeHard, pre: "src"}},
		{name: "escape", pattern: `a\*b`, want: shape{kind: shapeHard, pre: "a"}},
		{name: "trailing doublestar slash", pattern: "a/**/", want: shape{kind: shapeHard, pre: "a"}},
		{name: "mid-name doublestar", pattern: "a/b**", want: shape{kind: shapeHard, pre: "a/b"}},
		{name: "invalid UTF-8 literal", pattern: "a/\xff", want: shape{kind: shapeHard, pre: ""}},
		{name: "U+FFFD literal", pattern: "a/\ufffd/**", want: shape{kind: shapeHard, pre: ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := classify(tt.pattern); got != tt.want {
				t.Errorf("classify(%q) = %+v, want %+v", tt.pattern, got, tt.want)
			}
		})
	}
}

func TestExpandBraces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pattern string
		want    []string
	}{
		{name: "one group", pattern: "src/{api,web}/**", want: []string{"src/api/**", "src/web/**"}},
		{name: "two groups", pattern: "{a,b}/{c,d}", want: []string{"a/c", "a/d", "b/c", "b/d"}},
		{name: "duplicates dropped", pattern: "d/{x,x,y}", want: []string{"d/x", "d/y"}},
		{name: "no braces", pattern: "src/**", want: nil},
		{name: "star before group", pattern: "*{a,b}", want: nil},
		{name: "empty alternative", pattern: "{,a}/**", want: nil},
		{name: "meta in alternative", pattern: "{*.go,a}", want: nil},
		{name: "nested", pattern: "{a,{b,c}}", want: nil},
		{name: "class after group", pattern: "{a,ab}[!b[]", want: nil},
		{name: "escape after group", pattern: `{a,b}\*`, want: nil},
		{name: "second group not expandable", pattern: "{a,b}/{c,*}", want: nil},
		{name: "too many", pattern: "{a,b,c,d,e,f,g,h}{a,b,c,d,e,f,g,h}{a,b}", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := expandBraces(tt.pattern, maxExpansions); !slices.Equal(got, tt.want) {
				t.Errorf("expandBraces(%q) = %q, want %q", tt.pattern, got, tt.want)
			}
		})
	}
}

func TestMatchedAny(t *testing.T) {
	t.Parallel()
	m, err := NewMatcher([]string{"src/**", "*.md", "docs/a.txt", "lib/*.go"}, false)
	if err != nil {
		t.Fatal(err)
	}
	got := m.MatchedAny([]string{"src/x/y.go", "README.md", "lib/sub/z.go"})
	want := []bool{true, true, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("MatchedAny = %v, want %v", got, want)
		}
	}
	if got := (*Matcher)(nil).MatchedAny([]string{"a"}); len(got) != 0 {
		t.Fatalf("nil matcher: %v", got)
	}
}
