package workflow

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// SyncResult says what Sync found and did.
type SyncResult struct {
	Journal   int // distinct events in the journal
	Present   int // of those, already on the branch
	Committed int // committed by this Sync
	Commits   int // commits it made (batches of at most SyncBatch events)
	// Corrupt are the journal lines skipped because they are not events,
	// each with its segment's path and 1-based line.
	Corrupt []*journal.CorruptLineError
	// Others are the events missing from the branch that are other
	// workers' (Config.Vouches): left in the journal for them.
	Others int
}

// SyncBatch is the largest number of events Sync puts in one commit, which
// keeps each commit message readable.
const SyncBatch = 500

// Sync commits every event of the journal that is not on the branch yet,
// in journal order: it repairs a crash (or a failed commit) between the
// journal append and the branch commit. Finding what is missing reads
// the branch's events as ReadEvents does (from its cache). An event committed
// meanwhile by another writer is not committed again: every batch is
// checked against the tip it is built on. Lines of the journal that are
// not events are skipped and listed in Corrupt; a last line without its
// newline (torn by a crash) is left alone, not listed. Sync
// works offline: it never talks to the remote (see Push).
func (w *Writer) Sync(ctx context.Context, j *journal.Journal) (SyncResult, error) {
	var res SyncResult
	if j == nil {
		return res, errors.New("sync: no journal")
	}
	evs, skipped, err := j.ReadSkipping(time.Time{})
	if err != nil {
		return res, fmt.Errorf("sync %s to %s: %w", j.Path(), w.branch, err)
	}
	for _, ce := range skipped {
		if !ce.Torn {
			res.Corrupt = append(res.Corrupt, ce)
		}
	}
	items, err := prepare(evs)
	if err != nil {
		return res, fmt.Errorf("sync %s to %s: %w", j.Path(), w.branch, err)
	}
	res.Journal = len(items)

	missing, err := w.missing(ctx, items)
	if err != nil {
		return res, fmt.Errorf("sync %s to %s: %w", j.Path(), w.branch, err)
	}
	res.Present = len(items) - len(missing)
	missing, others := w.vouched(missing)
	res.Others = len(others)
	left, err := w.commitInBatches(ctx, missing, func(batch, n int) {
		res.Committed += n
		res.Present += batch - n // committed by someone else meanwhile
		if n > 0 {
			res.Commits++
		}
	})
	if err != nil {
		return res, fmt.Errorf("sync %s to %s: %d events committed, %d not (they stay in the journal): %w",
			j.Path(), w.branch, res.Committed, left, err)
	}
	if _, err := w.rotate(ctx, j); err != nil {
		return res, fmt.Errorf("sync %s to %s: %w", j.Path(), w.branch, err)
	}
	return res, nil
}

// rotate rotates the journal (journal.Rotate) when it has grown past
// w.rotateAt and every event of it is on the branch tip: the check of
// the tip and the rename happen under the journal's lock, so that an
// event appended meanwhile keeps the journal whole. After a rotation the
// journal read by CatchUp begins again: its mark is cleared.
func (w *Writer) rotate(ctx context.Context, j *journal.Journal) (bool, error) {
	rotated, err := j.Rotate(w.rotateAt, func(evs []journal.Event) (bool, error) {
		items, err := prepare(evs)
		if err != nil {
			return false, err
		}
		missing, err := w.missing(ctx, items)
		return err == nil && len(missing) == 0, err
	})
	if err != nil {
		return false, fmt.Errorf("rotate the journal: %w", err)
	}
	if rotated {
		writeMark(w.syncedFile(j.Path()), mark{})
	}
	return rotated, nil
}

// commitInBatches commits items SyncBatch at a time, each batch one commit
// under the branch lock; done hears each batch's size and how many of it
// this writer committed (the rest were on the branch already). On an
// error, left is how many items were not committed.
func (w *Writer) commitInBatches(ctx context.Context, items []item, done func(batch, n int)) (left int, err error) {
	for len(items) > 0 {
		batch := items[:min(SyncBatch, len(items))]
		items = items[len(batch):]
		var n int
		err := w.withLock(ctx, func() error {
			w.mu.Lock()
			defer w.mu.Unlock()
			var err error
			n, err = w.commitLocked(ctx, batch)
			return err
		})
		if err != nil {
			return len(batch) + len(items), err
		}
		done(len(batch), n)
	}
	return 0, nil
}

