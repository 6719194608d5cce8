package workflow

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// ReadEvents returns the union, by event id, of the events on refs (full
// ref names, e.g. "refs/heads/lockgate/workflow",
// "refs/remotes/origin/lockgate/workflow", or any revision git resolves
// to a commit, such as a pushed tip), sorted by timestamp, then id. Refs
// that do not exist are skipped; found lists those that did (in the order
// given). When two refs hold different events under one id, the first
// ref's wins.
//
// It only reads, with git itself (no Writer, no lock, nothing needed
// under .git/lockgate): one `git cat-file --batch-command` for the refs
// and the blobs, and `git ls-tree` (or `git diff-tree`) for the trees to
// read. Every file under events/ must be an event at the path its id
// gives (EventPath); anything else is an error naming the ref and path.
//
// The events of each ref's tree are cached (see logcache.go): a ref
// whose tree has not changed costs no blob and no JSON, one that only
// gained events reads just those. The cache never changes the answer.
func ReadEvents(ctx context.Context, cfg Config, refs []string) (evs []journal.Event, found []string, err error) {
	return readEvents(ctx, cfg, refs, &readStats{})
}

// LogRead is what ReadEventsSince read.
type LogRead struct {
	// Events are sorted by timestamp, then id: every event of the refs at
	// or after the time asked for, every earlier one that may bear on the
	// locks held then (see reach in logcache.go), and at least the last
	// one before it, when there is one; often more.
	Events []journal.Event
	// Found lists the refs that exist, as ReadEvents.
	Found []string
	// Complete: Events are all the events of the refs.
	Complete bool
	// Read counts the events decoded to answer: from the cache, and from
	// the blobs read.
	Read int
}

// ReadEventsSince is ReadEvents for a reader that needs the events from
// since on, and those before it that may still bear on the locks held
// then: a lock taken or renewed before since whose expiry is after it,
// a lock event of an earlier version, which names no expiry, or one of
// an action this version does not know. Where the events cache holds a
// ref's tree, or most of it, only the blocks that hold such events are
// decoded; the others are not read at all. Events that take or renew a
// grant name its expiry, so the earlier events of a grant still live at
// since are found by asking again from the time of the first one read
// (see the service's lock log reader).
func ReadEventsSince(ctx context.Context, cfg Config, refs []string, since time.Time) (LogRead, error) {
	var st readStats
	lr, err := readLog(ctx, cfg, refs, span{from: since, reach: true}, &st)
	lr.Read = st.decoded + st.blobs
	return lr, err
}

// ReadEventsBetween is ReadEvents for the events at or after from and
// before until (zero: no bound), exactly those: where the events cache
// holds a ref's tree, or most of it, the blocks wholly before from or
// after until are not decoded. Complete says whether every event of the
// refs was read.
func ReadEventsBetween(ctx context.Context, cfg Config, refs []string, from, until time.Time) (LogRead, error) {
	return ReadEventsMatching(ctx, cfg, refs, from, until, Match{})
}

// ReadEventsMatching is ReadEventsBetween for the events m keeps only,
// exactly those: where the events cache holds a ref's tree, or most of
// it, a block whose filter shows it names neither m's key nor m's
// worker is not decoded either.
func ReadEventsMatching(ctx context.Context, cfg Config, refs []string, from, until time.Time, m Match) (LogRead, error) {
	var st readStats
	lr, err := readLog(ctx, cfg, refs, span{from: from, until: until, match: m}, &st)
	lr.Read = st.decoded + st.blobs
	kept := lr.Events[:0:0]
	for i, ev := range lr.Events {
		if !ev.Timestamp.Before(from) && (until.IsZero() || ev.Timestamp.Before(until)) && m.keeps(&lr.Events[i]) {
			kept = append(kept, ev)
		}
	}
	lr.Events = kept
	return lr, err
}

// span is the part of the log a read needs: the events at or after from
// (zero: all), before until (zero: no bound), and with reach those before
// from that may bear on the locks held then; of those, the ones match
// keeps (and, read with them, others).
type span struct {
	from, until time.Time
	reach       bool
	match       Match
}

// readStats counts how trees were read, for the tests.
type readStats struct {
	cached, incremental, full int
	shared                    int // a tree another ref of the call had
	subsumed                  int // a tree with no file another's lacks
	decoded                   int // events decoded from the cache
	blocks                    int // blocks of the cache decoded
	blobs                     int // event blobs read
}

