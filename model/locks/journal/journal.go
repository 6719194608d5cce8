package journal

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/safefs"
)

// Actions recorded in the journal. docs/formats.md names the lock_* and activity
// actions; the package, pause and bypass actions are lockgate's own.
const (
	ActionAcquire           = "lock_acquire"
	ActionRelease           = "lock_release"
	ActionRefresh           = "lock_refresh"
	ActionClear             = "lock_clear"
	ActionTakeover          = "lock_takeover"
	ActionClaimedActivity   = "claimed_activity"
	ActionCompletedTask     = "completed_task"
	ActionCompletedActivity = "completed_activity"
	ActionBlocked           = "blocked"
	ActionUnblocked         = "unblocked"
	ActionPivotStarted      = "pivot_started"
	ActionPivotCompleted    = "pivot_completed"
	ActionRecoveredActivity = "recovered_activity"
	ActionHookBypass        = "hook_bypass"
	ActionClaim             = "claimed_package"
	ActionDone              = "completed_package"
	// A work package's other transitions (its task record in the store).
	ActionPackageFailed   = "failed_package"
	ActionPackageReleased = "released_package"
	ActionPackageTakeover = "took_over_package"
	ActionPackageRetried  = "retried_package"
	ActionPackageReset    = "reset_package"
	ActionPause           = "pause"
	ActionUnpause         = "unpause"
	// ActionStoreUse: a clone's lock store was chosen (`lockgate store use`).
	ActionStoreUse = "store_use"
)

// MaxLineBytes bounds one encoded event. Append refuses larger events and
// Scan reports longer lines as corrupt, so a damaged file cannot make a
// reader buffer it whole.
const MaxLineBytes = 1 << 20

