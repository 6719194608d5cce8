package lockkey

import (
	"errors"
	"testing"
)

// TestPatternsIntoGitDir: a pattern one of whose segments matches only
// names of git's own directory, or only "..", is refused with the error of
// the literal path it spells; a pattern that can match such a name but
// matches ordinary names too is allowed.
func TestPatternsIntoGitDir(t *testing.T) {
	t.Parallel()
	const gitDir = ".git is git's own directory and cannot be locked"
	const escape = "path escapes the repository through ..; expected " + pathForm
	refused := map[string]string{
		"[.]git/x":                 gitDir,
		"src/[.]git/HEAD":          gitDir,
		".[g]it/x":                 gitDir,
		".gi[t]":                   gitDir,
		".GI[T]/x":                 gitDir,
		"[.][gG][iI][tT]/x":        gitDir,
		"[.]git./x":                gitDir,
		".git[.]/x":                gitDir,
		".git[ ]/x":                gitDir,
		".git[:]$INDEX_ALLOCATION": gitDir,
		".git:[a]/x":               gitDir,
		".git:*/x":                 gitDir,
		"gi[t]~1/x":                gitDir,
		"[G]IT~1/x":                gitDir,
		"{a,[.]git}/x":             gitDir,
		"src/{[.]git,b}/**":        gitDir,
		"[.][.]/x":                 escape,
		"a/[.][.]/[.][.]/x":        escape,
		"**/[.][.]/x":              escape,
		"{a,[.][.]}/x":             escape,
	}
	for in, want := range refused {
		_, err := Parse(in, nil)
		var e *Error
		if !errors.As(err, &e) || e.Reason != want {
			t.Errorf("Parse(%q) = %v, want the refusal %q", in, err, want)
		}
	}
	for _, in := range []string{
		"**", "*", "*/x", "**/x", "src/**", "*.py", "src/*/x", ".github/**", ".gi[!tT]/x",
		".g[a-h]t/x", "[.]gitignore", "git/**", "a*:x", "src/??/x", "a/[.][.]/x",
		"*/[.][.]/x", "[.]x", "x[.]git/y", ".gitattributes", "git~2/x", ".git[!.: ]*",
		// Patterns that can match a refused name but match ordinary
		// names too: only staged paths are matched, never .git's.
		"??/x", ".?/x", ".gi?/x", "?git/x", ".git*/x", ".git?*", "*git/x", "*.*/x", ".*/config",
		".*", "*.*", ".git*", "[!a]git/x", ".gi[!t]/x", "git~?/x", "*:x/y",
	} {
		if _, err := Parse(in, nil); err != nil {
			t.Errorf("Parse(%q) = %v, want it accepted", in, err)
		}
	}
}