// newLogReader is a logReader of cfg's repository, not started.
func newLogReader(cfg Config, stats *readStats) (logReader, error) {
	r := logReader{gitDir: cfg.GitDir, common: cfg.CommonDir, dir: cfg.WorkTree, stats: stats}
	if r.gitDir == "" {
		r.gitDir = r.common
	}
	if r.common == "" {
		r.common = r.gitDir
	}
	if r.gitDir == "" {
		return r, errors.New("read events: no repository")
	}
	if r.dir == "" {
		r.dir = r.gitDir
	}
	return r, nil
}

// readEvents reads every event of refs.
func readEvents(ctx context.Context, cfg Config, refs []string, stats *readStats) ([]journal.Event, []string, error) {
	lr, err := readLog(ctx, cfg, refs, span{}, stats)
	return lr.Events, lr.Found, err
}

// readLog reads the events of refs that sp needs.
func readLog(ctx context.Context, cfg Config, refs []string, sp span, stats *readStats) (LogRead, error) {
	r, err := newLogReader(cfg, stats)
	if err != nil {
		return LogRead{}, err
	}
	r.span = sp
	for _, ref := range refs {
		if ref == "" || strings.ContainsAny(ref, "\n\r\x00") || strings.HasPrefix(ref, "-") {
			return LogRead{}, fmt.Errorf("read events: %q is not a ref name", ref)
		}
	}
	if len(refs) == 0 {
		return LogRead{Complete: true}, nil
	}
	if err := r.start(ctx); err != nil {
		return LogRead{}, err
	}
	defer r.cat.close()
	found, trees, err := r.resolve(refs)
	if err != nil {
		return LogRead{}, r.ctxErr(ctx, err)
	}
	byTree := map[string][]journal.Event{}
	partial := map[string]bool{} // trees read from since only
	subsumed := map[string]bool{}
	var order []string // distinct trees, in the order of found
	for i, ref := range found {
		t := trees[i]
		if t == "" || subsumed[t] {
			continue // no events/ (no events), or nothing new
		}
		evs, sub, part, err := r.readRef(ctx, ref, t, byTree, partial)
		if err != nil {
			return LogRead{}, r.ctxErr(ctx, err)
		}
		if sub {
			subsumed[t] = true
			continue
		}
		if _, ok := byTree[t]; !ok {
			order = append(order, t)
		}
		byTree[t] = evs
		if part {
			partial[t] = true
		}
	}
	return LogRead{Events: union(order, byTree), Found: found, Complete: len(partial) == 0}, nil
}

// union merges the events of trees, in order, keeping the first of each
// id.
func union(trees []string, byTree map[string][]journal.Event) []journal.Event {
	var all []journal.Event
	for i, t := range trees {
		if i == 0 {
			all = byTree[t]
		} else {
			all = union2(all, byTree[t])
		}
	}
	return all
}

// union2 returns the union of a and b, each sorted and without a repeated
// id; an id in both is a's. An event on both sides is equal by timestamp
// and id, so a merge pairs it up at no cost; an id whose timestamp
// differs between the sides (a rewritten event) can only be among the
// events that found no pair, usually a handful, and only those are
// looked up.
func union2(a, b []journal.Event) []journal.Event {
	out := make([]journal.Event, 0, max(len(a), len(b)))
	var onlyA, onlyB []int // indexes in out
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		c := -1
		switch {
		case i == len(a):
			c = 1
		case j < len(b):
			c = compareEvents(a[i], b[j])
		}
		switch {
		case c == 0:
			out = append(out, a[i])
			i, j = i+1, j+1
		case c < 0:
			onlyA = append(onlyA, len(out))
			out = append(out, a[i])
			i++
		default:
			onlyB = append(onlyB, len(out))
			out = append(out, b[j])
			j++
		}
	}
	if len(onlyA) == 0 || len(onlyB) == 0 {
		return out
	}
	small, large := onlyA, onlyB
	if len(small) > len(large) {
		small, large = large, small
	}
	ids := make(map[string]bool, len(small))
	for _, k := range small {
		ids[out[k].ID] = true
	}
	both := map[string]bool{}
	for _, k := range large {
		if id := out[k].ID; ids[id] {
			both[id] = true
		}
	}
	if len(both) == 0 {
		return out
	}
	kept, nb := out[:0], 0
	for k, ev := range out {
		if nb < len(onlyB) && onlyB[nb] == k {
			nb++
			if both[ev.ID] {
				continue // b's side of an id a has
			}
		}
		kept = append(kept, ev)
	}
	return kept
}