// missing returns the items not on the branch, in order: not in the
// tree of any commit it reaches. It reads the branch's events as the log
// readers do (ReadEvents: from the events cache, and only the commits
// since it).
func (w *Writer) missing(ctx context.Context, items []item) ([]item, error) {
	cfg := Config{GitDir: w.repo.GitDir, CommonDir: w.common, WorkTree: w.repo.Toplevel}
	evs, _, err := readEvents(ctx, cfg, []string{w.ref.String()}, &readStats{})
	if err != nil {
		return nil, err
	}
	on := make(map[string]bool, len(evs))
	for _, ev := range evs {
		on[ev.ID] = true
	}
	var out []item
	for _, it := range items {
		if !on[it.ev.ID] {
			out = append(out, it)
		}
	}
	return out, nil
}

// CatchUp commits the journal's events that are not on the branch yet,
// reading only the part of the journal that came after the last CatchUp
// of this clone: events recorded without a commit to the branch (a hook
// skipped with LOCKGATE_SKIP, a commit that failed) reach it with the
// next event that is committed. Where the last CatchUp ended is kept in
// a cache file (syncedFile), with the name of the journal's segment it
// is in; without it, or after a rotation, CatchUp reads the whole
// segment. Lines that are not events are skipped (Sync lists them). It
// then rotates the journal when it has grown past Config.RotateJournal;
// a rotation that fails is tried again by the next CatchUp. It returns
// how many events it committed.
func (w *Writer) CatchUp(ctx context.Context, j *journal.Journal) (int, error) {
	if j == nil {
		return 0, errors.New("catch up: no journal")
	}
	file := w.syncedFile(j.Path())
	was := readMark(file)
	evs, end, segment, err := j.ReadFrom(was.off, was.segment)
	if err != nil {
		return 0, fmt.Errorf("catch up %s to %s: %w", j.Path(), w.branch, err)
	}
	items, err := prepare(evs)
	if err != nil {
		return 0, fmt.Errorf("catch up %s to %s: %w", j.Path(), w.branch, err)
	}
	// Other workers' events wait for them: the mark stays before those
	// not on the branch yet.
	items, others := w.vouched(items)
	if len(others) > 0 {
		if others, err = w.missing(ctx, others); err != nil {
			return 0, fmt.Errorf("catch up %s to %s: %w", j.Path(), w.branch, err)
		}
	}
	committed := 0
	if left, err := w.commitInBatches(ctx, items, func(_, n int) { committed += n }); err != nil {
		return committed, fmt.Errorf("catch up %s to %s: %d events not committed (they stay in the journal): %w",
			j.Path(), w.branch, left, err)
	}
	// The tip the events were seen on goes with the mark: a reader
	// trusts the mark only while the branch still holds that tip.
	if tip, err := w.tip(); err == nil && !tip.IsZero() && segment != "" && len(others) == 0 {
		if now := (mark{off: end, segment: segment, tip: tip.String()}); now != was {
			writeMark(file, now)
		}
	}
	_, _ = w.rotate(ctx, j)
	return committed, nil
}

// vouched splits items, in order, into those whose worker the writer's
// signature vouches for (Config.Vouches; all of them when it is nil) and
// the others.
func (w *Writer) vouched(items []item) (mine, others []item) {
	if w.vouches == nil {
		return items, nil
	}
	for _, it := range items {
		if w.vouches(it.ev.Worker) {
			mine = append(mine, it)
		} else {
			others = append(others, it)
		}
	}
	return mine, others
}

// syncedFile is the cache file that says up to which byte of which
// segment of the journal at path every event is on the branch.
func (w *Writer) syncedFile(path string) string { return syncedPath(w.common, w.ref.String(), path) }

func syncedPath(common, ref, path string) string {
	return filepath.Join(common, "lockgate", "cache", "synced-"+digest16(ref+"\x00"+path))
}

