package diffpath

import "strings"

// Normalize returns p as a clean repository-relative POSIX path, the form in
// which git itself names files in its index:
//
//   - "" is refused, and so is a path that cleans to nothing ("." or "a/..");
//   - a leading "/" is refused: git never prints absolute paths for tracked
//     files, so one can only come from a plain diff of files outside a repo;
//   - "." components and repeated or trailing slashes are dropped
//     ("./a//b/" → "a/b");
//   - ".." removes the previous component and is refused when it would leave
//     the repository ("../x", "a/../../x");
//   - a component equal to ".git" in any letter case is refused (git refuses
//     such paths too, and case-insensitive file systems would honour them);
//   - a NUL byte is refused.
//
// Backslashes are ordinary characters in git paths on POSIX and are kept, as
// are spaces, newlines and bytes that are not valid UTF-8.
//
// Normalize is idempotent, and it does not allocate when p is already clean.
func Normalize(p string) (string, error) {
	if p == "" {
		return "", &PathError{Path: p, Reason: "empty path"}
	}
	if p[0] == '/' {
		return "", &PathError{Path: p, Reason: "absolute path; want a path relative to the repository root"}
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Reason: "contains a NUL byte"}
	}
	if isClean(p) {
		return p, nil
	}
	var comps []string
	rest := p
	for rest != "" {
		var c string
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			c, rest = rest[:i], rest[i+1:]
		} else {
			c, rest = rest, ""
		}
		switch {
		case c == "" || c == ".":
		case c == "..":
			if len(comps) == 0 {
				return "", &PathError{Path: p, Reason: `".." escapes the repository`}
			}
			comps = comps[:len(comps)-1]
		case isDotGit(c):
			return "", &PathError{Path: p, Reason: "names a .git directory"}
		default:
			comps = append(comps, c)
		}
	}
	if len(comps) == 0 {
		return "", &PathError{Path: p, Reason: "names the repository root, not a file"}
	}
	return strings.Join(comps, "/"), nil
}

// isClean reports whether p needs no rewriting: no empty, ".", ".." or .git
// component. .git is checked here too so that the fast path refuses it.
func isClean(p string) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		c := p[start:i]
		if c == "" || c == "." || c == ".." || isDotGit(c) {
			return false
		}
		start = i + 1
	}
	return true
}

func isDotGit(c string) bool {
	return len(c) == 4 && strings.EqualFold(c, ".git")
}
