package diffpath

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxField bounds one NUL-terminated field so that garbage input without
// NULs cannot make a TreeReader buffer without limit. Paths are far shorter
// (PATH_MAX is 4096 on Linux).
const maxField = 1 << 20

// TreeReader reads the output of git diff-tree fed many commits:
//
//	git rev-list A..B | git diff-tree --stdin -r -z --name-status -M --root [--cc]
//
// For every commit with changes, git prints the commit's object name (40
// hex digits, or 64 in a SHA-256 repository) ended by NUL, then the
// commit's entries in the same -z form as ParseNameStatusZ or, with --raw,
// ParseRawZ. The parents git compared against are not printed. What
// follows from git's rules:
//
//   - a commit with no changes, and a root commit without --root, prints
//     nothing at all, so it is never returned;
//   - a merge prints nothing without -m, -c or --cc; with --cc or -c it
//     prints a header and one combined entry ("MM\0path\0") per path that
//     differs from every parent, and a header alone when the merge
//     resolved nothing by hand; with -m it prints the header once per
//     parent, each with that parent's diff, and Next returns each;
//   - a line of two tree names ("<tree> <tree>") compares two trees and is
//     printed with a newline, not a NUL, even with -z; Next returns it as
//     the commit string "<tree> <tree>";
//   - entries before any header (git diff-tree -r -z <tree> <tree> on the
//     command line) are returned under the commit "".
//
// Memory is bounded by one commit's changes: Next reads no further than the
// next header. Input lines that git echoes because they did not start with
// an object name are refused as a *SyntaxError, except blank ones.
type TreeReader struct {
	// CombinedAllPaths must be set when git ran with --combined-all-paths:
	// combined entries (--name-status or --raw) then carry one path per
	// parent before the result's, which the stream itself cannot tell
	// apart from the next entry when a path looks like a status.
	CombinedAllPaths bool

	br      *bufio.Reader
	off     int    // bytes consumed, for error positions
	scratch []byte // assembles fields longer than the bufio buffer
	carry   []byte // rest of a field that held newline-ended tree-pair headers
	inCarry bool   // carry is being consumed (it may be empty)

	header    string // header read ahead by the previous Next
	hasHeader bool
	err       error // sticky: io.EOF or the first error
}