// JournalAfterSync returns the journal's events that CatchUp has not
// seen on the branch cfg names (a full branch name, refs/heads/…): those
// of the current segment from the mark CatchUp left on, with the lines
// that are not events (journal.ReadAfter). The events before the mark,
// and those of the previous segment, are on that branch: CatchUp
// committed them to the tip it names with the mark, and the branch still
// holds that tip (checked: a branch rewound by hand does not). ok is
// false when there is no mark to read from (CatchUp never ran, the
// journal was rotated since, the mark is damaged or of an earlier
// version, the branch no longer holds its tip): the caller then reads the
// whole journal. decoded counts the lines decoded.
func JournalAfterSync(ctx context.Context, cfg Config, ref string, j *journal.Journal) (evs []journal.Event, bad []*journal.CorruptLineError, decoded int, ok bool, err error) {
	as, ok, err := RecentJournalAfterSync(ctx, cfg, ref, j, time.Time{}, 0)
	return as.Events, as.Bad, as.Decoded, ok, err
}

// AfterSync is what RecentJournalAfterSync read of the journal.
type AfterSync struct {
	// Events are the events after the mark at or after the time asked
	// for, Bad the lines after it that are not events, Decoded how many
	// lines were decoded (journal.ReadRecentAfter).
	Events  []journal.Event
	Bad     []*journal.CorruptLineError
	Decoded int
	// Last are the events of the last lines before the mark, as many as
	// asked for or fewer (journal.LastBefore): events on the branch.
	Last []journal.Event
}

// RecentJournalAfterSync is JournalAfterSync for a reader of the events
// at or after since (zero: all), who reads the branch's of that span
// after this call (a branch that moves on meanwhile still holds the
// mark's tip): of the lines after the mark, it returns what
// journal.ReadRecent returns of them (journal.ReadRecentAfter), and with
// them, the events of the last lines before the mark (last of them at
// most). With the branch's events of the span they are the journal's
// events of the span and its lines that are not events, as ReadRecent
// reads them all: the lines before the mark are events CatchUp read as
// Append writes them (journal.ReadFrom), which the branch holds as they
// are.
func RecentJournalAfterSync(ctx context.Context, cfg Config, ref string, j *journal.Journal, since time.Time, last int) (AfterSync, bool, error) {
	common := cfg.CommonDir
	if common == "" {
		common = cfg.GitDir
	}
	m := readMark(syncedPath(common, ref, j.Path()))
	if m.tip == "" {
		return AfterSync{}, false, nil
	}
	repo := gitexec.Repo{Toplevel: cfg.WorkTree, GitDir: cfg.GitDir, CommonDir: cfg.CommonDir}
	if held, err := gitexec.IsAncestor(ctx, &repo, m.tip, ref); err != nil || !held {
		// Not an answer to trust either way: read the whole journal.
		return AfterSync{}, false, nil //nolint:nilerr // reading it all is the safe answer
	}
	var as AfterSync
	var ok bool
	var err error
	as.Events, as.Bad, as.Decoded, ok, err = j.ReadRecentAfter(m.off, m.segment, since)
	if err != nil || !ok {
		return AfterSync{}, false, err
	}
	if as.Last, err = j.LastBefore(m.off, m.segment, last); err != nil {
		return AfterSync{}, false, err
	}
	return as, true, nil
}

// mark is a syncedFile: up to byte off of the journal's segment named
// segment, every event is on the branch, and tip is a commit of the
// branch that holds them.
type mark struct {
	off     int64
	segment string
	tip     string
}

// readMark reads a syncedFile, "<offset> <segment> <tip>": the zero mark
// (read the whole journal) when it is missing or not of that form; a mark
// of an earlier version (without a tip, or an offset alone) keeps its
// offset for CatchUp but is not trusted by JournalAfterSync.
func readMark(file string) mark {
	if safefs.CheckDirs(filepath.Dir(file), 2) != nil {
		return mark{}
	}
	data, err := readFile(file)
	if err != nil || len(data) > 128 {
		return mark{}
	}
	f := strings.Fields(string(data))
	if len(f) < 2 || len(f) > 3 {
		return mark{}
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || n < 0 {
		return mark{}
	}
	m := mark{off: n, segment: f[1]}
	if len(f) == 3 && plumbing.IsHash(f[2]) {
		m.tip = f[2]
	}
	return m
}

// writeMark writes a syncedFile, best effort: one that cannot be
// written costs a longer read next time, nothing more.
func writeMark(file string, m mark) {
	dir := filepath.Dir(file)
	if safefs.MkdirAll(dir, 0o777, 2) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".synced-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(strconv.FormatInt(m.off, 10) + " " + m.segment + " " + m.tip + "\n")
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}
