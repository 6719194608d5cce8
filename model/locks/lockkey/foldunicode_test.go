package lockkey

import (
	"errors"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Every spelling of one file on a case-insensitive, normalisation-
// insensitive file system is one key.
func TestFoldSpellings(t *testing.T) {
	same := []struct{ why, a, b string }{
		{"accented capital", "Été.txt", "été.txt"},
		{"NFD and NFC", "e\u0301te\u0301.txt", "été.txt"},
		{"NFD capital and NFC", "E\u0301te\u0301.txt", "été.txt"},
		{"Kelvin sign", "\u212Aelvin2.txt", "kelvin2.txt"},
		{"Angstrom sign", "\u212Bngstrom.md", "ångstrom.md"},
		{"Ohm sign", "\u2126.md", "ω.md"},
		{"sharp s, full folding", "docs/Straße.md", "docs/STRASSE.md"},
		{"capital sharp s", "docs/\u1E9E.md", "docs/ss.md"},
		{"ligature", "\uFB01le.go", "FILE.go"},
		{"Greek final sigma", "ς.md", "Σ.md"},
		{"ypogegrammeni", "\u1FB3.md", "α\u0345.md"},
		{"ypogegrammeni, capital", "\u1FBC.md", "\u1FB3.md"},
		{"combining marks in any order", "q\u0323\u0307.md", "q\u0307\u0323.md"},
		{"pattern", "Été/**", "ÉTÉ/**"},
		{"pattern NFD", "e\u0301te\u0301/*.md", "ÉTÉ/*.md"},
	}
	for _, c := range same {
		if !SameFoldCase(c.a, c.b) {
			t.Errorf("%s: SameFoldCase(%q, %q) = false: %q, %q", c.why, c.a, c.b, FoldCase(c.a), FoldCase(c.b))
		}
		if !OverlapFoldCase(c.a, c.b) || !OverlapFoldCase(c.b, c.a) {
			t.Errorf("%s: OverlapFoldCase(%q, %q) = false", c.why, c.a, c.b)
		}
	}
	differ := []struct{ why, a, b string }{
		{"Turkish dotless i", "ı.md", "i.md"},
		{"Turkish dotted capital I", "\u0130.md", "i.md"},
		{"dotless i and capital I", "ı.md", "I.md"},
		{"accent is not case", "café.md", "cafe.md"},
		{"compatibility forms are not folded", "\uFF46.md", "f.md"},
		{"look-alike scripts", "а.md", "a.md"}, // Cyrillic а
		{"namespaced keys keep their case", "task:É", "task:é"},
		{"namespaced keys keep their spelling", "task:e\u0301", "task:é"},
	}
	for _, c := range differ {
		if SameFoldCase(c.a, c.b) || OverlapFoldCase(c.a, c.b) {
			t.Errorf("%s: %q and %q are one key: %q", c.why, c.a, c.b, FoldCase(c.a))
		}
	}
}

func TestFoldIdentity(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Été.txt", "été.txt"},
		{"e\u0301te\u0301.txt", "été.txt"},
		{"\u212Aelvin2.txt", "kelvin2.txt"},
		{"Straße", "strasse"},
		{"ÉTÉ/[A-Z]*.GO", "été/[a-z]*.go"},
		{"\u212Aey:x", "/key:x"}, // folds into a namespaced form: kept apart
		{"WORKFLOW", "/workflow"},
		{"task:Été", "task:Été"},
	}
	for _, c := range cases {
		if got := FoldCase(c.in); got != c.want {
			t.Errorf("FoldCase(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The legacy identity is what versions that folded A-Z only named records
// after.
func TestFoldCaseASCII(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Été.TXT", "Été.txt"},
		{"\u212Aelvin2.txt", "\u212Aelvin2.txt"},
		{"Workflow", "/workflow"},
		{"task:ABC", "task:ABC"},
		{"/workflow", "/workflow"},
	}
	for _, c := range cases {
		if got := FoldCaseASCII(c.in); got != c.want {
			t.Errorf("FoldCaseASCII(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFoldInvalidUTF8(t *testing.T) {
	for _, s := range []string{"\xff", "src/\xffÉ.go", "É\xc3", "\xed\xa0\x80"} {
		if _, err := Fold(s); !errors.Is(err, ErrInvalidUTF8) {
			t.Errorf("Fold(%q): error %v, want ErrInvalidUTF8", s, err)
		}
	}
	// A commit's path may hold any bytes: they are kept, the rest folded,
	// and patterns still cover it.
	if got, want := Folded("SRC/\xffÉ.go"), "src/\xffé.go"; got != want {
		t.Errorf("Folded = %q, want %q", got, want)
	}
	if g, _ := FoldedGlob("SRC/**"); !MatchPath(g, Folded("SRC/\xffÉ.go")) {
		t.Errorf("SRC/** does not cover a path with invalid UTF-8")
	}
}

// The shortcut of foldUTF8 (no decomposition unless U+0345 may be
// involved) agrees with the definition, NFC(casefold(NFD(s))), for every
// assigned code point, alone and followed by combining marks (Han and
// Hangul, a third of them, have no case).
func TestFoldFastPath(t *testing.T) {
	tails := []string{"", "\u0301", "\u0345", "\u0323\u0307"}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S) || unicode.In(r, unicode.Han, unicode.Hangul) {
			continue
		}
		for _, tail := range tails {
			s := string(r) + tail
			if got, want := foldUTF8(s), foldCanonical(s); got != want {
				t.Fatalf("foldUTF8(%q) = %q, want %q", s, got, want)
			}
		}
	}
}

// Folding every code point is idempotent and takes every member of its case
// orbit (unicode.SimpleFold) to one text, Cherokee included, whose small
// letters fold to the capitals.
func TestFoldEveryCodePoint(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		f := Folded(string(r))
		if again := Folded(f); again != f {
			t.Fatalf("%U folds to %q, then to %q", r, f, again)
		}
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			if fo := Folded(string(o)); fo != f {
				t.Fatalf("%U folds to %q, %U of its case to %q", r, f, o, fo)
			}
		}
	}
	if got, want := Folded("\u13A6\uAB76\u13F8"), "\u13A6\u13A6\u13F0"; got != want {
		t.Errorf("Cherokee folds to %q, want the capitals %q", got, want)
	}
}

// Patterns are matched folded: those whose meaning folding would change are
// refused, never matched otherwise than they read.
func TestPatternFoldable(t *testing.T) {
	refused := []string{"docs/[ß]*.md", "docs/[\uFB01]x", "src/[e\u0301]x", "src/[e]\u0301.go", "src/*\u0301", "src/{a,\u0301b}"}
	for _, k := range refused {
		if c, err := Canonical(k, nil); err == nil {
			t.Errorf("Canonical(%q) = %q, want a refusal", k, c)
		}
	}
	accepted := []string{"docs/[É]*.md", "docs/[À-Ý]x", "src/e\u0301*.go", "src/*é.go", "src/{straße,strasse}.md"}
	for _, k := range accepted {
		if _, err := Canonical(k, nil); err != nil {
			t.Errorf("Canonical(%q): %v", k, err)
		}
	}
	g, _ := FoldedGlob("docs/[É]*.md")
	if !MatchPath(g, Folded("docs/ÉTÉ.md")) || !MatchPath(g, Folded("docs/e\u0301te\u0301.md")) {
		t.Errorf("docs/[É]*.md does not cover every spelling of docs/été.md")
	}
}
