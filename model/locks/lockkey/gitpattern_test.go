package lockkey

import (
	"errors"
	"testing"
)

// TestPatternsIntoGitDir: a pattern that can match a path in git's own
// directory, or one outside the repository, is refused with the error of
// the literal path it can match; a segment that is only * or ** matches
// every name and is allowed, as are patterns that come near the names
// without matching them.
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
		".gi?/x":                   gitDir,
		"?git/x":                   gitDir,
		".git*/x":                  gitDir,
		".git?*":                   gitDir,
		"*:x/y":                    gitDir,
		".gi[!t]/x":                gitDir,
		".*/config":                gitDir,
		"*.*/x":                    gitDir,
		"*git/x":                   gitDir,
		"[!a]git/x":                gitDir,
		"[.][gG][iI][tT]/x":        gitDir,
		"[.]git./x":                gitDir,
		".git[.]/x":                gitDir,
		".git[ ]/x":                gitDir,
		".git[:]$INDEX_ALLOCATION": gitDir,
		".git:*/x":                 gitDir,
		".git:[a]/x":               gitDir,
		"gi[t]~1/x":                gitDir,
		"[G]IT~1/x":                gitDir,
		"git~?/x":                  gitDir,
		"{a,[.]git}/x":             gitDir,
		"src/{[.]git,b}/**":        gitDir,
		"[.][.]/x":                 escape,
		"??/x":                     escape,
		".?/x":                     escape,
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
	} {
		if _, err := Parse(in, nil); err != nil {
			t.Errorf("Parse(%q) = %v, want it accepted", in, err)
		}
	}
}