// Event is one journal line.
type Event struct {
	// ID is unique per event: 32 hex digits, the first 16 the creation time
	// in nanoseconds (so IDs sort roughly by time), the rest random. Set by
	// Append when empty.
	ID string `json:"id"`
	// Timestamp is set by Append when zero and always written in UTC.
	Timestamp  time.Time `json:"timestamp"`
	Worker     string    `json:"worker"`
	WorkerType string    `json:"worker_type"`
	Action     string    `json:"action"`
	Key        string    `json:"key,omitempty"`
	ActivityID string    `json:"activity_id,omitempty"`
	TaskID     string    `json:"task_id,omitempty"`
	Details    string    `json:"details,omitempty"`
	// Commit is the commit a completed_package event names as the one
	// that finished the package (`lockgate done --commit`). Events of
	// earlier versions lack it and say it in Details instead, as
	// "commit <sha>: <title>" (DoneCommit reads both).
	Commit  string `json:"commit,omitempty"`
	Session string `json:"session,omitempty"`
	// RequestID names the command run that made the event; TraceID is the
	// W3C trace id of the caller (TRACEPARENT), to correlate with its spans.
	RequestID string `json:"request_id,omitempty"`
	TraceID   string `json:"trace_id,omitempty"`
	// Fence and ExpiresAt describe the grant a lock event is about: the
	// fence of the record taken, renewed, refreshed, released or
	// cleared, and, for a take, renewal or refresh, when it expires from
	// then on. They let a clone rebuild from the log alone when each
	// grant was live (lockgate verify). Events of earlier versions lack
	// them.
	Fence     uint64     `json:"fence,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// Store names the lock store a lock event happened on ("file",
	// "git origin refs/lockgate/locks", a Redis URL without password).
	Store string `json:"store,omitempty"`
}

// DoneCommit is the commit a completed_package event names: its Commit,
// or, in an event of an earlier version, the one its Details begin with
// ("commit <sha>: <title>"). It is "" when the event names none (a done
// on a branch with no commit yet) or is of another action.
func (ev *Event) DoneCommit() string {
	if ev.Action != ActionDone {
		return ""
	}
	if ev.Commit != "" {
		return ev.Commit
	}
	rest, ok := strings.CutPrefix(ev.Details, "commit ")
	if !ok {
		return ""
	}
	sha, _, ok := strings.Cut(rest, ": ")
	if !ok || !isHex(sha) {
		return ""
	}
	return sha
}

// isHex reports whether s is a whole object name: 40 (SHA-1) or 64
// (SHA-256) lower-case hex digits.
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Journal is the event log at one path. The zero value is not usable; use
// Open. A Journal holds no open file between calls and is safe for
// concurrent use by goroutines and processes.
type Journal struct {
	path string
}

// Open returns the journal at path. Nothing is touched until the first
// Append, which creates the parent directory and the file as needed.
func Open(path string) *Journal { return &Journal{path: path} }

// Path returns the journal's file path.
func (j *Journal) Path() string { return j.path }

// CorruptLineError reports a journal line that is not a complete event: a
// torn write, a hand edit, a line that is not JSON.
type CorruptLineError struct {
	Path string // "" when reading from a stream
	Line int    // 1-based
	// Torn is set for the last line when it has no newline: a write torn
	// by a crash (or, read without the journal's lock, one in progress).
	Torn bool
	Err  error
}

func (e *CorruptLineError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("line %d: corrupt journal line: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: corrupt journal line: %v", e.Path, e.Line, e.Err)
}

func (e *CorruptLineError) Unwrap() error { return e.Err }

// NewID returns a fresh event id (see Event.ID).
func NewID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixNano()))
	_, _ = rand.Read(b[8:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// encode fills in missing ids and timestamps in evs and returns their
// lines, each ending in '\n'.
func encode(evs []Event) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range evs {
		ev := &evs[i]
		if ev.Action == "" {
			return nil, fmt.Errorf("event %d: action is empty", i)
		}
		if ev.Worker == "" {
			return nil, fmt.Errorf("event %d (%s): worker is empty", i, ev.Action)
		}
		if ev.ID == "" {
			ev.ID = NewID()
		}
		if ev.Timestamp.IsZero() {
			ev.Timestamp = time.Now()
		}
		ev.Timestamp = ev.Timestamp.UTC()
		if ev.ExpiresAt != nil {
			exp := ev.ExpiresAt.UTC()
			ev.ExpiresAt = &exp
		}
		start := buf.Len()
		if err := enc.Encode(ev); err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", i, ev.Action, err)
		}
		if n := buf.Len() - start; n > MaxLineBytes {
			return nil, fmt.Errorf("event %d (%s): %d bytes encoded, more than %d", i, ev.Action, n, MaxLineBytes)
		}
	}
	return buf.Bytes(), nil
}

// Append writes evs to the journal as one line each, all in one write, and
// syncs them to disk before returning. Missing IDs and timestamps are
// filled in, in evs itself, so the caller sees what was written. Either all
// events are written or (on error) none of them is left behind, as far as
// the file system allows. Appending no events does nothing.
func (j *Journal) Append(evs ...Event) error { return j.append(evs, true) }

// AppendWritten is Append without the flush to disk: it returns once the
// events are in the file, where they survive the death of this process but
// not of the machine. A long-lived writer that answers many calls uses it
// and flushes with Sync right after, off its callers' path.
func (j *Journal) AppendWritten(evs ...Event) error { return j.append(evs, false) }

// Sync flushes what was written to the journal to disk.
func (j *Journal) Sync() error {
	f, err := safefs.OpenFile(j.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync journal %s: %w", j.path, err)
	}
	defer f.Close()
	if err := datasync(f); err != nil {
		return fmt.Errorf("sync journal %s: %w", j.path, err)
	}
	return nil
}

func (j *Journal) append(evs []Event, sync bool) error {
	if len(evs) == 0 {
		return nil
	}
	buf, err := encode(evs)
	if err != nil {
		return fmt.Errorf("append to journal %s: %w", j.path, err)
	}
	if err := j.write(buf, sync); err != nil {
		return fmt.Errorf("append to journal %s: %w", j.path, err)
	}
	return nil
}

func (j *Journal) write(buf []byte, sync bool) (err error) {
	// The journal's directory and the file itself must be lockgate's own:
	// a symbolic link planted there must not redirect the append.
	if err := safefs.MkdirAll(filepath.Dir(j.path), 0o777, 1); err != nil {
		return err
	}
	var f *os.File
	for {
		f, err = safefs.OpenFile(j.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			return err
		}
		err = j.appendLocked(f, buf)
		if !errors.Is(err, errRotated) {
			break
		}
		// Rotated while this append waited for the lock: the path
		// names a new file, to append to instead.
		f.Close()
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err != nil || !sync {
		return err
	}
	// The lock only has to cover the write: syncing outside it lets
	// concurrent writers share one flush of the file's pages.
	if err := datasync(f); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

// errRotated says that the file an append opened was rotated away
// before the append held its lock.
var errRotated = errors.New("journal rotated")

// appendLocked writes buf at the end of f under an exclusive flock, or
// returns errRotated, writing nothing, when f is no longer the journal.
func (j *Journal) appendLocked(f *os.File, buf []byte) error {
	if err := lockFile(f, true); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer func() { _ = unlockFile(f) }()

	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !j.isCurrent(fi) {
		return errRotated
	}
	size := fi.Size()
	if size > 0 {
		// A crash can leave a torn last line. Close it so that it stays one
		// (corrupt, reported) line instead of swallowing our first event.
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return fmt.Errorf("read last byte: %w", err)
		}
		if last[0] != '\n' {
			buf = append([]byte{'\n'}, buf...)
		}
	}
	if n, err := f.Write(buf); err != nil {
		if n > 0 {
			// Do not leave a partial line behind (we hold the lock, so
			// nobody has written after us).
			_ = f.Truncate(size)
		}
		return err
	}
	if size == 0 {
		// The file may be new: make its directory entry durable too.
		syncDir(filepath.Dir(j.path))
	}
	return nil
}

func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// Read returns the events whose Timestamp is at or after since (all events
// when since is zero), in file order. A missing journal has no events.
func (j *Journal) Read(since time.Time) ([]Event, error) {
	var out []Event
	err := j.Scan(func(_ int, ev Event) error {
		if since.IsZero() || !ev.Timestamp.Before(since) {
			out = append(out, ev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadSkipping is Read that goes on past lines that are not events (a
// torn write, a hand edit): it returns them, in order, beside the events,
// so that one damaged line never hides the others.
func (j *Journal) ReadSkipping(since time.Time) ([]Event, []*CorruptLineError, error) {
	var out []Event
	var bad []*CorruptLineError
	err := j.scanFile(func(_ int, ev Event) error {
		if since.IsZero() || !ev.Timestamp.Before(since) {
			out = append(out, ev)
		}
		return nil
	}, func(ce *CorruptLineError) { bad = append(bad, ce) })
	if err != nil {
		return nil, nil, err
	}
	return out, bad, nil
}

// ReadRecent is ReadSkipping for a reader of the recent events only: a
// line that lockgate wrote (its id and timestamp first, nothing that
// could name the timestamp again; see quickTime) and whose timestamp is
// before since is passed over without being decoded, nor checked: a
// damaged line among them is not reported (ReadSkipping reports it).
// decoded counts the lines decoded.
func (j *Journal) ReadRecent(since time.Time) (evs []Event, bad []*CorruptLineError, decoded int, err error) {
	err = j.scanFileBefore(func(_ int, ev Event) error {
		decoded++
		if !ev.Timestamp.Before(since) {
			evs = append(evs, ev)
		}
		return nil
	}, func(ce *CorruptLineError) { bad = append(bad, ce) }, since)
	if err != nil {
		return nil, nil, 0, err
	}
	return evs, bad, decoded, nil
}

// Scan calls fn for every event in file order with its 1-based line number:
// the previous segment's (see Rotate) first, then the current one's, each
// numbering its lines from 1 (a CorruptLineError names the segment's
// path).
// It reads the file as it was when Scan started: events appended meanwhile
// are not seen, and a write in progress is never seen half done. A corrupt
// line stops the scan with a *CorruptLineError; an error from fn stops it
// and is returned unchanged. A missing journal has no events.
func (j *Journal) Scan(fn func(line int, ev Event) error) error {
	return j.scanFile(fn, nil)
}

// scanFile is Scan, or with skip set ScanReaderSkipping, over the file.
func (j *Journal) scanFile(fn func(line int, ev Event) error, skip func(*CorruptLineError)) error {
	return j.scanFileBefore(fn, skip, time.Time{})
}

// scanFileBefore is scanFile that passes over the complete lines quickTime
// dates before before (zero: none).
func (j *Journal) scanFileBefore(fn func(line int, ev Event) error, skip func(*CorruptLineError), before time.Time) error {
	if err := safefs.CheckDirs(filepath.Dir(j.path), 1); err != nil {
		return fmt.Errorf("read journal: %w", err)
	}
	// The current segment first, then the previous: a rotation between
	// the two opens makes them one file, read once, where the other
	// order would miss the file it renamed.
	cur, err := openSegment(j.path)
	if err != nil {
		return err
	}
	prev, err := openSegment(j.PreviousPath())
	if err != nil {
		cur.close()
		return err
	}
	if cur.f != nil && prev.f != nil && os.SameFile(cur.fi, prev.fi) {
		prev.close()
		prev = segment{}
	}
	defer cur.close()
	defer prev.close()
	for _, sg := range []segment{prev, cur} {
		if sg.f == nil {
			continue
		}
		if err := sg.scan(fn, skip, before); err != nil {
			return err
		}
	}
	return nil
}

// segment is one file of the journal, open, and its size under the
// journal's lock; f is nil when the file does not exist.
type segment struct {
	path string
	f    *os.File
	fi   os.FileInfo
	size int64
}

// openSegment opens the segment at path to read.
func openSegment(path string) (segment, error) {
	f, err := safefs.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return segment{}, nil
	}
	if err != nil {
		return segment{}, fmt.Errorf("read journal: %w", err)
	}
	// Writers hold the exclusive lock for the whole write: the size seen
	// under the shared lock ends at a line boundary.
	if err := lockFile(f, false); err != nil {
		f.Close()
		return segment{}, fmt.Errorf("read journal %s: lock: %w", path, err)
	}
	fi, err := f.Stat()
	_ = unlockFile(f)
	if err != nil {
		f.Close()
		return segment{}, fmt.Errorf("read journal: %w", err)
	}
	return segment{path: path, f: f, fi: fi, size: fi.Size()}, nil
}

func (sg segment) close() {
	if sg.f != nil {
		sg.f.Close()
	}
}

// scan is scanBefore over the segment, its corrupt lines named by its
// path.
func (sg segment) scan(fn func(line int, ev Event) error, skip func(*CorruptLineError), before time.Time) error {
	var named func(*CorruptLineError)
	if skip != nil {
		named = func(ce *CorruptLineError) {
			ce.Path = sg.path
			skip(ce)
		}
	}
	err := scanBefore(io.NewSectionReader(sg.f, 0, sg.size), fn, named, before)
	var ce *CorruptLineError
	if errors.As(err, &ce) && ce.Path == "" {
		ce.Path = sg.path
	}
	return err
}

// ReadFrom returns the events of the lines of the journal's current
// segment that start at byte offset off or later, and end, the offset
// just past the last line read that ends with its newline: a caller that
// keeps end and reads from it next time reads each complete line once,
// and a last line still without its newline again. end stops before the
// first line whose event the workflow branch holds otherwise than it
// reads here (see asWritten), so that the lines before end are events
// the branch gives back as they are, once committed. head names the
// segment the offset is in (a digest of its first line, as ReadFrom
// returns it: "" reads from the start); an offset of another segment (the
// journal was rotated since), or one the segment cannot have given (past
// its end, or not at the start of a line: the file was replaced or cut)
// reads the segment from the start. Lines that are not events are
// skipped (Scan and ReadSkipping report them).
func (j *Journal) ReadFrom(off int64, head string) (evs []Event, end int64, segment string, err error) {
	if err := safefs.CheckDirs(filepath.Dir(j.path), 1); err != nil {
		return nil, 0, "", fmt.Errorf("read journal: %w", err)
	}
	f, err := safefs.OpenFile(j.path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, "", nil
	}
	if err != nil {
		return nil, 0, "", fmt.Errorf("read journal: %w", err)
	}
	defer f.Close()
	// As in scanFile: the size seen under the shared lock ends a write.
	if err := lockFile(f, false); err != nil {
		return nil, 0, "", fmt.Errorf("read journal %s: lock: %w", j.path, err)
	}
	fi, err := f.Stat()
	_ = unlockFile(f)
	if err != nil {
		return nil, 0, "", fmt.Errorf("read journal: %w", err)
	}
	size := fi.Size()
	if segment, err = firstLineDigest(f, size); err != nil {
		return nil, 0, "", fmt.Errorf("read journal %s: %w", j.path, err)
	}
	if off < 0 || off > size || head != segment {
		off = 0
	}
	if off > 0 {
		var prev [1]byte
		if _, err := f.ReadAt(prev[:], off-1); err != nil {
			return nil, 0, "", fmt.Errorf("read journal %s: %w", j.path, err)
		}
		if prev[0] != '\n' {
			off = 0
		}
	}
	cr := &countingReader{r: io.NewSectionReader(f, off, size-off)}
	br := bufio.NewReaderSize(cr, 64<<10)
	end = off
	stuck := false // past a line that is not an event
	for {
		chunk, tooLong, rerr := readLine(br)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return nil, 0, "", fmt.Errorf("read journal %s: %w", j.path, rerr)
		}
		if !tooLong && len(bytes.TrimSpace(chunk)) > 0 {
			if ev, perr := ParseLine(chunk); perr == nil {
				evs = append(evs, ev)
				stuck = stuck || !asWritten(ev)
			} else {
				stuck = true
			}
		} else if tooLong {
			stuck = true
		}
		if rerr != nil {
			return evs, end, segment, nil
		}
		// end stops before a line that is not an event: a reader that
		// trusts the lines before end (ReadAfter) reads it again, and
		// reports it. It stops too before an event the workflow branch
		// holds otherwise (asWritten: one without an id, or dated in
		// another time zone), which a reader of the branch reads as
		// another event than this line's.
		if !stuck {
			end = off + cr.n - int64(br.Buffered())
		}
	}
}

// ReadAfter reads the lines of the journal's current segment from a
// mark ReadFrom gave (off, head), as ReadSkipping reads them: the events,
// and the lines that are not events (numbered from the segment's start).
// ok is false, and nothing read, when the mark is not of the current
// segment or cannot be one: the caller then reads the whole journal.
// decoded counts the lines decoded.
func (j *Journal) ReadAfter(off int64, head string) (evs []Event, bad []*CorruptLineError, decoded int, ok bool, err error) {
	return j.ReadRecentAfter(off, head, time.Time{})
}

// ReadRecentAfter is ReadAfter as ReadRecent reads: the events at or
// after since (zero: all), the lines quickTime dates before since passed
// over undecoded and unchecked. Of the lines from the mark on, it returns
// what ReadRecent returns of them.
func (j *Journal) ReadRecentAfter(off int64, head string, since time.Time) (evs []Event, bad []*CorruptLineError, decoded int, ok bool, err error) {
	if head == "" || off <= 0 {
		return nil, nil, 0, false, nil
	}
	if err := safefs.CheckDirs(filepath.Dir(j.path), 1); err != nil {
		return nil, nil, 0, false, fmt.Errorf("read journal: %w", err)
	}
	sg, err := openSegment(j.path)
	if err != nil || sg.f == nil {
		return nil, nil, 0, false, err
	}
	defer sg.close()
	segment, err := firstLineDigest(sg.f, sg.size)
	if err != nil {
		return nil, nil, 0, false, fmt.Errorf("read journal %s: %w", j.path, err)
	}
	if segment != head || off > sg.size {
		return nil, nil, 0, false, nil
	}
	var prev [1]byte
	if _, err := sg.f.ReadAt(prev[:], off-1); err != nil {
		return nil, nil, 0, false, fmt.Errorf("read journal %s: %w", j.path, err)
	}
	if prev[0] != '\n' {
		return nil, nil, 0, false, nil // not at the start of a line
	}
	err = scanBefore(io.NewSectionReader(sg.f, off, sg.size-off), func(_ int, ev Event) error {
		decoded++
		if since.IsZero() || !ev.Timestamp.Before(since) {
			evs = append(evs, ev)
		}
		return nil
	}, func(ce *CorruptLineError) {
		ce.Path = j.path
		bad = append(bad, ce)
	}, since)
	if err != nil {
		return nil, nil, 0, false, fmt.Errorf("read journal %s: %w", j.path, err)
	}
	if len(bad) > 0 {
		// A line named in a warning has its number in the file: the
		// lines before the mark are counted, only then.
		base, err := countLines(io.NewSectionReader(sg.f, 0, off))
		if err != nil {
			return nil, nil, 0, false, fmt.Errorf("read journal %s: %w", j.path, err)
		}
		for _, ce := range bad {
			ce.Line += base
		}
	}
	return evs, bad, decoded, true, nil
}

// tailBytes bounds how far back from a mark LastBefore reads.
const tailBytes = 1 << 20

// LastBefore returns the events of the last n lines of the journal's
// current segment before a mark ReadFrom gave (off, head), in file
// order: lines CatchUp saw committed, which the workflow branch holds as
// they are written here. It returns fewer when the segment has fewer
// lines before the mark, when they take more than tailBytes, or when one
// of them is not an event (then only those after it): a reader who
// narrows a read by them reads more then, never less. It returns nothing
// when the mark is not of the current segment.
func (j *Journal) LastBefore(off int64, head string, n int) ([]Event, error) {
	if head == "" || off <= 0 || n <= 0 {
		return nil, nil
	}
	if err := safefs.CheckDirs(filepath.Dir(j.path), 1); err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	sg, err := openSegment(j.path)
	if err != nil || sg.f == nil {
		return nil, err
	}
	defer sg.close()
	segment, err := firstLineDigest(sg.f, sg.size)
	if err != nil {
		return nil, fmt.Errorf("read journal %s: %w", j.path, err)
	}
	if segment != head || off > sg.size {
		return nil, nil
	}
	// Back from the mark, four times as far each time, until n lines
	// are read whole.
	for size := int64(16 << 10); ; size *= 4 {
		start := max(0, off-min(size, tailBytes))
		buf := make([]byte, off-start)
		if _, err := sg.f.ReadAt(buf, start); err != nil {
			return nil, fmt.Errorf("read journal %s: %w", j.path, err)
		}
		if buf[len(buf)-1] != '\n' {
			return nil, nil // not at the start of a line
		}
		body := buf[:len(buf)-1]
		if bytes.Count(body, []byte{'\n'}) < n && start > 0 && size < tailBytes {
			continue
		}
		lines := bytes.Split(body, []byte{'\n'})
		if start > 0 {
			lines = lines[1:] // begun before what was read
		}
		var evs []Event
		for _, line := range lines[max(0, len(lines)-n):] {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			ev, err := ParseLine(line)
			if err != nil {
				evs = nil
				continue
			}
			evs = append(evs, ev)
		}
		return evs, nil
	}
}

// countLines counts the newlines r reads.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n := 0
	for {
		m, err := r.Read(buf)
		n += bytes.Count(buf[:m], []byte{'\n'})
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// asWritten reports whether ev, read from a journal line, is what a
// reader of the workflow branch reads back of it: the branch holds the
// event as Append writes it (with its id, its times in UTC), which must
// decode to ev itself.
func asWritten(ev Event) bool {
	if ev.ID == "" {
		return false
	}
	w := ev
	w.Timestamp = w.Timestamp.UTC()
	if w.ExpiresAt != nil {
		exp := w.ExpiresAt.UTC()
		w.ExpiresAt = &exp
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(w) != nil {
		return false
	}
	back, err := ParseLine(buf.Bytes())
	return err == nil && reflect.DeepEqual(back, ev)
}

// firstLineDigest names a segment of the journal by its first line (up
// to MaxLineBytes of it): 16 hex digits of its SHA-256, "" for an empty
// file. Every event has an id of its own, so two segments do not begin
// with the same line.
func firstLineDigest(f *os.File, size int64) (string, error) {
	if size == 0 {
		return "", nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, min(size, MaxLineBytes+1)), 4096)
	h := sha256.New()
	for {
		chunk, err := br.ReadSlice('\n')
		h.Write(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		return hex.EncodeToString(h.Sum(nil)[:8]), nil
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ScanReader is Scan over any stream of journal lines (a copy of the
// journal, a file from the workflow branch). Blank lines are skipped; a
// last line without a newline is accepted when it is a complete event.
func ScanReader(r io.Reader, fn func(line int, ev Event) error) error {
	return scan(r, fn, nil)
}

// ScanReaderSkipping is ScanReader that goes on past lines that are not
// events: it passes each to skip instead of stopping there.
func ScanReaderSkipping(r io.Reader, fn func(line int, ev Event) error, skip func(*CorruptLineError)) error {
	return scan(r, fn, skip)
}

// scan reads journal lines from r; with skip nil the first corrupt line
// ends it.
func scan(r io.Reader, fn func(line int, ev Event) error, skip func(*CorruptLineError)) error {
	return scanBefore(r, fn, skip, time.Time{})
}

// scanBefore is scan that passes over the complete lines quickTime dates
// before before (zero: none).
func scanBefore(r io.Reader, fn func(line int, ev Event) error, skip func(*CorruptLineError), before time.Time) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		chunk, tooLong, err := readLine(br)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read journal: %w", err)
		}
		eof := err != nil
		var bad *CorruptLineError
		switch {
		case !before.IsZero() && !tooLong && !eof && olderThan(chunk, before):
		case tooLong:
			bad = &CorruptLineError{Line: line, Torn: eof, Err: fmt.Errorf("line longer than %d bytes", MaxLineBytes)}
		case len(bytes.TrimSpace(chunk)) > 0:
			ev, perr := ParseLine(chunk)
			if perr == nil {
				if ferr := fn(line, ev); ferr != nil {
					return ferr
				}
				break
			}
			if eof { // the last line has no newline
				perr = fmt.Errorf("%w (last line has no newline: torn write?)", perr)
			}
			bad = &CorruptLineError{Line: line, Torn: eof, Err: perr}
		}
		if bad != nil {
			if skip == nil {
				return bad
			}
			skip(bad)
		}
		if eof {
			return nil
		}
	}
}

// readLine returns the next line with its newline, or what precedes the
// end of the input (with io.EOF). A line longer than MaxLineBytes is read
// to its end without being kept: tooLong reports it.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var long []byte // a line longer than the buffer, being assembled
	for {
		chunk, err := br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		switch {
		case tooLong:
		case len(long)+len(chunk) > MaxLineBytes+1:
			tooLong, long = true, nil
		case full || long != nil:
			long = append(long, chunk...)
		}
		if full {
			continue
		}
		if tooLong {
			return nil, true, err
		}
		if long != nil {
			return long, false, err
		}
		return chunk, false, err
	}
}

// olderThan reports whether quickTime dates line before t.
func olderThan(line []byte, t time.Time) bool {
	at, ok := quickTime(line)
	return ok && at.Before(t)
}

// quickTime reads the timestamp of a journal line as Append writes it,
// {"id":"…","timestamp":"…",…}, without decoding the rest: ok is false
// for any line it cannot be sure ParseLine would give the same timestamp
// for: one not in that form, or with a byte outside ASCII or a \u
// escape (either can spell a key that encoding/json matches to
// "timestamp"), or with "timestamp", in any case, a second time.
func quickTime(line []byte) (time.Time, bool) {
	const head, mid = `{"id":"`, `","timestamp":"`
	if !bytes.HasPrefix(line, []byte(head)) || bytes.Contains(line, []byte(`\u`)) {
		return time.Time{}, false
	}
	rest := line[len(head):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 || !bytes.HasPrefix(rest[end:], []byte(mid)) {
		return time.Time{}, false
	}
	rest = rest[end+len(mid):]
	end = bytes.IndexByte(rest, '"')
	if end < 0 {
		return time.Time{}, false
	}
	stamp := rest[:end]
	if !isASCII(line) || foldCount(line, "timestamp") != 1 {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(stamp))
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// isASCII reports whether b holds no byte outside ASCII, eight bytes at
// a time: every line a reader of recent events passes over is checked.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// foldCount counts where in b the lower-case ASCII word name begins, in
// any case: at each byte that is its first letter in either case
// (bytes.IndexByte), compared there alone.
func foldCount(b []byte, name string) int {
	n := 0
	for _, first := range []byte{name[0], name[0] - 'a' + 'A'} {
		for rest := b; ; {
			i := bytes.IndexByte(rest, first)
			if i < 0 {
				break
			}
			if len(rest)-i >= len(name) && bytes.EqualFold(rest[i:i+len(name)], []byte(name)) {
				n++
			}
			rest = rest[i+1:]
		}
	}
	return n
}

// ParseLine decodes one journal line (with or without its line ending). A
// line must be one JSON object with a timestamp and an action; unknown
// fields are ignored, for lines written by newer versions.
func ParseLine(b []byte) (Event, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Event{}, errors.New("not a JSON object")
	}
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return Event{}, err
	}
	if ev.Action == "" {
		return Event{}, errors.New("event has no action")
	}
	if ev.Timestamp.IsZero() {
		return Event{}, errors.New("event has no timestamp")
	}
	return ev, nil
}
