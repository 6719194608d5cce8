package lockkey

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

const pathForm = "a repo-relative path such as src/app.py"

// maxParseAlternatives bounds brace expansion while validating a pattern.
const maxParseAlternatives = 1024

// canonPath canonicalizes a repo-relative path or doublestar pattern. The
// fail's expected, when set, is a canonical path (not yet checked as a key).
func (p *parser) canonPath(s string) (string, *fail) {
	if s == "" {
		return "", refuse("empty path", pathForm, "")
	}
	if isDrive(s) {
		return "", refuse("absolute Windows path", pathForm, "")
	}
	if strings.ContainsRune(s, '\\') {
		return "", refuse("backslashes are not path separators; use /", pathForm, p.suggestPath(strings.ReplaceAll(s, `\`, "/")))
	}
	if s[0] == '/' {
		return "", refuse("absolute path", pathForm, p.suggestPath(strings.TrimLeft(s, "/")))
	}
	segs, f := splitSegments(s)
	if f != nil {
		return "", f
	}
	last := segs[len(segs)-1]
	if last == "" {
		return "", refuse("a trailing / names a directory; lock a directory and everything in it with a /** pattern", "<dir>/**", p.suggestPath(strings.TrimRight(s, "/")+"/**"))
	}
	out := make([]string, 0, len(segs))
	for _, seg := range segs {
		switch seg {
		case "", ".":
			// `./a` and `a//b` are the same path as `a` and `a/b`.
		case "..":
			if len(out) == 0 {
				return "", refuse("path escapes the repository through ..", pathForm, "")
			}
			if hasMeta(out[len(out)-1]) {
				// `*/..` is not the parent of anything in particular.
				return "", refuse(".. cannot follow a wildcard segment", "a pattern without ..", "")
			}
			out = out[:len(out)-1]
		default:
			out = append(out, seg)
		}
	}
	dir := strings.Join(out, "/")
	if len(out) == 0 {
		return "", refuse("path names the repository root; to lock everything use **", "", "**")
	}
	if last == "." || last == ".." {
		return "", refuse("path names a directory; lock a directory and everything in it with a /** pattern", "<dir>/**", p.suggestPath(dir+"/**"))
	}
	if isDrive(dir) {
		// ./C:/x cleans to C:/x, which would then read as a Windows path.
		return "", refuse("path reads as a Windows drive once cleaned; name it with a pattern", "", p.suggestPath("["+dir[:1]+"]"+dir[1:]))
	}
	if strings.TrimSpace(dir) != dir {
		// ./ x cleans to " x", which would then read as a padded key.
		_, n := utf8.DecodeRuneInString(dir)
		return "", refuse("path begins with whitespace once cleaned; name it with a pattern", "", p.suggestPath("["+dir[:n]+"]"+dir[n:]))
	}
	for _, seg := range out {
		if isGitDir(seg) {
			return "", refuse(".git is git's own directory and cannot be locked", "", "")
		}
	}
	if hasMeta(dir) {
		if f := checkPattern(dir); f != nil {
			return "", f
		}
	}
	return dir, nil
}

// suggestPath returns cand canonicalized when it is a valid path, else "".
func (p *parser) suggestPath(cand string) string {
	if p.depth > 0 || cand == "" {
		return ""
	}
	p.depth++
	defer func() { p.depth-- }()
	c, f := p.canonPath(cand)
	if f != nil {
		return ""
	}
	return c
}

// checkPattern validates a pattern already cleaned segment-wise: doublestar
// must accept it, no brace alternative may smuggle in what the
// segment-wise cleaning refuses (`{..,a}`, `{,/x}`, `{.git,src}`), and no
// segment may match it either (`[.]git`, `[.][.]`).
func checkPattern(pat string) *fail {
	if !doublestar.ValidatePattern(pat) {
		return refuse("invalid pattern (unbalanced [ ] or { }, or an empty character class)", "a doublestar pattern such as src/api/**", "")
	}
	if f := checkFoldable(pat); f != nil {
		return f
	}
	if !strings.Contains(pat, "{") {
		return checkSegments(pat)
	}
	alts, ok := expandBraces(pat, maxParseAlternatives)
	if !ok {
		return refuse(fmt.Sprintf("pattern expands to more than %d brace alternatives", maxParseAlternatives), "a simpler pattern", "")
	}
	for _, alt := range alts {
		if alt == "" {
			return refuse(fmt.Sprintf("brace alternative expands to an empty path in %q", pat), "a pattern whose alternatives are repo-relative paths", "")
		}
		for _, seg := range strings.Split(alt, "/") {
			switch {
			case seg == "", seg == ".", seg == "..":
				return refuse(fmt.Sprintf("brace alternative %q has an empty, . or .. segment", alt), "a pattern whose alternatives are repo-relative paths", "")
			case isGitDir(seg):
				return refuse(".git is git's own directory and cannot be locked", "", "")
			}
		}
		if f := checkSegments(alt); f != nil {
			return f
		}
	}
	return nil
}

// checkFoldable refuses the patterns whose meaning folding would change
// (patterns are matched folded, see Fold): a character class matches one
// character, so every character in it must fold to one character
// (`[ß]` would become `[ss]`), and a combining mark must follow a
// character it may compose with, not a metacharacter (`[e]\u0301` would
// never match the composed é every path folds to).
func checkFoldable(pat string) *fail {
	prev := rune(-1)
	for i := 0; i < len(pat); {
		r, n := utf8.DecodeRuneInString(pat[i:])
		if unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me) && strings.ContainsRune("[]*?{},", prev) {
			return refuse(fmt.Sprintf("combining mark %U follows %q", r, prev), "the mark written on the character before it, as in é", "")
		}
		if r == '[' {
			if end := classEnd(pat, i); end > i+1 && !foldsByRune(pat[i+1:end]) {
				return refuse("a character class may only hold characters that fold to one character", "alternatives such as {straße,strasse}", "")
			}
		}
		prev = r
		i += n
	}
	return nil
}

// foldsByRune reports text whose folding keeps one character for each
// of its characters, each folded alone.
func foldsByRune(s string) bool {
	for _, r := range s {
		if utf8.RuneCountInString(Folded(string(r))) != 1 {
			return false
		}
	}
	return utf8.RuneCountInString(Folded(s)) == utf8.RuneCountInString(s)
}

func isGitDir(seg string) bool { return IsGitDir(seg) }

// IsGitDir reports whether a path segment names git's own directory on
// some file system, as git's own path checks do: .git in any case (a
// case-insensitive file system), and its NTFS aliases — trailing dots and
// spaces, an alternate data stream (.git::$INDEX_ALLOCATION), the short
// name GIT~1.
func IsGitDir(seg string) bool {
	if i := strings.IndexByte(seg, ':'); i >= 0 {
		seg = seg[:i]
	}
	seg = strings.TrimRight(seg, ". ")
	return strings.EqualFold(seg, ".git") || strings.EqualFold(seg, "git~1")
}

// isDrive reports a Windows drive prefix: C:, C:/… or C:\….
func isDrive(s string) bool {
	return len(s) >= 2 && s[1] == ':' && isASCIILetter(s[0]) && (len(s) == 2 || s[2] == '/' || s[2] == '\\')
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// splitSegments splits s at the slashes that separate path segments: not
// those inside {alternatives}, which belong to the alternative. A character
// class may not contain a slash: doublestar would let it match the
// separator, which defeats segment-wise reasoning.
func splitSegments(s string) ([]string, *fail) {
	var segs []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			end := classEnd(s, i)
			if end < 0 {
				continue // unclosed; ValidatePattern refuses it later
			}
			if strings.Contains(s[i+1:end], "/") {
				return nil, refuse("a character class cannot contain /", "a pattern such as src/[ab]*.py", "")
			}
			i = end
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case '/':
			if depth == 0 {
				segs = append(segs, s[start:i])
				start = i + 1
			}
		}
	}
	return append(segs, s[start:]), nil
}

