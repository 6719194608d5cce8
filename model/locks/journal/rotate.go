package journal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/lockgate/lockgate/internal/safefs"
)

// A journal grows by one line an event. Rotate keeps it short: once the
// file passes a size, and every event in it is on the workflow branch,
// the file is renamed to its previous segment (PreviousPath, replacing
// the one before), and the next Append starts a new file. The previous
// segment stays for readers of the journal alone (the board, a log whose
// branch cannot be read); the one it replaces held only events that were
// on the branch when it was rotated.
//
// The rename happens under the journal's exclusive lock, the one every
// Append takes: an appender that waited for the lock on the renamed file
// sees that the path names another file now, and appends to that one
// (Append reopens the path). A crash leaves the file either not renamed
// or renamed whole: there is no step between.

// PreviousPath is where the journal's previous segment is kept.
func (j *Journal) PreviousPath() string { return j.path + ".1" }

// Rotate renames the journal to its previous segment when it holds at
// least maxBytes (0 or less: never) and onBranch, given every event of
// it, says that they are all on the workflow branch. It reports whether
// it did. Appends wait while onBranch runs, and none can slip in between
// the check and the rename. A line that is not an event keeps the
// journal from rotating, as one not on the branch does: the previous
// segment holds only events, all on the branch, so that its readers may
// pass over it (see ReadAfter).
func (j *Journal) Rotate(maxBytes int64, onBranch func([]Event) (bool, error)) (bool, error) {
	if maxBytes <= 0 {
		return false, nil
	}
	if err := safefs.CheckDirs(filepath.Dir(j.path), 1); err != nil {
		return false, fmt.Errorf("rotate journal: %w", err)
	}
	f, err := safefs.OpenFile(j.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("rotate journal: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() < maxBytes {
		return false, err // the common case: no lock taken
	}
	if err := lockFile(f, true); err != nil {
		return false, fmt.Errorf("rotate journal %s: lock: %w", j.path, err)
	}
	defer func() { _ = unlockFile(f) }()
	fi, err := f.Stat()
	if err != nil || fi.Size() < maxBytes || !j.isCurrent(fi) {
		return false, err // rotated meanwhile by another process
	}
	var evs []Event
	damaged := false
	err = scan(io.NewSectionReader(f, 0, fi.Size()), func(_ int, ev Event) error {
		evs = append(evs, ev)
		return nil
	}, func(*CorruptLineError) { damaged = true })
	if err != nil {
		return false, fmt.Errorf("rotate journal %s: %w", j.path, err)
	}
	if damaged {
		// A line that is not an event may be a lost lock event: it stays
		// where verify and workflow sync name it, until it is fixed.
		return false, nil
	}
	ok, err := onBranch(evs)
	if err != nil || !ok {
		return false, err
	}
	if err := os.Rename(j.path, j.PreviousPath()); err != nil {
		return false, fmt.Errorf("rotate journal: %w", err)
	}
	syncDir(filepath.Dir(j.path))
	return true, nil
}

// isCurrent reports whether fi, of an open file, is the file at the
// journal's path: not renamed away by a rotation.
func (j *Journal) isCurrent(fi os.FileInfo) bool {
	at, err := os.Lstat(j.path)
	return err == nil && os.SameFile(fi, at)
}