func compareEvents(a, b journal.Event) int {
	if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// logReader runs the git commands of one ReadEvents.
type logReader struct {
	gitDir, common, dir string
	cat                 *catFile
	stats               *readStats
	span                span // the part of the log needed
}

// ctxErr prefers the context's error to what a killed git said.
func (r *logReader) ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("read events: %w", cerr)
	}
	return err
}

// readRef returns the events of tree t on ref, reading as little as it
// can: another ref of this call with the same tree has them; one whose
// tree has every file of t has them all (subsumed: t adds nothing to the
// union); one whose tree t only adds files to has most of them; else the
// cache has them when it holds t, or most of them when t only added files
// to the cached tree; else every file of t is read. With r.span set,
// partial reports that only the events it needs were decoded; a cache is written only from all of t's events, or
// from the cached blocks kept as they are.
func (r *logReader) readRef(ctx context.Context, ref, t string, byTree map[string][]journal.Event, partialTree map[string]bool) (evs []journal.Event, subsumed, partial bool, err error) {
	cacheable := strings.HasPrefix(ref, "refs/") // a bounded set of names, unlike commit ids
	if evs, ok := byTree[t]; ok {
		r.stats.shared++
		if cacheable && !partialTree[t] && cachedTree(r.common, ref) != t {
			writeCache(r.common, ref, t, evs)
		}
		return evs, false, partialTree[t], nil
	}
	written := false
	defer func() {
		if err == nil && !subsumed && !written && !partial && cacheable {
			writeCache(r.common, ref, t, evs)
		}
	}()
	tip, history := strings.CutPrefix(t, historyKey)
	// The other refs first: the branch and its remote-tracking ref share
	// all but a few events, and a diff of their trees costs less than a
	// cache to decode.
	var prior string
	for pt, pevs := range byTree {
		if prior == "" || len(pevs) > len(byTree[prior]) {
			prior = pt
		}
	}
	if prior != "" && history && strings.HasPrefix(prior, historyKey) {
		evs, sub, ok, err := r.readBeside(ctx, ref, tip, prior, byTree[prior])
		if err != nil || ok {
			return evs, sub, partialTree[prior] && !sub, err
		}
	}
	if prior != "" && !history && !strings.HasPrefix(prior, historyKey) {
		d, ok, err := r.diff(ctx, ref, prior, t)
		switch {
		case err != nil:
			return nil, false, false, err
		case ok && len(d.added) == 0:
			r.stats.subsumed++
			return nil, true, false, nil
		case ok && d.deleted == 0:
			evs, err := r.readAdded(ref, byTree[prior], d.added)
			return evs, false, partialTree[prior], err
		}
	}
	if cacheable {
		if c, ok := readCache(r.common, ref); ok {
			defer c.close()
			if c.tree == t {
				r.stats.cached++
				written = true
				from := c.start(r.span.from, r.span.reach)
				to := max(from, c.end(r.span.until))
				evs, n, err := c.decode(from, to, r.span.match)
				r.stats.blocks += n
				if err != nil {
					// The head held, a block did not: read t whole.
					written = false
					if history {
						return r.readHistory(ctx, ref, tip)
					}
					return r.readFull(ctx, ref, t)
				}
				r.stats.decoded += len(evs)
				return evs, false, from > 0 || to < len(c.blocks) || n < to-from, nil
			}
			if history {
				evs, part, ok, err := r.readSince(ctx, ref, t, tip, c)
				if err != nil || ok {
					written = ok
					return evs, false, part, err
				}
				return r.readHistory(ctx, ref, tip)
			}
			// A file deleted or changed since: read t whole.
			d, ok, err := r.diff(ctx, ref, c.tree, t)
			if err != nil {
				return nil, false, false, err
			}
			if ok && d.deleted == 0 && len(d.added) > 0 {
				evs, part, err := r.readSpliced(ref, t, c, d.added)
				switch {
				case err == nil:
					written = true
					return evs, false, part, nil
				case !errors.Is(err, errCache):
					return nil, false, false, err
				}
			}
		}
	}
	if history {
		return r.readHistory(ctx, ref, tip)
	}
	return r.readFull(ctx, ref, t)
}