// classEnd returns the index of the `]` closing the class opened at s[i],
// or -1. Like doublestar, the class ends at the first `]` after the `[`.
func classEnd(s string, i int) int {
	j := strings.IndexByte(s[i+1:], ']')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// expandBraces expands {a,b} alternatives textually, as doublestar matches
// them, skipping character classes. It reports false for unbalanced braces
// or more than limit results.
func expandBraces(s string, limit int) ([]string, bool) {
	i := 0
	for i < len(s) {
		switch s[i] {
		case '[':
			if end := classEnd(s, i); end >= 0 {
				i = end + 1
				continue
			}
			return nil, false
		case '{':
			goto found
		case '}':
			return nil, false
		}
		i++
	}
	return []string{s}, true
found:
	end := closingBrace(s, i)
	if end < 0 {
		return nil, false
	}
	rest, ok := expandBraces(s[end+1:], limit)
	if !ok {
		return nil, false
	}
	var out []string
	for _, alt := range splitAlternatives(s[i+1 : end]) {
		xs, ok := expandBraces(alt, limit)
		if !ok {
			return nil, false
		}
		for _, x := range xs {
			for _, r := range rest {
				if len(out) >= limit {
					return nil, false
				}
				out = append(out, s[:i]+x+r)
			}
		}
	}
	return out, true
}

// closingBrace returns the index of the `}` matching the `{` at s[i], or -1.
func closingBrace(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '[':
			end := classEnd(s, j)
			if end < 0 {
				return -1
			}
			j = end
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// splitAlternatives splits the inside of a {…} group at its top-level commas.
func splitAlternatives(s string) []string {
	var alts []string
	depth, start := 0, 0
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '[':
			if end := classEnd(s, j); end >= 0 {
				j = end
			}
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				alts = append(alts, s[start:j])
				start = j + 1
			}
		}
	}
	return append(alts, s[start:])
}
