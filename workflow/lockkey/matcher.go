package lockkey

// Matcher matches paths against a fixed list of path patterns.
type Matcher struct {
	patterns []string
}

// NewMatcher compiles patterns once for many paths.
func NewMatcher(patterns []string) *Matcher {
	return &Matcher{patterns: patterns}
}

// MatchAll calls fn with the index of every pattern that matches path.
func (m *Matcher) MatchAll(path string, fn func(i int)) {
	for i, p := range m.patterns {
		if MatchPath(p, path) {
			fn(i)
		}
	}
}
