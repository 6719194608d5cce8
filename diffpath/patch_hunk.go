package diffpath

import (
	"bytes"
	"strconv"
	"strings"
)

// Hunks, skipped by the line counts of their "@@ -a,b +c,d @@" headers so
// that content lines that look like headers stay content.

// hunks skips the hunks that follow a file header, using each hunk header's
// line counts so that content lines are never taken for headers.
func (p *patchParser) hunks() error {
	for {
		raw, ok := p.lr.peek(0)
		if !ok || !bytes.HasPrefix(raw, []byte("@@")) {
			return nil
		}
		p.lr.next()
		line := p.lr.n
		old, nw, ok := parseHunkHeader(trimCR(raw))
		if !ok {
			return p.syntax(line, "malformed hunk header %s", quoteField(trimCR(raw)))
		}
		if err := p.hunkBody(line, old, nw); err != nil {
			return err
		}
	}
}

// hunkBody consumes the lines of one hunk. A unified hunk line starts with
// ' ', '-' or '+'; a combined hunk line has one such column per parent:
// a line with a '-' column is in the parents marked '-' and not in the
// result, any other line is in the result and in the parents marked ' '.
func (p *patchParser) hunkBody(header int, old []int, nw int) error {
	n := len(old)
	remaining := func() bool {
		if nw > 0 {
			return true
		}
		for _, o := range old {
			if o > 0 {
				return true
			}
		}
		return false
	}
	for remaining() {
		raw, ok := p.lr.peek(0)
		if !ok {
			return p.syntax(header, "truncated hunk: the patch ends before the hunk's last line")
		}
		at := p.lr.n + 1
		l := raw
		if len(l) > 0 && l[len(l)-1] == '\r' {
			l = l[:len(l)-1]
		}
		switch {
		case len(l) == 0:
			// Mailers strip the space of an empty context line;
			// git apply accepts that, and so do we.
			nw--
			for i := range old {
				old[i]--
			}
		case l[0] == '\\': // "\ No newline at end of file"
		default:
			if len(l) < n {
				return p.syntax(at, "corrupt hunk line %s: want %d columns of ' ', '-' or '+'", quoteField(l), n)
			}
			cols := l[:n]
			if len(bytes.Trim(cols, " +-")) != 0 {
				return p.syntax(at, "corrupt hunk line %s: the hunk header at line %d promises more lines", quoteField(l), header)
			}
			if bytes.IndexByte(cols, '-') >= 0 {
				for i := range old {
					if cols[i] == '-' {
						old[i]--
					}
				}
			} else {
				nw--
				for i := range old {
					if cols[i] == ' ' {
						old[i]--
					}
				}
			}
		}
		if nw < 0 {
			return p.syntax(at, "hunk at line %d has more lines than its header says", header)
		}
		for _, o := range old {
			if o < 0 {
				return p.syntax(at, "hunk at line %d has more lines than its header says", header)
			}
		}
		p.lr.next()
	}
	for {
		raw, ok := p.lr.peek(0)
		if !ok || len(raw) == 0 || raw[0] != '\\' {
			return nil
		}
		p.lr.next()
	}
}

// parseHunkHeader parses "@@ -a[,b] +c[,d] @@ …" and its combined form
// "@@@ -a,b -c,d +e,f @@@", returning the old-side count of each parent
// and the new-side count (a missing count means 1).
func parseHunkHeader(h string) (old []int, nw int, ok bool) {
	k := 0
	for k < len(h) && h[k] == '@' {
		k++
	}
	if k < 2 || k > 64 {
		return nil, 0, false
	}
	rest := h[k:]
	old = make([]int, k-1)
	for i := range old {
		var ok bool
		if old[i], rest, ok = hunkRange(rest, " -"); !ok {
			return nil, 0, false
		}
	}
	if nw, rest, ok = hunkRange(rest, " +"); !ok {
		return nil, 0, false
	}
	if !strings.HasPrefix(rest, " "+h[:k]) {
		return nil, 0, false
	}
	return old, nw, true
}

// hunkRange parses lead followed by "start[,count]" and returns count.
func hunkRange(s, lead string) (count int, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, lead)
	if !ok {
		return 0, "", false
	}
	num := func() (int, bool) {
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		if i == 0 || i > 9 { // 9 digits: no overflow, far beyond any file
			return 0, false
		}
		n, _ := strconv.Atoi(s[:i])
		s = s[i:]
		return n, true
	}
	if _, ok = num(); !ok {
		return 0, "", false
	}
	count = 1
	if strings.HasPrefix(s, ",") {
		s = s[1:]
		if count, ok = num(); !ok {
			return 0, "", false
		}
	}
	return count, s, true
}
