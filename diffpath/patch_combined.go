package diffpath

import (
	"slices"
	"strings"
)

// The combined diffs of merges: "diff --cc" and "diff --combined"
// sections, with the rename sources --combined-all-paths names.

// combinedSection parses "diff --cc path" or "diff --combined path", git's
// combined diff of a merge (git show, git diff during a conflict). The path
// carries no prefix. With --combined-all-paths there is one "---" line per
// parent, naming the file as that parent had it: a parent's other name is
// a rename source and is returned too.
func (p *patchParser) combinedSection(line int, rest string) error {
	name, err := headerName(rest)
	if err != nil {
		return p.syntax(line, "bad name in combined diff header: %v", err)
	}
	path, err := p.normalize(line, *name)
	if err != nil {
		return err
	}
	st := byte('M')
	var olds []string
headers:
	for {
		raw, ok := p.lr.peek(0)
		if !ok {
			break
		}
		h := trimCR(raw)
		switch {
		case strings.HasPrefix(h, "new file mode "):
			st = 'A'
		case strings.HasPrefix(h, "deleted file mode "):
			st = 'D'
		case strings.HasPrefix(h, "index "), strings.HasPrefix(h, "mode "),
			strings.HasPrefix(h, "similarity index "), strings.HasPrefix(h, "dissimilarity index "):
		case strings.HasPrefix(h, "--- "):
			// One "---" line, or one per parent with
			// --combined-all-paths, then "+++".
			n := 1
			for {
				next, ok := p.lr.peek(n)
				if ok && strings.HasPrefix(trimCR(next), "--- ") && n < 64 {
					n++
					continue
				}
				if !ok || !strings.HasPrefix(trimCR(next), "+++ ") {
					return p.syntax(p.lr.n+1, "%q is not followed by a \"+++ \" line", h)
				}
				break
			}
			at := p.lr.n + 1
			var minus []string
			for i := 0; i < n; i++ {
				raw, _ := p.lr.next()
				minus = append(minus, trimCR(raw)[len("--- "):])
			}
			raw, _ := p.lr.next()
			if n > 1 {
				if olds, err = p.combinedSources(at, *name, path, minus, trimCR(raw)[len("+++ "):]); err != nil {
					return err
				}
			}
			if err := p.hunks(); err != nil {
				return err
			}
			break headers
		default:
			break headers
		}
		p.lr.next()
	}
	if len(olds) == 0 {
		p.add(Change{Status: st, Path: path})
	}
	for _, old := range olds {
		p.add(Change{Status: 'R', Path: path, OldPath: old})
	}
	return nil
}

// combinedSources returns the parents' names for the file that differ
// from name, the path of the merge result, given the --combined-all-paths
// "---" lines (from line at) and the "+++" line. The "+++" name is the
// destination prefix and name; the source prefix is the one a parent that
// kept the name shows, else the one paired with the destination prefix.
func (p *patchParser) combinedSources(at int, name, path string, minus []string, plus string) ([]string, error) {
	dst, dstNull, err := gitName(plus)
	if err != nil || dstNull {
		return nil, p.syntax(at+len(minus), "bad name in \"+++ %s\" of a combined diff", plus)
	}
	q, ok := strings.CutSuffix(*dst, name)
	if !ok {
		return nil, p.syntax(at+len(minus), "\"+++ %s\" does not name %q", plus, name)
	}
	names := make([]string, len(minus))
	src, known := "", false
	for i, m := range minus {
		n, _, err := gitName(m)
		if err != nil {
			return nil, p.syntax(at+i, "bad name in \"--- %s\": %v", m, err)
		}
		names[i] = *n
		if s, ok := strings.CutSuffix(*n, name); ok && !known {
			src, known = s, true
		}
	}
	if !known {
		switch q {
		case "":
			known = true
		case "b/":
			src, known = "a/", true
		}
	}
	if !known {
		return nil, p.syntax(at, "cannot tell the source prefix of the renamed %q in a combined diff; write it with git's default a/ b/ prefixes or --no-prefix", name)
	}
	var olds []string
	for i, n := range names {
		if n == "/dev/null" {
			continue
		}
		rest, ok := strings.CutPrefix(n, src)
		if !ok {
			return nil, p.syntax(at+i, "%q does not start with the prefix %q of the other names", n, src)
		}
		old, err := p.normalize(at+i, rest)
		if err != nil {
			return nil, err
		}
		if old != path && !slices.Contains(olds, old) {
			olds = append(olds, old)
		}
	}
	return olds, nil
}
