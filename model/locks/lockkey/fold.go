package lockkey

import (
	"errors"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Case-insensitive file systems (macOS, Windows) fold more than A-Z: Été
// and été, or the Kelvin sign and k, name one file there, and macOS also
// takes the composed (NFC) and decomposed (NFD) spellings of an accented
// letter for one name. Path and pattern keys are therefore compared by
// Unicode's canonical caseless matching (full case folding of the
// canonical decomposition, then composed again), in every clone, whatever
// its core.ignorecase, since clones that differ in it may share one store
// and a key's identity must come out the same in each: FoldCase gives the
// identity a store keeps them under, OverlapFoldCase compares them.
// Namespaced and reserved keys stay case-sensitive: their values name no
// file; a branch lock's key (BranchKey) folds its path and keeps its
// branch, as git keeps the case of refs.

// folder is Unicode full case folding; it is stateless, so one serves
// every goroutine.
var folder = cases.Fold()

// ErrInvalidUTF8 is Fold's error for text that is not valid UTF-8: such
// bytes have no case nor normal form, and no key may contain them.
var ErrInvalidUTF8 = errors.New("not valid UTF-8")

// FoldCase returns key's identity under core.ignorecase: for a path or
// pattern key, FoldPath(key); any other key unchanged. Distinct identities
// are distinct keys, and no identity of a path equals one of another kind.
func FoldCase(key string) string {
	if !IsPathLike(key) {
		if id, ok := foldBranch(key); ok {
			return id
		}
		return key
	}
	return FoldPath(key)
}

// FoldPath returns the identity of a repo-relative path (or path pattern)
// under core.ignorecase: Folded(p). Folded, Workflow or Api:x would read as a reserved or namespaced key; such a path
// gets a leading "/", which no key has, so that its identity stays apart.
// FoldPath(FoldPath(p)) == FoldPath(p).
func FoldPath(p string) string {
	if strings.HasPrefix(p, "/") {
		return p // already an identity
	}
	f := Folded(p)
	if !IsPathLike(f) {
		f = "/" + f
	}
	return f
}

// SameFoldCase reports whether a and b (keys or identities) are one key
// under core.ignorecase.
func SameFoldCase(a, b string) bool {
	return a == b || FoldCase(a) == FoldCase(b)
}

// OverlapFoldCase is Overlap for a repository with core.ignorecase: path and
// pattern keys are compared with A-Z folded. Either side may also be an
// identity from FoldCase. It is conservative, symmetric and never panics,
// like Overlap.
func OverlapFoldCase(a, b string) bool {
	pa, okA := FoldedGlob(a)
	pb, okB := FoldedGlob(b)
	switch {
	case okA && okB:
		return pa == pb || globOverlap(pa, pb)
	case okA || okB:
		return false // a path never overlaps a namespaced or reserved key
	}
	return Overlap(a, b)
}

// FoldedGlob returns a path or pattern key, or its identity, folded and
// without the marking "/": what it is matched as under core.ignorecase,
// against paths folded by Folded. It is false for any other key.
func FoldedGlob(s string) (string, bool) {
	if g, ok := strings.CutPrefix(s, "/"); ok {
		return g, true
	}
	if !IsPathLike(s) {
		return "", false
	}
	return Folded(s), true
}

// IsPathLike reports a path or pattern key (or the identity of one):
// neither reserved nor namespaced.
func IsPathLike(key string) bool {
	return key != WorkflowKey && key != ClaimKey && Namespace(key) == ""
}

// Fold returns s as path keys are compared: NFC(casefold(NFD(s))), Unicode's
// canonical caseless match (the composed form, so that identities read as
// git on macOS spells paths). It is an error for s that is not valid UTF-8.
// Fold(Fold(s)) == Fold(s).
func Fold(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", ErrInvalidUTF8
	}
	return Folded(s), nil
}

// Folded is Fold for text that need not be a key: the paths a commit
// touches may hold any bytes. Valid runs are folded and every byte that is
// not valid UTF-8 is kept as it is, so that no such path reads as a key
// (keys are valid UTF-8) and patterns still match it as before (`src/**`
// covers src/\xff). Text of ASCII bytes only takes the fast path: A-Z
// lowered, which is all folding does to it.
func Folded(s string) string {
	upper := -1
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf {
			return foldText(s)
		} else if upper < 0 && 'A' <= c && c <= 'Z' {
			upper = i
		}
	}
	if upper < 0 {
		return s
	}
	return lowerFrom(s, upper)
}

