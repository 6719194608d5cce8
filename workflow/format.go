package workflow

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The branch's format. Format 1 (no `format` blob) kept every event of the
// history in the tip's tree: each push made the remote's connectivity check
// read that whole tree, which grew with the history. Format 2 names itself
// in a blob events/format in every commit, and a commit's events/ holds
// only the events of its segment: those it adds and, while the
// segment is small, those of the commits before it in the segment. The
// events of the branch are the union of the event files of every commit
// it reaches; a commit that moves a format-1 branch to format 2 (Migrate)
// holds the format-1 tip's whole events tree once and names that tip as a
// base, so that a reader walks the commits down to the bases and no
// further. The blob is in events/, not beside it, so that an earlier
// lockgate, which reads only the tip's events/ and refuses a file there
// that is not an event, refuses the branch rather than read a part of it
// as the whole log.
const (
	formatFile    = "format"
	formatHeader  = "lockgate workflow\n"
	formatVersion = 2
	// maxFormatBytes bounds the format blob a reader accepts.
	maxFormatBytes = 64 << 10
	// segmentShards is how many shard directories events/ may hold before
	// the next commit starts a new segment: a tip tree, and so what a push
	// or a fetch reads of it, stays at about this many events whatever the
	// length of the history.
	segmentShards = 64
)

// errFormat reports a format blob lockgate cannot read.
var errFormat = errors.New("not a workflow branch format lockgate knows")

// branchFormat is what a format blob says.
type branchFormat struct {
	version int
	// bases are the format-1 commits whose events a commit of this
	// history holds in its tree (the commit that migrated each): a
	// reader walks no further down than them. Sorted, no repeats.
	bases []string
}

// encode returns the format blob of f.
func (f branchFormat) encode() []byte {
	var b strings.Builder
	b.WriteString(formatHeader)
	fmt.Fprintf(&b, "format %d\n", f.version)
	for _, base := range f.bases {
		b.WriteString("base " + base + "\n")
	}
	return []byte(b.String())
}

// parseFormat reads a format blob: the header line, `format 2`, then
// `base <object name>` lines in sorted order, each line ending in a
// newline. Anything else is an errFormat error; a higher version says a
// newer lockgate wrote the branch.
func parseFormat(b []byte) (branchFormat, error) {
	var f branchFormat
	if len(b) > maxFormatBytes {
		return f, fmt.Errorf("%w: a format blob of %d bytes", errFormat, len(b))
	}
	s, ok := strings.CutPrefix(string(b), formatHeader)
	if !ok {
		return f, fmt.Errorf("%w: the format blob does not start with %q", errFormat, strings.TrimSpace(formatHeader))
	}
	line, s, ok := strings.Cut(s, "\n")
	if !ok {
		return f, fmt.Errorf("%w: no format line", errFormat)
	}
	v, ok := strings.CutPrefix(line, "format ")
	switch {
	case !ok:
		return f, fmt.Errorf("%w: %q is not a format line", errFormat, line)
	case v != fmt.Sprint(formatVersion):
		if n, err := strconv.Atoi(v); err == nil && n > formatVersion && strconv.Itoa(n) == v {
			return f, fmt.Errorf("%w: format %d is newer than this lockgate's (%d): upgrade lockgate", errFormat, n, formatVersion)
		}
		return f, fmt.Errorf("%w: format %q", errFormat, v)
	}
	f.version = formatVersion
	for s != "" {
		line, s, ok = strings.Cut(s, "\n")
		base, isBase := strings.CutPrefix(line, "base ")
		switch {
		case !ok:
			return f, fmt.Errorf("%w: the last line has no newline", errFormat)
		case !isBase || !objectName(base):
			return f, fmt.Errorf("%w: %q is not a base line", errFormat, line)
		case len(f.bases) > 0 && f.bases[len(f.bases)-1] >= base:
			return f, fmt.Errorf("%w: base lines out of order", errFormat)
		}
		f.bases = append(f.bases, base)
	}
	return f, nil
}

// withBases returns f with bases added, sorted, without repeats.
func (f branchFormat) withBases(bases ...string) branchFormat {
	out := branchFormat{version: f.version, bases: append(slices.Clone(f.bases), bases...)}
	slices.Sort(out.bases)
	out.bases = slices.Compact(out.bases)
	return out
}
