package lockkey

import "strings"

// Under core.ignorecase git treats paths that differ only in the case of
// ASCII letters as one path (its case-insensitive name lookups fold A-Z
// and nothing else). Path and pattern keys follow the same rule in every
// clone, whatever its core.ignorecase, since clones that differ in it may
// share one store: FoldCase gives the identity a store keeps them under,
// OverlapFoldCase compares them. Namespaced and reserved keys stay
// case-sensitive: their values name no file.

// FoldCase returns key's identity under core.ignorecase: for a path or
// pattern key, FoldPath(key); any other key unchanged. Distinct identities
// are distinct keys, and no identity of a path equals one of another kind.
func FoldCase(key string) string {
	if !IsPathLike(key) {
		return key
	}
	return FoldPath(key)
}

// FoldPath returns the identity of a repo-relative path (or path pattern)
// under core.ignorecase: A-Z lowered, so that UTF-8 stays valid. Lowered,
// Workflow or Api:x would read as a reserved or namespaced key; such a path
// gets a leading "/", which no key has, so that its identity stays apart.
// FoldPath(FoldPath(p)) == FoldPath(p).
func FoldPath(p string) string {
	if strings.HasPrefix(p, "/") {
		return p // already an identity
	}
	f := LowerASCII(p)
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
// against paths lowered by LowerASCII. It is false for any other key.
func FoldedGlob(s string) (string, bool) {
	if g, ok := strings.CutPrefix(s, "/"); ok {
		return g, true
	}
	if !IsPathLike(s) {
		return "", false
	}
	return LowerASCII(s), true
}

// IsPathLike reports a path or pattern key (or the identity of one):
// neither reserved nor namespaced.
func IsPathLike(key string) bool {
	return key != WorkflowKey && key != ClaimKey && Namespace(key) == ""
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
// fold (core.ignorecase), A-Z lowered, as FoldedGlob folds the patterns;
// otherwise paths itself.
func MatchForm(paths []string, fold bool) []string {
	if !fold {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = LowerASCII(p)
	}
	return out
}