// foldText is Folded for text that is not all ASCII.
func foldText(s string) string {
	if utf8.ValidString(s) {
		return foldUTF8(s)
	}
	var b strings.Builder
	for len(s) > 0 {
		n := validPrefix(s)
		b.WriteString(foldUTF8(s[:n]))
		s = s[n:]
		if len(s) > 0 {
			b.WriteByte(s[0]) // one invalid byte, kept
			s = s[1:]
		}
	}
	return b.String()
}

// foldUTF8 folds valid UTF-8: NFC(casefold(NFD(s))). Unicode notes that
// folding needs the decomposition first only for U+0345 COMBINING GREEK
// YPOGEGRAMMENI and the letters that hold it (U+1F80-U+1FFF), so other
// text skips that costly step (NFC of composed text is a quick check that
// allocates nothing). TestFoldFastPath checks the shortcut against the
// definition for every code point.
func foldUTF8(s string) string {
	nfd, cherokee := scan(s)
	if nfd {
		return foldCanonical(s)
	}
	f := folder.String(s)
	if cherokee {
		f = strings.Map(cherokeeFold, f)
	}
	return norm.NFC.String(f)
}

// foldCanonical is Unicode's canonical caseless match form, composed:
// folding may leave text that is not normalised.
func foldCanonical(s string) string {
	return norm.NFC.String(strings.Map(cherokeeFold, folder.String(norm.NFD.String(s))))
}

// scan reports whether s's folding depends on its decomposition (it holds
// U+0345 or a letter whose decomposition holds it) and whether it holds
// Cherokee letters.
func scan(s string) (nfd, cherokee bool) {
	for _, r := range s {
		switch {
		case r == '\u0345' || r >= 0x1F80 && r <= 0x1FFF:
			nfd = true
		case r >= 0x13A0 && r <= 0x13FF || r >= 0xAB70 && r <= 0xABBF:
			cherokee = true
		}
	}
	return nfd, cherokee
}

// cherokeeFold corrects x/text's folding of Cherokee, which lowers the
// capitals and raises the small letters, so that folding twice undoes
// it. Unicode (CaseFolding.txt, since 8.0) folds Cherokee to the capitals,
// the letters encoded first: this maps the small letters U+AB70-U+ABBF
// and U+13F8-U+13FD to them.
func cherokeeFold(r rune) rune {
	switch {
	case r >= 0xAB70 && r <= 0xABBF:
		return r - 0xAB70 + 0x13A0
	case r >= 0x13F8 && r <= 0x13FD:
		return r - 8
	}
	return r
}

// validPrefix returns the length of s's longest valid UTF-8 prefix.
func validPrefix(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return i
}

// FoldCaseASCII is FoldCase as versions before Unicode folding computed
// it: A-Z lowered and nothing else. Stores still find the records those
// versions named after it (see record.LegacyName).
func FoldCaseASCII(key string) string {
	if !IsPathLike(key) || strings.HasPrefix(key, "/") {
		return key
	}
	f := LowerASCII(key)
	if !IsPathLike(f) {
		f = "/" + f
	}
	return f
}

// LowerASCII lowers A-Z and leaves every other byte alone, as git folds
// paths under core.ignorecase.
func LowerASCII(s string) string {
	i := 0
	for i < len(s) && !(s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	return lowerFrom(s, i)
}

// lowerFrom lowers A-Z in s from s[i] on, the first upper-case letter.
func lowerFrom(s string, i int) string {
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// RelArg is key as an argument to a lockgate command run from dir (the
// directory's repo-relative path with a trailing slash, "" for the top):
// path and pattern keys relative to dir, as lockgate reads paths given on
// its command line (`src/a.go` from `docs/` is `../src/a.go`); every
// other key as it is. Hints use it, so that the commands they print run
// where the user reads them.
func RelArg(key, dir string) string {
	if dir == "" || !IsPathLike(key) {
		return key
	}
	d := strings.Split(strings.TrimSuffix(dir, "/"), "/")
	k := strings.Split(key, "/")
	i := 0
	for i < len(d) && i < len(k)-1 && d[i] == k[i] {
		i++
	}
	return strings.Repeat("../", len(d)-i) + strings.Join(k[i:], "/")
}

// MatchForm returns paths as pattern locks are matched against them: with
// fold, folded by Folded, as FoldedGlob folds the patterns; otherwise paths
// itself.
func MatchForm(paths []string, fold bool) []string {
	if !fold {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = Folded(p)
	}
	return out
}