// readFull reads every event of tree t on ref.
func (r *logReader) readFull(ctx context.Context, ref, t string) ([]journal.Event, bool, bool, error) {
	r.stats.full++
	files, err := r.lsTree(ctx, ref, t)
	if err != nil {
		return nil, false, false, err
	}
	evs, err := r.readBlobs(ref, files)
	return evs, false, false, err
}

// readSpliced returns the events of tree t, the cached tree c with the
// files added: the blocks of c from the first the new events or r.span
// need are decoded (to the end: the new events may be anywhere; before
// the first new event, only those that may hold r.span's match), and
// the cache of t written from the blocks before the first new event,
// copied as they are, and the events from it on. A block that does not
// decode is an errCache error: t is then read whole. partial reports
// that blocks were skipped.
func (r *logReader) readSpliced(ref, t string, c *cacheIndex, added []file) (evs []journal.Event, partial bool, err error) {
	r.stats.incremental++
	more, err := r.readBlobs(ref, added)
	if err != nil {
		return nil, false, err
	}
	keep := c.before(more[0].Timestamp)
	from := min(keep, c.start(r.span.from, r.span.reach))
	old, n, err := c.decode(from, keep, r.span.match)
	r.stats.blocks += n
	if err != nil {
		return nil, false, err
	}
	rest, n2, err := c.decode(keep, len(c.blocks), Match{})
	r.stats.blocks += n2
	if err != nil {
		return nil, false, err
	}
	r.stats.decoded += len(old) + len(rest)
	tail := union2(rest, more)
	// The new file copies the blocks before the first new event: their
	// compressed events are read, not decoded. A block that does not
	// read back leaves the cache as it is.
	if c.load(keep) == nil {
		if data, err := encodeSpliced(ref, t, c.blocks[:keep], tail); err == nil && eventCacheable() {
			writeCacheData(r.common, ref, data)
		}
	}
	return append(old, tail...), from > 0 || n < keep-from, nil
}

// readAdded returns base, the events of a tree, with those of the files
// added to it.
func (r *logReader) readAdded(ref string, base []journal.Event, added []file) ([]journal.Event, error) {
	r.stats.incremental++
	more, err := r.readBlobs(ref, added)
	if err != nil {
		return nil, err
	}
	return union2(base, more), nil
}

// file is an event file: its path under events/ and its blob.
type file struct {
	path, blob string
}

