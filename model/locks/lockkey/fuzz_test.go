package lockkey

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/unicode/norm"
)

// fuzzOptions exercise the configured code paths next to the nil defaults.
var fuzzOptions = []*Options{
	nil,
	{ContractFiles: []string{"openapi/v1.yaml", "gen/**/*.ts"}, Namespaces: append([]string{"queue"}, DefaultNamespaces...)},
}

// FuzzCanonical checks that Parse never panics, that canonicalization is
// idempotent and keeps paths inside the repository, and that suggestions
// are themselves canonical keys.
func FuzzCanonical(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		for _, opt := range fuzzOptions {
			k, err := Parse(s, opt)
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("Parse(%q): error %T is not *Error", s, err)
				}
				if e.Expected != "" {
					c, err := Canonical(e.Expected, opt)
					if err != nil || c != e.Expected {
						t.Fatalf("Parse(%q): suggestion %q is not canonical: %q, %v", s, e.Expected, c, err)
					}
				}
				_ = e.Error()
				continue
			}
			c := k.Canonical
			k2, err := Parse(c, opt)
			if err != nil {
				t.Fatalf("Parse(%q) = %q, which is refused: %v", s, c, err)
			}
			if k2 != k {
				t.Fatalf("not idempotent: %q -> %+v -> %+v", s, k, k2)
			}
			if !Overlap(c, c) {
				t.Fatalf("Overlap(%q, itself) = false", c)
			}
			if Namespace(c) != k.Namespace {
				t.Fatalf("Namespace(%q) = %q, Parse says %q", c, Namespace(c), k.Namespace)
			}
			switch k.Kind {
			case KindPath, KindPattern:
				checkInsideRepo(t, s, c)
				if IsPattern(c) != (k.Kind == KindPattern) {
					t.Fatalf("IsPattern(%q) disagrees with kind %s", c, k.Kind)
				}
			case KindContract:
				checkInsideRepo(t, s, k.Value)
			case KindReserved:
			default:
				if c != k.Namespace+":"+k.Value {
					t.Fatalf("%+v: canonical is not namespace:value", k)
				}
			}
		}
	})
}

// checkInsideRepo asserts that a canonical path or pattern, and each of its
// brace alternatives, is a clean repo-relative path.
func checkInsideRepo(t *testing.T, in, c string) {
	t.Helper()
	alts := []string{c}
	if strings.Contains(c, "{") {
		var ok bool
		if alts, ok = expandBraces(c, maxParseAlternatives); !ok {
			t.Fatalf("Parse(%q) = %q, whose braces do not expand", in, c)
		}
	}
	for _, alt := range alts {
		if alt == "" || strings.HasPrefix(alt, "/") {
			t.Fatalf("Parse(%q) = %q: alternative %q is empty or absolute", in, c, alt)
		}
		depth := 0 // as checkSegments counts: each segment that only matches .. climbs
		for _, seg := range strings.Split(alt, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.EqualFold(seg, ".git") {
				t.Fatalf("Parse(%q) = %q: alternative %q has segment %q", in, c, alt, seg)
			}
			if seg == "**" {
				continue
			}
			names, ok := segmentNames(seg)
			if !ok {
				depth++ // a wildcard or too many names: it matches ordinary ones
				continue
			}
			allGit, allParent := true, true
			for _, n := range names {
				allGit = allGit && IsGitDir(n)
				allParent = allParent && n == ".."
			}
			if allGit {
				t.Fatalf("Parse(%q) = %q: segment %q matches only names of git's directory (%q)", in, c, seg, names)
			}
			if allParent {
				depth--
			} else {
				depth++
			}
			if depth < 0 {
				t.Fatalf("Parse(%q) = %q: alternative %q climbs out of the repository", in, c, alt)
			}
		}
	}
}

// segmentNames is every name a segment without `*` or `?` matches, when
// they are few and ASCII: each position's characters, a literal's or
// those doublestar's class lets through, multiplied out. ok is false for
// a segment with a wildcard, a character outside ASCII or too many names.
func segmentNames(seg string) (names []string, ok bool) {
	names = []string{""}
	for i := 0; i < len(seg); i++ {
		var chars []byte
		switch c := seg[i]; {
		case c == '*' || c == '?' || c >= 0x80:
			return nil, false
		case c == '[':
			end := classEnd(seg, i)
			if end < 0 {
				return nil, false
			}
			class := seg[i : end+1]
			if strings.IndexFunc(class, func(r rune) bool { return r >= 0x80 }) >= 0 {
				return nil, false
			}
			for b := 1; b < 0x80; b++ {
				if m, err := doublestar.Match(class, string(rune(b))); m && err == nil {
					chars = append(chars, byte(b))
				}
			}
			i = end
		case c == '\\' && i+1 < len(seg):
			i++
			chars = []byte{seg[i]}
		default:
			chars = []byte{c}
		}
		if len(names)*len(chars) > 4096 {
			return nil, false
		}
		var next []string
		for _, n := range names {
			for _, ch := range chars {
				next = append(next, n+string(ch))
			}
		}
		names = next
	}
	return names, true
}

