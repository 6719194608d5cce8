package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/locks/record"
)

const (
	tmpDir   = ".tmp"
	guardDir = ".guard"
	// staleTemp is the age after which a leftover temp file belongs to a
	// writer that died: no live writer keeps one for more than a moment.
	staleTemp = time.Minute
)

var (
	_ locks.Store       = (*Store)(nil)
	_ locks.RecordFiler = (*Store)(nil)
)

// Store is the file lock store. Its methods are safe for concurrent use by
// goroutines, and any number of processes may open the same directory.
type Store struct {
	dir     string
	patDir  string
	keyDir  string
	tmpDir  string
	guards  string
	stripes [256]stripe

	// closeMu lets Close wait for operations in flight.
	closeMu sync.RWMutex
	closed  bool

	dirMu    sync.Mutex
	dirFiles map[string]*os.File // open directories, kept for fsync

	tmpSeq atomic.Uint64

	// fold: path and pattern keys are one key per lockkey.FoldCase.
	fold bool
	// ascii: identities are lockkey.FoldCaseASCII (Options.legacyASCII).
	ascii bool
	// leftovers maps an identity to the files of records an earlier
	// version wrote under a spelling of it that could not be moved to the
	// identity's file, taken by another record (see migrate). Lookups of
	// the identity read them too.
	leftovers map[string][]string

	// noSync skips fsyncs; tests set it to fill large stores quickly.
	noSync bool
	// reads counts record files read, so tests can tell that Overlapping
	// does not read unrelated records.
	reads atomic.Int64
}

// Options configure a Store.
type Options struct {
	// legacyExact keeps path and pattern records under their exact
	// spelling, as versions before keys were folded did; tests use it to
	// write such stores.
	legacyExact bool
	// legacyASCII keeps them under their identity as versions that folded
	// A-Z only computed it (lockkey.FoldCaseASCII); tests use it too.
	legacyASCII bool
}

// Open opens the store in dir with the default options.
func Open(dir string) (*Store, error) { return OpenWith(dir, Options{}) }

// OpenWith opens the store in dir, normally <git-common-dir>/lockgate/locks,
// creating it (0o755) when missing. Temp files left by writers that died
// more than a minute ago are removed, best effort.
func OpenWith(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &locks.UnavailableError{Store: dir, Err: err}
	}
	s := &Store{
		dir:      abs,
		patDir:   filepath.Join(abs, record.PatternDir),
		keyDir:   filepath.Join(abs, record.KeyDir),
		tmpDir:   filepath.Join(abs, tmpDir),
		guards:   filepath.Join(abs, guardDir),
		dirFiles: map[string]*os.File{},
		fold:     !opts.legacyExact,
		ascii:    opts.legacyASCII,
	}
	// The store's directories, and the one that holds it, must be real
	// directories of this user: a symbolic link planted there would make
	// lockgate write its records, temp files and guards elsewhere.
	if err := safefs.MkdirAll(abs, 0o755, 2); err != nil {
		return nil, s.unavailable("open", err)
	}
	for _, d := range []string{s.patDir, s.keyDir, s.tmpDir, s.guards} {
		if err := safefs.MkdirAll(d, 0o755, 1); err != nil {
			return nil, s.unavailable("open", err)
		}
	}
	s.removeStaleTemps(time.Now())
	if s.fold && !s.ascii {
		if err := s.migrate(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Where returns the path of the file that holds key's record.
func (s *Store) Where(key string) string { return s.path(key) }

// RecordFile is Where: every record is a file (locks.RecordFiler).
func (s *Store) RecordFile(key string) string { return s.path(key) }

// Close releases the store's open files. Operations after Close fail.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for i := range s.stripes {
		st := &s.stripes[i]
		st.mu.Lock()
		if st.f != nil {
			errs = append(errs, st.f.Close())
			st.f = nil
		}
		st.mu.Unlock()
	}
	s.dirMu.Lock()
	for _, f := range s.dirFiles {
		errs = append(errs, f.Close())
	}
	s.dirFiles = nil
	s.dirMu.Unlock()
	return errors.Join(errs...)
}

// begin marks an operation in flight; end must follow.
func (s *Store) begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return s.unavailable("use", errors.New("store is closed"))
	}
	return nil
}

