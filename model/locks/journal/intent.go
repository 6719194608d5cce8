package journal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/safefs"
)

// An Intent is a change written down before it is made, with the events
// that record it: a writer killed between its change and appending the
// events leaves the intent behind, and Recover appends the events of what
// was done. A live writer holds an exclusive flock(2) on its intent, so
// that no one mistakes it for a dead one's.
//
// Intents live in the directory "intents" beside the journal, one file
// each, written under a temporary name and renamed into place once locked.
type Intent struct {
	f    *os.File
	path string
}

// tmpIntent starts the names of intents being written.
const tmpIntent = ".new-"

func (j *Journal) intentDir() string { return filepath.Join(filepath.Dir(j.path), "intents") }

// Intend checks that the journal can be appended to and writes data as an
// intent, flushed to disk. An error means nothing was written: the change
// must not be made.
func (j *Journal) Intend(data []byte) (*Intent, error) { return j.intend(data, true) }

// IntendWritten is Intend without the flush to disk, for a writer that
// appends with AppendWritten.
func (j *Journal) IntendWritten(data []byte) (*Intent, error) { return j.intend(data, false) }

func (j *Journal) intend(data []byte, sync bool) (_ *Intent, err error) {
	if err := j.writable(); err != nil {
		return nil, fmt.Errorf("journal %s cannot be written: %w", j.path, err)
	}
	dir := j.intentDir()
	// intents/ and the state directory above it, never through a link.
	if err := safefs.MkdirAll(dir, 0o777, 2); err != nil {
		return nil, fmt.Errorf("journal intents: %w", err)
	}
	f, err := os.CreateTemp(dir, tmpIntent+"*")
	if err != nil {
		return nil, fmt.Errorf("journal intent: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
			_ = f.Close()
			err = fmt.Errorf("journal intent %s: %w", f.Name(), err)
		}
	}()
	if err := lockFile(f, true); err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		return nil, err
	}
	if sync {
		if err := datasync(f); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dir, NewID()+".json")
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, err
	}
	if sync {
		syncDir(dir)
	}
	return &Intent{f: f, path: path}, nil
}

// writable checks that the journal file can be opened for appending; a
// link at its place is refused, never followed (nor its target created).
func (j *Journal) writable() error {
	if err := safefs.MkdirAll(filepath.Dir(j.path), 0o777, 1); err != nil {
		return err
	}
	f, err := safefs.OpenFile(j.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	return f.Close()
}

// Done removes the intent: its events are in the journal, or its change
// was not made.
func (in *Intent) Done() error {
	err := os.Remove(in.path)
	_ = in.f.Close()
	if err != nil {
		return fmt.Errorf("remove journal intent: %w", err)
	}
	return nil
}

// Leave lets go of the intent without removing it: its change was made but
// its events could not be appended, which Recover does later.
func (in *Intent) Leave() { _ = in.f.Close() }

// HasIntents reports whether any intent is left in the journal's
// directory (settled or not): a cheap look before Recover, for readers
// that need the lock store only to settle intents.
func (j *Journal) HasIntents() bool {
	dir := j.intentDir()
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return true // for Recover to refuse
	}
	ents, err := os.ReadDir(dir)
	return err == nil && len(ents) > 0
}

// Recover settles the intents their writers left behind: for each, fn
// returns the events of what was done (from the intent's data), and those
// not yet in the journal are appended; then the intent is removed. Intents
// of live writers are left alone. An error from fn stops Recover and keeps
// the intent.
func (j *Journal) Recover(fn func(data []byte) ([]Event, error)) error {
	dir := j.intentDir()
	if err := safefs.CheckDirs(dir, 2); err != nil {
		return fmt.Errorf("journal intents: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal intents: %w", err)
	}
	for _, ent := range ents {
		path := filepath.Join(dir, ent.Name())
		if err := j.recoverOne(path, fn); err != nil {
			return fmt.Errorf("journal intent %s: %w", path, err)
		}
	}
	return nil
}

func (j *Journal) recoverOne(path string, fn func([]byte) ([]Event, error)) error {
	f, err := safefs.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // settled meanwhile
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if ok, err := tryLockFile(f); !ok || err != nil {
		return err // its writer is at work
	}
	// Whoever held the lock before us may have settled and removed it.
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if pi, err := os.Stat(path); err != nil || !os.SameFile(fi, pi) {
		return nil
	}
	if strings.HasPrefix(filepath.Base(path), tmpIntent) {
		// Not renamed into place: its writer died before its change, or
		// has only just created it and not locked it yet.
		if time.Since(fi.ModTime()) > time.Minute {
			return os.Remove(path)
		}
		return nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	evs, err := fn(data)
	if err != nil {
		return err
	}
	if len(evs) > 0 {
		// Read what the journal holds now, under this intent's lock: a
		// recoverer killed after appending these events but before
		// removing the intent has added them since any earlier read.
		present, err := j.ids()
		if err != nil {
			return err
		}
		var missing []Event
		for _, ev := range evs {
			if !present[ev.ID] {
				missing = append(missing, ev)
			}
		}
		if err := j.Append(missing...); err != nil {
			return err
		}
	}
	return os.Remove(path)
}

// ids returns the ids of the journal's events. Unlike Scan it reads past
// corrupt lines: recovery must not stop at a line torn long ago.
func (j *Journal) ids() (map[string]bool, error) {
	ids := map[string]bool{}
	f, err := safefs.OpenFile(j.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return ids, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if ev, perr := ParseLine(line); perr == nil {
			ids[ev.ID] = true
		}
		if errors.Is(err, io.EOF) {
			return ids, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