// git runs a git command on the repository and returns its output.
func (r *logReader) git(ctx context.Context, args ...string) ([]byte, error) {
	cmd := r.command(ctx, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return stdout.Bytes(), nil
}

func (r *logReader) command(ctx context.Context, args ...string) *gitexec.Cmd {
	return gitexec.ReadCommand(ctx, r.gitDir, r.dir, args...)
}

// lsTree lists the files of the events tree t of ref.
func (r *logReader) lsTree(ctx context.Context, ref, t string) ([]file, error) {
	out, err := r.git(ctx, "ls-tree", "-r", "-z", "--full-tree", t)
	if err != nil {
		return nil, fmt.Errorf("%s: list %s: %w", ref, eventsDir, err)
	}
	// One string for the whole listing: paths and blob names are slices
	// of it.
	list := string(out)
	files := make([]file, 0, strings.Count(list, "\x00"))
	for list != "" {
		var rec string
		rec, list, _ = strings.Cut(list, "\x00")
		// "<mode> <type> <blob>\t<path>"
		meta, path, ok := strings.Cut(rec, "\t")
		mode, rest, ok1 := strings.Cut(meta, " ")
		typ, blob, ok2 := strings.Cut(rest, " ")
		if !ok || !ok1 || !ok2 {
			return nil, fmt.Errorf("%s: git ls-tree: unexpected output %q", ref, rec)
		}
		if path == formatFile {
			continue // format 2's blob, not an event
		}
		if err := checkFile(ref, path, mode, typ); err != nil {
			return nil, err
		}
		files = append(files, file{path: path, blob: blob})
	}
	return files, nil
}

// treeDiff is how one events tree differs from another by whole files.
type treeDiff struct {
	added   []file // checked as event files
	deleted int
}

// diff returns how tree t differs from tree base; ok is false when a
// file changed (or base is gone: pruned since it was cached).
func (r *logReader) diff(ctx context.Context, ref, base, t string) (d treeDiff, ok bool, err error) {
	out, err := r.git(ctx, "diff-tree", "-r", "-z", "--no-renames", base, t)
	if err != nil {
		if ctx.Err() != nil {
			return d, false, err
		}
		return d, false, nil
	}
	for len(out) > 0 {
		var meta, path []byte
		meta, out, _ = bytes.Cut(out, []byte{0})
		path, out, _ = bytes.Cut(out, []byte{0})
		// ":<old mode> <new mode> <old blob> <new blob> <status>"
		f := strings.Fields(strings.TrimPrefix(string(meta), ":"))
		switch {
		case len(f) == 5 && f[4] == "D":
			d.deleted++
		case len(f) == 5 && f[4] == "A":
			if err := checkFile(ref, string(path), f[1], "blob"); err != nil {
				return d, false, err
			}
			d.added = append(d.added, file{path: string(path), blob: f[3]})
		default:
			return d, false, nil
		}
	}
	return d, true, nil
}

// checkFile refuses what cannot be an event file: another kind of entry
// (a link, a submodule) or one not at events/xx/yy/<name>.
func checkFile(ref, path, mode, typ string) error {
	if (mode != "100644" && mode != "100755") || typ != "blob" || strings.Count(path, "/") != 2 {
		return fmt.Errorf("%s: %s/%s: %w (not the events/xx/yy/<id>.json layout)", ref, eventsDir, path, errShape)
	}
	return nil
}

// readBlobs reads and parses the event files. (Parsing on other
// goroutines was measured slower: git cat-file needs a CPU of its own.)
func (r *logReader) readBlobs(ref string, files []file) ([]journal.Event, error) {
	evs := make([]journal.Event, 0, len(files))
	var buf []byte
	err := r.cat.round(func(w *bufio.Writer) error {
		for _, f := range files {
			_, _ = w.WriteString("contents ")
			_, _ = w.WriteString(f.blob)
			if err := w.WriteByte('\n'); err != nil {
				return err // a bufio.Writer keeps its first error
			}
		}
		return nil
	}, func(br *bufio.Reader) error {
		for _, f := range files {
			path := eventsDir + "/" + f.path
			var err error
			if buf, err = r.cat.blob(br, f.blob, buf[:0]); err != nil {
				return fmt.Errorf("%s: %s: %w", ref, path, err)
			}
			ev, err := journal.ParseLine(buf)
			if err != nil {
				return fmt.Errorf("%s: %s: %w: %w", ref, path, errNotEvent, err)
			}
			if want := EventPath(ev.ID); want != path {
				return fmt.Errorf("%s: %s: %w: event %q belongs at %s", ref, path, errShape, ev.ID, want)
			}
			evs = append(evs, ev)
		}
		return nil
	})
	r.stats.blobs += len(evs)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(evs, compareEvents)
	return evs, nil
}

// resolve returns the refs that exist and what names each one's events:
// the hash of its events tree ("" when it has none), or for a branch of
// format 2 historyKey and the commit.
func (r *logReader) resolve(refs []string) (found, trees []string, err error) {
	err = r.cat.round(func(w *bufio.Writer) error {
		for _, ref := range refs {
			if _, err := fmt.Fprintf(w, "info %s\ninfo %[1]s^{commit}\ninfo %[1]s^{commit}:%[2]s\ninfo %[1]s^{commit}:%[2]s/%[3]s\n", ref, eventsDir, formatFile); err != nil {
				return err
			}
		}
		return nil
	}, func(br *bufio.Reader) error {
		for _, ref := range refs {
			var info [4]objectInfo
			for i := range info {
				var err error
				if info[i], err = r.cat.info(br); err != nil {
					return fmt.Errorf("resolve %s: %w", ref, err)
				}
			}
			switch {
			case info[0].missing:
				continue
			case info[1].missing:
				return fmt.Errorf("%s: a %s, not a commit", ref, info[0].typ)
			case !info[3].missing && info[3].typ != "blob":
				return fmt.Errorf("%s: %s: %w (a %s, not a blob)", ref, formatFile, errShape, info[3].typ)
			case !info[3].missing:
				// Format 2: the events are those of the history.
				found, trees = append(found, ref), append(trees, historyKey+info[1].oid)
			case info[2].missing:
				found, trees = append(found, ref), append(trees, "")
			case info[2].typ != "tree":
				return fmt.Errorf("%s: %s: %w (a %s, not a tree)", ref, eventsDir, errShape, info[2].typ)
			default:
				found, trees = append(found, ref), append(trees, info[2].oid)
			}
		}
		return nil
	})
	return found, trees, err
}

// catFile is one `git cat-file --batch-command --buffer`, fed and read in
// rounds: a goroutine writes a round's commands and a flush while the
// caller reads the answers, so that neither pipe fills up.
type catFile struct {
	cmd    *gitexec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
	dead   bool
	waited bool
}

func (r *logReader) start(ctx context.Context) error {
	c := &catFile{cmd: r.command(ctx, "cat-file", "--batch-command", "--buffer")}
	c.cmd.Stderr = &c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("read events: start git cat-file: %w", err)
	}
	c.out = bufio.NewReaderSize(out, 256<<10)
	r.cat = c
	return nil
}