// NewTreeReader returns a TreeReader reading r.
func NewTreeReader(r io.Reader) *TreeReader {
	return &TreeReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next commit header and its changes, with every path
// normalized. It returns io.EOF after the last commit; a malformed stream is
// a *SyntaxError (or a wrapped *PathError) and a read failure is returned as
// is. After an error, Next keeps returning it.
func (t *TreeReader) Next() (commit string, changes []Change, err error) {
	if t.err != nil {
		return "", nil, t.err
	}
	if t.hasHeader {
		commit, t.hasHeader = t.header, false
	} else {
		tok, nul, err := t.startToken()
		if err != nil {
			return "", nil, t.fail(err)
		}
		if h, ok := headerToken(tok, nul); ok {
			commit = h
		} else if changes, err = t.entry(tok, nul, changes); err != nil {
			return "", nil, t.fail(err)
		}
	}
	for {
		tok, nul, err := t.startToken()
		if errors.Is(err, io.EOF) {
			t.err = io.EOF // returned by the next call
			return commit, changes, nil
		}
		if err != nil {
			return "", nil, t.fail(err)
		}
		if h, ok := headerToken(tok, nul); ok {
			t.header, t.hasHeader = h, true
			return commit, changes, nil
		}
		if changes, err = t.entry(tok, nul, changes); err != nil {
			return "", nil, t.fail(err)
		}
	}
}

func (t *TreeReader) fail(err error) error {
	t.err = err
	return err
}

func (t *TreeReader) syntax(msg string) error {
	return &SyntaxError{Format: "diff-tree", Pos: t.off, Msg: msg}
}

// entry parses one entry whose status (name-status) or raw record has been
// read as tok, reads its paths and appends the Change.
func (t *TreeReader) entry(tok []byte, nul bool, changes []Change) ([]Change, error) {
	if !nul {
		return nil, t.syntax("unexpected line " + quoteField(tok) + " in diff-tree output; want a commit name or an entry")
	}
	var st status
	var ok bool
	if len(tok) > 0 && tok[0] == ':' {
		st, _, ok = parseRawHeader(string(tok))
	} else {
		st, ok = parseStatus(tok)
	}
	if !ok {
		return nil, t.syntax("invalid entry " + quoteField(tok) + "; want a status such as M or R087, a raw record, or a commit name (was diff-tree run with -z?)")
	}
	var buf [3]string
	paths := buf[:0]
	for n := st.paths(t.CombinedAllPaths); len(paths) < n; {
		at := t.off
		f, err := t.field()
		if errors.Is(err, io.EOF) {
			return nil, t.syntax("truncated entry: status " + st.letters + " wants more paths")
		}
		if err != nil {
			return nil, err
		}
		p, err := Normalize(string(f))
		if err != nil {
			return nil, posError("diff-tree", at, err)
		}
		paths = append(paths, p)
	}
	return append(changes, st.change(paths)), nil
}

// headerToken recognises a commit header (an object name ended by NUL) and
// a tree-pair header ("<tree> <tree>" ended by newline).
func headerToken(tok []byte, nul bool) (string, bool) {
	if nul {
		if isFullObjectName(tok) {
			return string(tok), true
		}
		return "", false
	}
	a, b, ok := bytes.Cut(tok, []byte{' '})
	if ok && isFullObjectName(a) && isFullObjectName(b) {
		return string(tok), true
	}
	return "", false
}

func isFullObjectName(b []byte) bool {
	if len(b) != 40 && len(b) != 64 {
		return false
	}
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

// startToken returns the token that starts a header or an entry: a
// NUL-ended field (nul true), or a newline-ended line (nul false), which
// git writes for a tree pair and for echoed input. Blank lines are skipped.
// It returns io.EOF at a clean end of input.
func (t *TreeReader) startToken() (tok []byte, nul bool, err error) {
	for {
		if !t.inCarry {
			f, err := t.field()
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, false, err
			}
			if errors.Is(err, io.EOF) && len(f) == 0 {
				return nil, false, io.EOF
			}
			if bytes.IndexByte(f, '\n') < 0 {
				if errors.Is(err, io.EOF) {
					return nil, false, t.syntax("truncated output: last field is not ended by NUL")
				}
				return f, true, nil
			}
			// Rare: tree-pair headers share the field with what follows.
			t.carry = append(t.carry[:0], f...)
			t.inCarry = true
			if errors.Is(err, io.EOF) {
				// Only whole lines may remain; a trailing
				// fragment must have been NUL-ended.
				if t.carry[len(t.carry)-1] != '\n' {
					return nil, false, t.syntax("truncated output: last field is not ended by NUL")
				}
			}
		}
		i := bytes.IndexByte(t.carry, '\n')
		if i < 0 {
			tok, t.inCarry = t.carry, false
			if len(tok) == 0 {
				continue // the field ended with a newline
			}
			return tok, true, nil
		}
		line := t.carry[:i]
		t.carry = t.carry[i+1:]
		if len(line) > 0 {
			return line, false, nil
		}
	}
}

// field reads one NUL-ended field, without its NUL. At end of input it
// returns the unterminated remainder with io.EOF. The slice is valid until
// the next read.
func (t *TreeReader) field() ([]byte, error) {
	line, err := t.br.ReadSlice(0)
	t.off += len(line)
	if err == nil {
		return line[:len(line)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	t.scratch = append(t.scratch[:0], line...)
	for {
		line, err = t.br.ReadSlice(0)
		t.off += len(line)
		t.scratch = append(t.scratch, line...)
		if len(t.scratch) > maxField {
			return nil, t.syntax("field longer than 1 MiB; is this diff-tree -z output?")
		}
		switch {
		case err == nil:
			return t.scratch[:len(t.scratch)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return t.scratch, err
		}
	}
}