func (s *Store) end() { s.closeMu.RUnlock() }

func (s *Store) unavailable(op string, err error) error {
	return &locks.UnavailableError{Store: s.dir, Err: fmt.Errorf("%s: %w", op, err)}
}

// path returns the file of key's record: the file of its identity.
func (s *Store) path(key string) string { return s.fileOf(key, s.id(key)) }

// candidates returns the files key's record may be in: path(key), then
// the leftovers of its identity.
func (s *Store) candidates(key string) []string {
	path := s.path(key)
	left := s.leftovers[s.id(key)]
	if len(left) == 0 {
		return []string{path}
	}
	return append([]string{path}, left...)
}

// fileOf returns the file of a record of key kept under name (its identity
// or its spelling), in the directory of key's kind.
func (s *Store) fileOf(key, name string) string {
	d := s.dir
	switch {
	case lockkey.IsPattern(key):
		d = s.patDir
	case record.Logical(key):
		d = s.keyDir
	}
	return filepath.Join(d, record.Stem(name)+record.Suffix)
}

// belongs reports whether a record of key may live at path: the file of its
// spelling, of its folded identity or of the identity versions that
// folded A-Z only gave it, whichever rule wrote it.
func (s *Store) belongs(key, path string) bool {
	if path == s.fileOf(key, key) {
		return true
	}
	if id := lockkey.FoldCase(key); id != key && path == s.fileOf(key, id) {
		return true
	}
	old := lockkey.FoldCaseASCII(key)
	return old != key && path == s.fileOf(key, old)
}

// id is the identity key's record is kept under: the folded key
// (lockkey.FoldCase), whatever core.ignorecase says, so that clones with
// and without it agree on every key.
func (s *Store) id(key string) string {
	switch {
	case s.ascii:
		return lockkey.FoldCaseASCII(key)
	case s.fold:
		return lockkey.FoldCase(key)
	}
	return key
}

// same reports whether keys a and b are one key.
func (s *Store) same(a, b string) bool {
	if s.fold {
		return lockkey.SameFoldCase(a, b)
	}
	return a == b
}

// overlap is lockkey.OverlapFoldCase (lockkey.Overlap for legacyExact).
func (s *Store) overlap(a, b string) bool {
	if s.fold {
		return lockkey.OverlapFoldCase(a, b)
	}
	return lockkey.Overlap(a, b)
}

// Acquire stores rec under rec.Key unless a live record holds the key; an
// expired record is replaced and returned as prev. The store sets rec.Fence,
// and rec.Token when it is empty. A corrupt record is never taken over: it
// yields a *locks.CorruptError until Remove clears it.
func (s *Store) Acquire(ctx context.Context, rec locks.Lock, now time.Time) (locks.Lock, *locks.Lock, error) {
	if err := rec.Validate(); err != nil {
		return locks.Lock{}, nil, err
	}
	if err := s.begin(ctx); err != nil {
		return locks.Lock{}, nil, err
	}
	defer s.end()
	if rec.Token == "" {
		rec.Token = locks.NewToken()
	}
	files := s.candidates(rec.Key)
	path := files[0]
	g, err := s.lock(ctx, rec.Key)
	if err != nil {
		return locks.Lock{}, nil, err
	}
	defer g.unlock()
	// A link that finds the name taken means a writer that ignores the
	// guard; look again, a few times, and report what is there.
	for range 3 {
		var prev *locks.Lock
		var prevFence uint64
		replace, stale := false, []string(nil)
		for _, p := range files {
			cur, err := s.load(rec.Key, p)
			switch {
			case errors.Is(err, locks.ErrNotFound):
				continue
			case err != nil:
				return locks.Lock{}, nil, err
			case !cur.Expired(now):
				return locks.Lock{}, nil, &locks.HeldError{Lock: cur, Where: p}
			}
			if prev == nil {
				prev = &cur
			}
			prevFence = max(prevFence, cur.Fence)
			if p == path {
				replace = true
			} else {
				stale = append(stale, p) // taken over: the key's record moves to path
			}
		}
		if rec.Fence, err = s.nextFence(g, prevFence); err != nil {
			return locks.Lock{}, nil, err
		}
		err = s.publish(rec, path, replace)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return locks.Lock{}, nil, err
		}
		for _, p := range stale {
			if err := s.unlink(rec.Key, p); err != nil {
				return locks.Lock{}, nil, err
			}
		}
		return rec, prev, nil
	}
	return locks.Lock{}, nil, s.unavailable("acquire "+rec.Key, fmt.Errorf("%s keeps reappearing: is something writing the lock directory without lockgate?", path))
}

