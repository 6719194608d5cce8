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
}

// SyncBatch is the largest number of events Sync puts in one commit, which
// keeps each commit message readable.
const SyncBatch = 500

// Sync commits every event of the journal that is not on the branch yet,
// in journal order: it repairs a crash (or a failed commit) between the
// journal append and the branch commit. Finding what is missing reads
// tree names only, never the blobs already committed. An event committed
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
		writeMark(w.syncedFile(j.Path()), 0, "")
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

// missing returns the items not on the branch tip, in order.
func (w *Writer) missing(ctx context.Context, items []item) ([]item, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []item
	err := w.readingTip(func(t *trees, root plumbing.Hash) error {
		out = out[:0]
		for i, it := range items {
			if i%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			ok, err := t.has(root, it.loc)
			if err != nil {
				return err
			}
			if !ok {
				out = append(out, it)
			}
		}
		return nil
	})
	return out, err
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
	from, head := readMark(file)
	evs, end, segment, err := j.ReadFrom(from, head)
	if err != nil {
		return 0, fmt.Errorf("catch up %s to %s: %w", j.Path(), w.branch, err)
	}
	items, err := prepare(evs)
	if err != nil {
		return 0, fmt.Errorf("catch up %s to %s: %w", j.Path(), w.branch, err)
	}
	committed := 0
	if left, err := w.commitInBatches(ctx, items, func(_, n int) { committed += n }); err != nil {
		return committed, fmt.Errorf("catch up %s to %s: %d events not committed (they stay in the journal): %w",
			j.Path(), w.branch, left, err)
	}
	if end != from || segment != head {
		writeMark(file, end, segment)
	}
	_, _ = w.rotate(ctx, j)
	return committed, nil
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
// committed them, and lockgate's branch only grows. ok is false when
// there is no mark to read from (CatchUp never ran, the journal was
// rotated since, the mark is damaged): the caller then reads the whole
// journal. decoded counts the lines decoded.
func JournalAfterSync(cfg Config, ref string, j *journal.Journal) (evs []journal.Event, bad []*journal.CorruptLineError, decoded int, ok bool, err error) {
	common := cfg.CommonDir
	if common == "" {
		common = cfg.GitDir
	}
	off, head := readMark(syncedPath(common, ref, j.Path()))
	return j.ReadAfter(off, head)
}

// readMark reads a syncedFile, "<offset> <segment>": 0 (read the whole
// journal) when it is missing, not of that form, or of an earlier
// version (an offset alone, which names no segment).
func readMark(file string) (int64, string) {
	if safefs.CheckDirs(filepath.Dir(file), 2) != nil {
		return 0, ""
	}
	data, err := readFile(file)
	if err != nil || len(data) > 64 {
		return 0, ""
	}
	off, segment, ok := strings.Cut(strings.TrimSpace(string(data)), " ")
	n, err := strconv.ParseInt(off, 10, 64)
	if !ok || err != nil || n < 0 {
		return 0, ""
	}
	return n, segment
}

// writeMark writes a syncedFile, best effort: one that cannot be
// written costs a longer read next time, nothing more.
func writeMark(file string, off int64, segment string) {
	dir := filepath.Dir(file)
	if safefs.MkdirAll(dir, 0o777, 2) != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".synced-*")
	if err != nil {
		return
	}
	_, werr := tmp.WriteString(strconv.FormatInt(off, 10) + " " + segment + "\n")
	if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
		_ = os.Remove(tmp.Name())
	}
}