func receive(ch <-chan error) error { return <-ch }

func (c *catFile) round(write func(*bufio.Writer) error, read func(*bufio.Reader) error) error {
	if c.dead {
		return errors.New("git cat-file: stopped")
	}
	werr := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(c.in, 64<<10)
		err := write(w)
		if err == nil {
			_, err = w.WriteString("flush\n")
		}
		if err == nil {
			err = w.Flush()
		}
		werr <- err
	}()
	if err := read(c.out); err != nil {
		c.kill() // the writer may be blocked on a full pipe
		// Wait for the writer; its error (a pipe git closed) adds
		// nothing to the read's.
		_ = receive(werr)
		return err
	}
	if err := <-werr; err != nil {
		c.kill()
		return c.failed(err)
	}
	return nil
}

func (c *catFile) kill() {
	if !c.dead {
		c.dead = true
		_ = c.cmd.Process.Kill()
	}
}

func (c *catFile) close() {
	c.in.Close()
	c.wait()
}

// wait waits for git to end, once. Only then is c.stderr whole and
// still: until Wait returns, exec's goroutine may be copying into it.
func (c *catFile) wait() {
	if !c.waited {
		c.waited = true
		_ = c.cmd.Wait()
	}
}

// failed says what git said, if anything, about a broken pipe. It stops
// git first, so as to read what git wrote once it is all written; the
// reader is of no more use after a broken pipe.
func (c *catFile) failed(err error) error {
	c.kill()
	c.wait()
	if msg := strings.TrimSpace(c.stderr.String()); msg != "" {
		return fmt.Errorf("git cat-file: %s", msg)
	}
	return fmt.Errorf("git cat-file: %w", err)
}

type objectInfo struct {
	oid, typ string
	size     int64
	missing  bool
}

// info reads the answer to one info or contents command:
// "<oid> <type> <size>", or "<name> missing" (or "ambiguous").
func (c *catFile) info(br *bufio.Reader) (objectInfo, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return objectInfo{}, c.failed(err)
	}
	s := string(line[:len(line)-1])
	switch {
	case strings.HasSuffix(s, " missing"):
		return objectInfo{missing: true}, nil
	case strings.HasSuffix(s, " ambiguous"):
		return objectInfo{}, fmt.Errorf("%s: ambiguous object name", strings.TrimSuffix(s, " ambiguous"))
	}
	f := strings.Fields(s)
	if len(f) == 3 {
		if n, err := strconv.ParseInt(f[2], 10, 64); err == nil && n >= 0 {
			return objectInfo{oid: f[0], typ: f[1], size: n}, nil
		}
	}
	return objectInfo{}, fmt.Errorf("git cat-file: unexpected output %q", s)
}

// blob reads the answer to `contents <oid>`, which must be a blob no
// larger than an event, and appends the blob to buf.
func (c *catFile) blob(br *bufio.Reader, oid string, buf []byte) ([]byte, error) {
	info, err := c.info(br)
	switch {
	case err != nil:
		return buf, err
	case info.missing:
		return buf, fmt.Errorf("blob %s: missing", oid)
	case info.typ != "blob":
		return buf, fmt.Errorf("%s: a %s, not a blob", oid, info.typ)
	case info.size > journal.MaxLineBytes+1:
		return buf, fmt.Errorf("blob %s: %w: %d bytes, more than any event", oid, errNotEvent, info.size)
	}
	n := len(buf)
	buf = slices.Grow(buf, int(info.size)+1)[:n+int(info.size)+1]
	if _, err := io.ReadFull(br, buf[n:]); err != nil {
		return buf[:n], c.failed(err)
	}
	return buf[:len(buf)-1], nil // the newline after the blob
}

// digest16 is 16 hex digits of the SHA-256 of s.
func digest16(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}