// Release removes key's record if it carries token.
func (s *Store) Release(ctx context.Context, key, token string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.end()
	g, err := s.lock(ctx, key)
	if err != nil {
		return err
	}
	defer g.unlock()
	cur, path, err := s.find(key)
	if err != nil {
		return err
	}
	if cur.Token != token {
		return locks.ErrTokenMismatch
	}
	return s.unlink(key, path)
}

// Update replaces key's record with rec if the stored token is rec.Token.
// The stored fence is kept.
func (s *Store) Update(ctx context.Context, rec locks.Lock) (locks.Lock, error) {
	if err := rec.Validate(); err != nil {
		return locks.Lock{}, err
	}
	if err := s.begin(ctx); err != nil {
		return locks.Lock{}, err
	}
	defer s.end()
	g, err := s.lock(ctx, rec.Key)
	if err != nil {
		return locks.Lock{}, err
	}
	defer g.unlock()
	cur, path, err := s.find(rec.Key)
	if err != nil {
		return locks.Lock{}, err
	}
	if cur.Token != rec.Token {
		return locks.Lock{}, locks.ErrTokenMismatch
	}
	rec.Fence = cur.Fence
	if err := s.publish(rec, path, true); err != nil {
		return locks.Lock{}, err
	}
	return rec, nil
}

// Remove deletes whatever record key has, whoever holds it (a forced
// clear), and returns it. A corrupt record is removed too and reported as
// a *locks.CorruptError; a missing one is locks.ErrNotFound.
func (s *Store) Remove(ctx context.Context, key string) (locks.Lock, error) {
	if err := s.begin(ctx); err != nil {
		return locks.Lock{}, err
	}
	defer s.end()
	g, err := s.lock(ctx, key)
	if err != nil {
		return locks.Lock{}, err
	}
	defer g.unlock()
	cur, path, err := s.find(key)
	var corrupt *locks.CorruptError
	switch {
	case errors.As(err, &corrupt):
		cur = locks.Lock{Key: key}
	case err != nil:
		return locks.Lock{}, err
	}
	if err := s.unlink(key, path); err != nil {
		return locks.Lock{}, err
	}
	if corrupt != nil {
		return cur, corrupt
	}
	return cur, nil
}

// Get returns key's record, locks.ErrNotFound or a *locks.CorruptError.
func (s *Store) Get(ctx context.Context, key string) (locks.Lock, error) {
	if err := s.begin(ctx); err != nil {
		return locks.Lock{}, err
	}
	defer s.end()
	rec, _, err := s.find(key)
	return rec, err
}

// find reads key's record where it is: at path(key), else among the
// leftovers of its identity; of two records (leftovers an earlier version
// left), the one spelled as key. The path is the one to change; with
// locks.ErrNotFound it is path(key).
func (s *Store) find(key string) (locks.Lock, string, error) {
	files := s.candidates(key)
	var found locks.Lock
	at := ""
	for _, p := range files {
		rec, err := s.load(key, p)
		switch {
		case errors.Is(err, locks.ErrNotFound):
			continue
		case err != nil:
			return rec, p, err
		}
		if at == "" || rec.Key == key && found.Key != key {
			found, at = rec, p
		}
	}
	if at == "" {
		return locks.Lock{}, files[0], locks.ErrNotFound
	}
	return found, at, nil
}

// List returns every record, sorted by key; unreadable ones are entries
// whose Err is a *locks.CorruptError.
func (s *Store) List(ctx context.Context) ([]locks.Entry, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	var files []string
	for _, d := range []string{s.dir, s.keyDir, s.patDir} {
		names, err := readNames(d)
		if err != nil {
			return nil, s.unavailable("list", err)
		}
		for _, n := range names {
			files = append(files, filepath.Join(d, n))
		}
	}
	entries, err := s.readEntries(ctx, files)
	if err != nil {
		return nil, err
	}
	sortEntries(entries)
	return entries, nil
}