// FuzzOverlap checks that Overlap never panics and is symmetric, and that
// it is conservative: keys that match a common path overlap.
func FuzzOverlap(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b, x string) {
		if Overlap(a, b) != Overlap(b, a) {
			t.Fatalf("Overlap(%q, %q) = %v but Overlap(%q, %q) = %v", a, b, Overlap(a, b), b, a, Overlap(b, a))
		}
		if !Overlap(a, a) {
			t.Fatalf("Overlap(%q, itself) = false", a)
		}
		ka, errA := Parse(a, nil)
		kb, errB := Parse(b, nil)
		kx, errX := Parse(x, nil)
		if errA != nil || errB != nil {
			return
		}
		ca, cb := ka.Canonical, kb.Canonical
		if Overlap(ca, cb) != Overlap(cb, ca) {
			t.Fatalf("Overlap(%q, %q) is not symmetric", ca, cb)
		}
		if kb.Kind == KindPath && MatchPath(ca, cb) && !Overlap(ca, cb) {
			t.Fatalf("MatchPath(%q, %q) but not Overlap", ca, cb)
		}
		if ka.Kind == KindPath && MatchPath(cb, ca) && !Overlap(cb, ca) {
			t.Fatalf("MatchPath(%q, %q) but not Overlap", cb, ca)
		}
		if errX == nil && kx.Kind == KindPath && isPathKind(ka.Kind) && isPathKind(kb.Kind) {
			cx := kx.Canonical
			if (ca == cx || MatchPath(ca, cx)) && (cb == cx || MatchPath(cb, cx)) && !Overlap(ca, cb) {
				t.Fatalf("%q and %q both match %q but do not overlap", ca, cb, cx)
			}
		}
	})
}

func isPathKind(k Kind) bool { return k == KindPath || k == KindPattern }

// FuzzFoldCase checks the rules of case-insensitive keys: FoldCase is
// idempotent and keeps kinds apart, OverlapFoldCase is symmetric, agrees
// with FoldCase on keys that cover nothing else, and is conservative: keys
// that match a common path once folded overlap.
func FuzzFoldCase(f *testing.F) {
	f.Fuzz(func(t *testing.T, a, b, x string) {
		if FoldCase(FoldCase(a)) != FoldCase(a) {
			t.Fatalf("FoldCase(%q) = %q is not idempotent", a, FoldCase(a))
		}
		if OverlapFoldCase(a, b) != OverlapFoldCase(b, a) {
			t.Fatalf("OverlapFoldCase(%q, %q) is not symmetric", a, b)
		}
		ka, errA := Parse(a, nil)
		kb, errB := Parse(b, nil)
		if errA != nil || errB != nil {
			return
		}
		ca, cb := ka.Canonical, kb.Canonical
		if !OverlapFoldCase(ca, ca) || !OverlapFoldCase(ca, FoldCase(ca)) {
			t.Fatalf("OverlapFoldCase(%q, itself or its identity) = false", ca)
		}
		if SameFoldCase(ca, cb) && isPathKind(ka.Kind) != isPathKind(kb.Kind) {
			t.Fatalf("%q and %q are one key under FoldCase but of different kinds", ca, cb)
		}
		if Overlap(ca, cb) && !OverlapFoldCase(ca, cb) {
			t.Fatalf("Overlap(%q, %q) but not OverlapFoldCase", ca, cb)
		}
		if !IsPattern(ca) && !IsPattern(cb) && OverlapFoldCase(ca, cb) != SameFoldCase(ca, cb) {
			t.Fatalf("keys %q and %q: OverlapFoldCase %v, SameFoldCase %v", ca, cb, OverlapFoldCase(ca, cb), SameFoldCase(ca, cb))
		}
		if isPathKind(ka.Kind) && isPathKind(kb.Kind) && x != "" {
			ga, _ := FoldedGlob(ca)
			gb, _ := FoldedGlob(cb)
			lx := Folded(x)
			if (ga == lx || MatchPath(ga, lx)) && (gb == lx || MatchPath(gb, lx)) && !OverlapFoldCase(ca, cb) {
				t.Fatalf("%q and %q both match %q with case folded but do not overlap", ca, cb, x)
			}
		}
	})
}

// FuzzFold checks folding on any text: it never panics, Fold refuses
// exactly the text that is not valid UTF-8, folding is idempotent and
// takes every spelling of one name to one text — canonically equivalent
// ones (NFC, NFD) and ones that differ in case (each letter swapped for
// another of its case orbit, as unicode.SimpleFold walks it) — and the
// shortcuts of Folded agree with the definition, NFC(casefold(NFD(s))).
func FuzzFold(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Fold(s)
		if valid := utf8.ValidString(s); valid != (err == nil) {
			t.Fatalf("Fold(%q): error %v for valid UTF-8 %v", s, err, valid)
		}
		folded := Folded(s)
		if again := Folded(folded); again != folded {
			t.Fatalf("Folded(%q) = %q, folded again %q", s, folded, again)
		}
		if FoldCase(FoldCase(s)) != FoldCase(s) {
			t.Fatalf("FoldCase(%q) = %q is not idempotent", s, FoldCase(s))
		}
		if err != nil {
			return
		}
		if got != folded {
			t.Fatalf("Fold(%q) = %q, Folded %q", s, got, folded)
		}
		if want := foldCanonical(s); got != want {
			t.Fatalf("Fold(%q) = %q, want NFC(casefold(NFD)) %q", s, got, want)
		}
		for _, v := range []string{norm.NFC.String(s), norm.NFD.String(s), swapCase(s)} {
			if fv := Folded(v); fv != got {
				t.Fatalf("%q folds to %q, its spelling %q to %q", s, got, v, fv)
			}
		}
	})
}

// swapCase replaces every rune of s by the next of its case orbit.
func swapCase(s string) string {
	return strings.Map(unicode.SimpleFold, s)
}
