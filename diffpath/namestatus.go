package diffpath

import (
	"bytes"
	"strconv"
	"strings"
)

// ParseNameStatusZ parses the output of
//
//	git diff --name-status -z [-M] [-C] [--cached] …
//	git diff-tree -r --name-status -z <tree> <tree>
//
// Each entry is a status field and one or two paths, every field ended by
// NUL; paths are written verbatim, never quoted:
//
//	M\0path\0
//	R087\0old\0new\0
//	C100\0src\0dst\0
//	U\0path\0           (unmerged, during a conflicted merge)
//	MM\0path\0          (combined diff of a merge: one letter per parent)
//
// A combined entry is read with exactly one path, which is what git prints
// without --combined-all-paths; use ParseRawZ or a TreeReader with
// CombinedAllPaths for that option. Every path goes through Normalize. The
// result keeps git's order and every entry (during a conflicted merge git
// lists a path twice, "U" and "M"). Empty input gives no changes and no
// error. Output that is not NUL terminated (a missing -z) is a
// *SyntaxError; so is --name-only output, which has no status fields.
//
// Paths are substrings of one string copy of data, so a large diff costs
// one allocation for the text and one for the slice.
func ParseNameStatusZ(data []byte) ([]Change, error) {
	const format = "name-status"
	if len(data) == 0 {
		return nil, nil
	}
	if data[len(data)-1] != 0 {
		return nil, &SyntaxError{Format: format, Pos: len(data), Msg: "output does not end with NUL; was it produced with -z?"}
	}
	s := string(data)
	// Every entry has at least two fields; counting NULs sizes the slice
	// at most twice too large, which is cheaper than growing it.
	out := make([]Change, 0, bytes.Count(data, []byte{0})/2)
	var paths [2]string
	pos := 0
	for pos < len(s) {
		start := pos
		field, next := cutField(s, pos)
		st, ok := parseStatus(field)
		if !ok {
			return nil, &SyntaxError{Format: format, Pos: start, Msg: "invalid status field " + quoteField(field) + "; want a status letter such as M or R087 (was it produced with -z --name-status?)"}
		}
		pos = next
		n := st.paths(false)
		for i := 0; i < n; i++ {
			if pos >= len(s) {
				return nil, &SyntaxError{Format: format, Pos: pos, Msg: "truncated entry: status " + st.letters + " wants more paths"}
			}
			at := pos
			p, next := cutField(s, pos)
			np, err := Normalize(p)
			if err != nil {
				return nil, posError(format, at, err)
			}
			paths[i], pos = np, next
		}
		out = append(out, st.change(paths[:n]))
	}
	return out, nil
}

// ParseRawZ parses the output of git diff --raw -z (and diff-index,
// diff-files, diff-tree -r with --raw -z):
//
//	:100644 100644 <sha1> <sha1> M\0path\0
//	:100644 100644 <sha1> <sha1> R100\0old\0new\0
//	::100644 100644 100644 <sha1> <sha1> <sha1> MM\0path\0    (combined, a merge)
//
// Object names may be full or abbreviated (git diff --raw abbreviates them
// unless given --full-index or --abbrev=40); they are checked for shape and
// otherwise ignored. A combined record (one ':' per parent) is followed by
// the result's path, or with --combined-all-paths by each parent's path and
// then the result's; the second form is recognised because the field after
// the first path is then not the start of another raw record. See combine
// for how a combined record becomes a Change.
func ParseRawZ(data []byte) ([]Change, error) {
	const format = "raw"
	if len(data) == 0 {
		return nil, nil
	}
	if data[len(data)-1] != 0 {
		return nil, &SyntaxError{Format: format, Pos: len(data), Msg: "output does not end with NUL; was it produced with -z?"}
	}
	s := string(data)
	out := make([]Change, 0, bytes.Count(data, []byte{0})/2)
	var paths []string
	pos := 0
	for pos < len(s) {
		start := pos
		field, next := cutField(s, pos)
		st, parents, ok := parseRawHeader(field)
		if !ok {
			return nil, &SyntaxError{Format: format, Pos: start, Msg: "invalid raw record " + quoteField(field) + "; want \":<modes> <objects> <status>\" (was it produced with -z --raw?)"}
		}
		pos = next
		n := st.paths(false)
		if st.combined() {
			// With --combined-all-paths the first path is followed by
			// more paths, not by the next record.
			if _, after := cutField(s, pos); after < len(s) {
				f, _ := cutField(s, after)
				if _, _, isRecord := parseRawHeader(f); !isRecord {
					n = parents + 1
				}
			}
		}
		paths = paths[:0]
		for i := 0; i < n; i++ {
			if pos >= len(s) {
				return nil, &SyntaxError{Format: format, Pos: pos, Msg: "truncated record: status " + st.letters + " wants more paths"}
			}
			at := pos
			p, next := cutField(s, pos)
			np, err := Normalize(p)
			if err != nil {
				return nil, posError(format, at, err)
			}
			paths, pos = append(paths, np), next
		}
		out = append(out, st.change(paths))
	}
	return out, nil
}

// cutField returns the NUL-terminated field at s[pos:] and the position after
// its NUL. The callers have checked that s ends with NUL.
func cutField(s string, pos int) (string, int) {
	i := strings.IndexByte(s[pos:], 0)
	if i < 0 {
		return s[pos:], len(s)
	}
	return s[pos : pos+i], pos + i + 1
}

// parseRawHeader parses ":<mode>… <object>… <status>", with one ':' per
// parent, as many modes and objects as parents plus one, and one status
// letter per parent.
func parseRawHeader(f string) (st status, parents int, ok bool) {
	for parents < len(f) && f[parents] == ':' {
		parents++
	}
	if parents == 0 {
		return status{}, 0, false
	}
	rest := f[parents:]
	for i := 0; i < 2*(parents+1); i++ {
		sp := strings.IndexByte(rest, ' ')
		if sp < 0 {
			return status{}, 0, false
		}
		tok := rest[:sp]
		if i <= parents && !isMode(tok) || i > parents && !IsObjectName(tok) {
			return status{}, 0, false
		}
		rest = rest[sp+1:]
	}
	st, ok = parseStatus(rest)
	if !ok || len(st.letters) != parents {
		return status{}, 0, false
	}
	return st, parents, true
}

func isMode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isOctal(s[i]) {
			return false
		}
	}
	return true
}

// IsObjectName accepts a full or abbreviated hex object name, with the
// "..." git appends to abbreviated names in some configurations.
func IsObjectName(s string) bool {
	s = strings.TrimSuffix(s, "...")
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

// quoteField quotes a field for an error message, shortened so that a
// megabyte of garbage does not end up in a terminal.
func quoteField[T ~string | ~[]byte](f T) string {
	const max = 60
	if len(f) > max {
		return strconv.Quote(string(f[:max])) + "…"
	}
	return strconv.Quote(string(f))
}