// Page returns the records whose names, relative to the store's
// directory ("art%2Fa.psd.lock", "keys/…", "patterns/…"), come after
// after, at most limit of them in the order of those names (see
// locks.Store): the three directories' names are listed, and only the
// page's record files are read.
func (s *Store) Page(ctx context.Context, after string, limit int) ([]locks.Entry, string, error) {
	if err := s.begin(ctx); err != nil {
		return nil, "", err
	}
	defer s.end()
	limit = max(limit, 1)
	var names []string
	for _, d := range []struct{ dir, rel string }{{s.dir, ""}, {s.keyDir, record.KeyDir + "/"}, {s.patDir, record.PatternDir + "/"}} {
		ns, err := readNames(d.dir)
		if err != nil {
			return nil, "", s.unavailable("page", err)
		}
		for _, n := range ns {
			if rel := d.rel + n; rel > after {
				names = append(names, rel)
			}
		}
	}
	slices.Sort(names)
	next := ""
	if len(names) > limit {
		names, next = names[:limit], names[limit-1]
	}
	files := make([]string, len(names))
	for i, n := range names {
		files[i] = filepath.Join(s.dir, filepath.FromSlash(n))
	}
	// readEntries keeps the files' order: the page's.
	entries, err := s.readEntries(ctx, files)
	if err != nil {
		return nil, "", err
	}
	return entries, next, nil
}

// Overlapping returns key's own record and every record whose key may
// overlap key. For a key that is not a pattern this reads key's own file,
// the names in patterns/ and only the pattern records whose key (decoded
// from the file name) overlaps; it relies on lockkey's rule that two keys
// which are not patterns overlap only when equal. A pattern key also looks
// at the names of the other records. Records under hashed names must be
// read to learn their key; corrupt ones are returned, since they may
// overlap.
func (s *Store) Overlapping(ctx context.Context, key string) ([]locks.Entry, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.end()
	files := s.candidates(key)
	own := len(files)
	dirs := []string{s.patDir}
	if lockkey.IsPattern(key) {
		if record.Logical(key) {
			dirs = append(dirs, s.keyDir)
		} else {
			dirs = append(dirs, s.dir)
		}
	}
	for _, d := range dirs {
		names, err := readNames(d)
		if err != nil {
			return nil, s.unavailable("overlapping "+key, err)
		}
		for _, n := range names {
			p := filepath.Join(d, n)
			if slices.Contains(files[:own], p) {
				continue
			}
			// The name is the key's identity or, written without case
			// folding, its spelling.
			stem := strings.TrimSuffix(n, record.Suffix)
			other, ok := record.KeyOfStem(stem)
			if ok && !s.overlap(key, other) || !ok && !record.IsHashedStem(stem) {
				continue // not overlapping, or no key's record: see record.IsHashedStem
			}
			files = append(files, p)
		}
	}
	entries, err := s.readEntries(ctx, files)
	if err != nil {
		return nil, err
	}
	// Hashed names were read blind: keep only what overlaps.
	entries = slices.DeleteFunc(entries, func(e locks.Entry) bool {
		return e.Err == nil && !s.same(e.Key, key) && !s.overlap(key, e.Key)
	})
	sortEntries(entries)
	return entries, nil
}

// readNames lists the record files of directory d.
func readNames(d string) ([]string, error) {
	f, err := os.Open(d)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(names, func(n string) bool {
		return !strings.HasSuffix(n, record.Suffix) || n == record.Suffix
	}), nil
}

