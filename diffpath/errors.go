package diffpath

import (
	"fmt"
	"strconv"

	"github.com/lockgate/lockgate/internal/safetext"
)

// PathError reports a path that cannot name a file inside the repository:
// empty, absolute, escaping the repository with "..", naming a .git
// directory, or containing a NUL byte. Normalize returns it directly; the
// parsers wrap it with the position of the offending entry, so use
// errors.As to find it.
type PathError struct {
	Path   string // the path as it appeared in the input, after unquoting
	Reason string // why it was refused
}

func (e *PathError) Error() string {
	return "diffpath: invalid path " + strconv.Quote(safetext.Shorten(e.Path)) + ": " + e.Reason
}

// SyntaxError reports input that is not in the format the parser expects,
// for example name-status output without -z, a truncated record, or a
// corrupt hunk. A reader's own I/O errors are returned as they are, so a
// caller can tell "bad input" (PathError, SyntaxError) from "could not read".
type SyntaxError struct {
	Format string // "name-status", "raw", "diff-tree" or "patch"
	Pos    int    // byte offset for the -z formats, 1-based line number for patches
	Msg    string
}

func (e *SyntaxError) Error() string {
	unit := "offset"
	if e.Format == "patch" {
		unit = "line"
	}
	return fmt.Sprintf("diffpath: %s: %s %d: %s", e.Format, unit, e.Pos, e.Msg)
}

// posError wraps err (usually a *PathError) with where it was found.
func posError(format string, pos int, err error) error {
	unit := "offset"
	if format == "patch" {
		unit = "line"
	}
	return fmt.Errorf("diffpath: %s: %s %d: %w", format, unit, pos, err)
}