// readEntries reads record files in parallel; a file that vanished since its
// name was read is skipped.
func (s *Store) readEntries(ctx context.Context, files []string) ([]locks.Entry, error) {
	out := make([]locks.Entry, len(files))
	found := make([]bool, len(files))
	errs := make([]error, len(files))
	read := func(i int, buf []byte) {
		e, err := s.entry(files[i], buf)
		if errors.Is(err, locks.ErrNotFound) {
			return
		}
		out[i], found[i], errs[i] = e, err == nil, err
	}
	// Reads of cached files are CPU work: more readers than CPUs only contend.
	workers := min(len(files)/64+1, 2*runtime.GOMAXPROCS(0))
	if workers == 1 {
		buf := make([]byte, 0, 1024)
		for i := range files {
			read(i, buf)
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		wg.Add(workers)
		for range workers {
			go func() {
				defer wg.Done()
				buf := make([]byte, 0, 1024)
				for {
					i := int(next.Add(1)) - 1
					if i >= len(files) || ctx.Err() != nil {
						return
					}
					read(i, buf)
				}
			}()
		}
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	entries := out[:0]
	for i := range out {
		if found[i] {
			entries = append(entries, out[i])
		}
	}
	return entries, nil
}

// entry reads the record file at path, learning its key from the name
// where it can. A record that is not where its key belongs is corrupt:
// Get and Acquire would never find it.
func (s *Store) entry(path string, buf []byte) (locks.Entry, error) {
	stem := strings.TrimSuffix(filepath.Base(path), record.Suffix)
	key, _ := record.KeyOfStem(stem)
	e := locks.Entry{Name: path}
	corrupt := func(err error) (locks.Entry, error) {
		e.Key = key
		e.Err = &locks.CorruptError{Key: key, Path: path, Err: err}
		return e, nil
	}
	data, err := s.readFile(path, buf)
	if errors.Is(err, fs.ErrNotExist) {
		return e, locks.ErrNotFound
	}
	if errors.Is(err, errLink) {
		return corrupt(errLink)
	}
	if err != nil {
		return e, s.unavailable("read lock", err)
	}
	rec, err := record.Parse(data)
	if err != nil {
		return corrupt(err)
	}
	if !s.belongs(rec.Key, path) {
		if key != "" && rec.Key != key && lockkey.FoldCase(rec.Key) != key {
			return corrupt(fmt.Errorf("record names key %q, file name says %q", rec.Key, key))
		}
		return corrupt(fmt.Errorf("record for %q belongs in %s", rec.Key, s.path(rec.Key)))
	}
	e.Lock = rec
	return e, nil
}

// load reads key's record from path: the record, locks.ErrNotFound, a
// *locks.CorruptError, or a *locks.UnavailableError.
func (s *Store) load(key, path string) (locks.Lock, error) {
	data, err := s.readFile(path, nil)
	if errors.Is(err, fs.ErrNotExist) {
		return locks.Lock{}, locks.ErrNotFound
	}
	if errors.Is(err, errLink) {
		return locks.Lock{}, &locks.CorruptError{Key: key, Path: path, Err: errLink}
	}
	if err != nil {
		return locks.Lock{}, s.unavailable("read lock "+key, err)
	}
	rec, err := record.Parse(data)
	if err == nil && (!s.same(rec.Key, key) || !s.belongs(rec.Key, path)) {
		err = fmt.Errorf("record names key %q, not %q", rec.Key, key)
	}
	if err != nil {
		return locks.Lock{}, &locks.CorruptError{Key: key, Path: path, Err: err}
	}
	return rec, nil
}

// errLink: a record file is a symbolic link. lockgate never makes one, and
// never follows one: the record is corrupt (never free) until removed.
var errLink = errors.New("a symbolic link, not a lock record")

// readFile reads a record file. buf, if not nil, is reused for the data.
func (s *Store) readFile(path string, buf []byte) ([]byte, error) {
	s.reads.Add(1)
	if buf == nil {
		buf = make([]byte, 0, 1024)
	}
	return readSmall(path, buf)
}

// publish makes rec visible at path in one step: the record is written and
// synced in .tmp/, then linked into place (fresh create: fails with
// fs.ErrExist when the name is taken) or renamed over the old record
// (replace), and the directory is synced. The caller holds key's guard.
func (s *Store) publish(rec locks.Lock, path string, replace bool) error {
	data, err := record.Encode(rec)
	if err != nil {
		return err
	}
	tmp, err := s.writeTemp(data)
	if err != nil {
		return s.unavailable("write lock "+rec.Key, err)
	}
	if replace {
		err = os.Rename(tmp, path)
	} else {
		err = os.Link(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) && !replace {
			return err
		}
		return s.unavailable("write lock "+rec.Key, err)
	}
	if !replace {
		_ = os.Remove(tmp)
	}
	if err := s.syncDirOf(path); err != nil {
		if !replace {
			// Not durable, so not acquired: do not leave a lock behind
			// that its caller believes it never got.
			_ = os.Remove(path)
		}
		return s.unavailable("write lock "+rec.Key, err)
	}
	return nil
}

// writeTemp writes data to a new synced file in .tmp/ and returns its path.
func (s *Store) writeTemp(data []byte) (string, error) {
	var f *os.File
	var name string
	for {
		name = filepath.Join(s.tmpDir, fmt.Sprintf("%d-%d.tmp", os.Getpid(), s.tmpSeq.Add(1)))
		var err error
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue // left by a dead process with our pid
		}
		if err != nil {
			return "", err
		}
		break
	}
	_, err := f.Write(data)
	if err == nil && !s.noSync {
		err = datasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}

// unlink removes key's record file durably.
func (s *Store) unlink(key, path string) error {
	if err := os.Remove(path); err != nil {
		return s.unavailable("remove lock "+key, err)
	}
	if err := s.syncDirOf(path); err != nil {
		return s.unavailable("remove lock "+key, err)
	}
	return nil
}

// syncDirOf syncs the directory holding path, through a cached descriptor.
func (s *Store) syncDirOf(path string) error {
	if s.noSync {
		return nil
	}
	d := filepath.Dir(path)
	s.dirMu.Lock()
	f := s.dirFiles[d]
	if f == nil {
		var err error
		if f, err = os.Open(d); err != nil {
			s.dirMu.Unlock()
			return err
		}
		s.dirFiles[d] = f
	}
	s.dirMu.Unlock()
	return syncDir(f)
}

// removeStaleTemps deletes temp files whose writer must have died.
func (s *Store) removeStaleTemps(now time.Time) {
	entries, err := os.ReadDir(s.tmpDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err == nil && info.Mode().IsRegular() && now.Sub(info.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(s.tmpDir, e.Name()))
		}
	}
}

func sortEntries(entries []locks.Entry) {
	slices.SortFunc(entries, func(a, b locks.Entry) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// ErrNotRecord is locks.ErrNotRecord, by the name the command line still
// matches RemoveRecord's refusal with.
var ErrNotRecord = locks.ErrNotRecord

// RemoveRecord removes the record file at path, as List names it (Entry.Name),
// when it cannot be read as the record of its key: a foreign or misplaced
// file, or one whose key cannot be given on a command line. Such a record
// may block keys (see Overlapping) yet cannot be cleared by key. A readable
// record is refused, naming its key: clear that.
func (s *Store) RemoveRecord(ctx context.Context, path string) (locks.Entry, error) {
	if err := s.begin(ctx); err != nil {
		return locks.Entry{}, err
	}
	defer s.end()
	abs, err := filepath.Abs(path)
	if err != nil {
		return locks.Entry{}, fmt.Errorf("%s: %w", path, err)
	}
	if d := filepath.Dir(abs); !strings.HasSuffix(abs, record.Suffix) || d != s.dir && d != s.keyDir && d != s.patDir {
		return locks.Entry{}, fmt.Errorf("%s: %w (its records are the *%s files in %s, %s and %s)", path, ErrNotRecord, record.Suffix, s.dir, s.keyDir, s.patDir)
	}
	stem := strings.TrimSuffix(filepath.Base(abs), record.Suffix)
	key, ok := record.KeyOfStem(stem)
	if !ok || key == "" {
		key = stem
	}
	g, err := s.lock(ctx, key)
	if err != nil {
		return locks.Entry{}, err
	}
	defer g.unlock()
	e, err := s.entry(abs, nil)
	if errors.Is(err, locks.ErrNotFound) {
		return e, fmt.Errorf("%s: %w", path, err)
	}
	if err != nil {
		return e, err
	}
	if e.Err == nil {
		return e, fmt.Errorf("%s holds a readable lock on %q: %w", path, e.Key, ErrReadable)
	}
	return e, s.unlink(key, abs)
}

// ErrReadable is locks.ErrReadable, by the name the command line still
// matches RemoveRecord's refusal with.
var ErrReadable = locks.ErrReadable
