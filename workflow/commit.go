package workflow

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// item is an event ready to be stored.
type item struct {
	ev  journal.Event
	loc location
}

// prepare normalizes evs and drops repeated ids (the first one wins).
func prepare(evs []journal.Event) ([]item, error) {
	items := make([]item, 0, len(evs))
	seen := make(map[string]bool, len(evs))
	for i, ev := range evs {
		ev, err := normalize(ev)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		if seen[ev.ID] {
			continue
		}
		seen[ev.ID] = true
		items = append(items, item{ev: ev, loc: locate(ev.ID)})
	}
	return items, nil
}

// Commit commits the events of evs whose id is not on the branch yet, in
// one commit, and returns how many it committed: committing the same
// events again commits nothing. Events without an id get one derived from
// their content. A missing branch is created on the remote branch as the
// clone last fetched it (its remote-tracking ref), or as a root commit
// when the clone has none.
// On error nothing was committed; the events are still in the journal, and
// Sync commits them later.
func (w *Writer) Commit(ctx context.Context, evs []journal.Event) (committed int, err error) {
	if len(evs) == 0 {
		return 0, nil
	}
	items, err := prepare(evs)
	if err != nil {
		return 0, fmt.Errorf("commit to %s: %w", w.branch, err)
	}
	err = w.withLock(ctx, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		committed, err = w.commitLocked(ctx, items)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("commit %d events to %s: %w", len(items), w.branch, err)
	}
	return committed, nil
}

// commitLocked is the compare-and-swap loop: read the tip, build a commit
// of the events it lacks on top of it, swap, and on a lost swap start
// again from the new tip. It holds w.mu.
func (w *Writer) commitLocked(ctx context.Context, items []item) (int, error) {
	reindexed := false
	var lost error
	var took time.Duration
	for attempt := 0; attempt < w.attempts; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt-1, took); err != nil {
				return 0, err
			}
		}
		start := time.Now()
		parent, err := w.tip()
		if err != nil {
			return 0, err
		}
		base := parent
		if parent.IsZero() {
			base = w.startingPoint()
		}
		c, added, err := w.build(base, items)
		if errors.Is(err, plumbing.ErrObjectNotFound) && !reindexed {
			// Another git process may have packed or fetched objects
			// since the pack index was read: read it again, once.
			if err := w.odb.reindex(); err != nil {
				return 0, err
			}
			reindexed = true
			continue
		}
		if err != nil {
			return 0, err
		}
		if len(added) == 0 {
			return 0, nil
		}
		err = w.swap(ctx, w.ref, c, parent, Subject(added[0].ev))
		if err == nil {
			return len(added), nil
		}
		if !errors.Is(err, errRetry) {
			return 0, err
		}
		lost, took = err, time.Since(start)
	}
	return 0, fmt.Errorf("%w: gave up after %d attempts (last: %v)", ErrContention, w.attempts, lost)
}

// startingPoint is the commit a branch this clone does not have yet
// starts from: the remote's branch as the clone last fetched it
// (TrackingRef; a fresh clone has it), so that the first push is a
// fast-forward of the events added on top, not a root commit that the
// push must fetch and merge with the whole remote branch, reading every
// tree of it. The zero hash (a root commit, merged at the push) when the
// clone has no remote-tracking ref, or one that is not an event commit's
// root (events/ alone) this clone can read: the push's merge then reports
// what is wrong with it. A remote branch of format 1 is taken too, so
// that the commit refuses it (ErrOldFormat).
func (w *Writer) startingPoint() plumbing.Hash {
	tracking, err := w.readRef(plumbing.ReferenceName(w.TrackingRef()))
	if err != nil || tracking.IsZero() {
		return plumbing.ZeroHash
	}
	root, err := w.commitTree(tracking)
	if err != nil {
		return plumbing.ZeroHash
	}
	tr, err := w.trees().get(root)
	if err != nil || len(tr.Entries) != 1 || tr.Entries[0].Name != eventsDir || tr.Entries[0].Mode != filemode.Dir {
		return plumbing.ZeroHash
	}
	return tracking
}

// build writes the objects of a commit on parent (zero: a root commit)
// that adds the items parent's tree lacks, and returns it with the items
// it added; no items means nothing to commit. Only the trees on the way to
// the new events are read and rewritten.
func (w *Writer) build(parent plumbing.Hash, items []item) (plumbing.Hash, []item, error) {
	root, err := w.commitTree(parent)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	t := w.trees()
	fm, fmBlob, old, err := w.commitFormat(t, root)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if old {
		return plumbing.ZeroHash, nil, ErrOldFormat
	}
	var added []item
	for _, it := range items {
		ok, err := t.has(root, it.loc)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		if !ok {
			added = append(added, it)
		}
	}
	if len(added) == 0 {
		return plumbing.ZeroHash, nil, nil
	}

	// Group the new files by shard: l1 → l2 → entries.
	shards := make(map[string]map[string][]object.TreeEntry)
	var when time.Time
	for _, it := range added {
		line, err := encodeEvent(it.ev)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		h, err := w.writeBlob(line)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		if shards[it.loc.l1] == nil {
			shards[it.loc.l1] = make(map[string][]object.TreeEntry)
		}
		shards[it.loc.l1][it.loc.l2] = append(shards[it.loc.l1][it.loc.l2],
			object.TreeEntry{Name: it.loc.name, Mode: filemode.Regular, Hash: h})
		if it.ev.Timestamp.After(when) {
			when = it.ev.Timestamp
		}
	}

	eventsTree, err := t.segmentBase(root)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var l1Entries []object.TreeEntry
	for _, l1 := range sortedKeys(shards) {
		l1Tree, err := t.subtree(eventsTree, l1)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		var l2Entries []object.TreeEntry
		for _, l2 := range sortedKeys(shards[l1]) {
			leafTree, err := t.subtree(l1Tree, l2)
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			h, err := w.rewrite(t, leafTree, shards[l1][l2])
			if err != nil {
				return plumbing.ZeroHash, nil, err
			}
			l2Entries = append(l2Entries, object.TreeEntry{Name: l2, Mode: filemode.Dir, Hash: h})
		}
		h, err := w.rewrite(t, l1Tree, l2Entries)
		if err != nil {
			return plumbing.ZeroHash, nil, err
		}
		l1Entries = append(l1Entries, object.TreeEntry{Name: l1, Mode: filemode.Dir, Hash: h})
	}
	// The format blob goes in with the shards: events/ is written once.
	fe, err := w.formatEntry(fmBlob, fm)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	evH, err := w.rewrite(t, eventsTree, append(l1Entries, fe))
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	rootH, err := w.rootOf(evH)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	var parents []plumbing.Hash
	if !parent.IsZero() {
		parents = []plumbing.Hash{parent}
	}
	evs := make([]journal.Event, len(added))
	for i, it := range added {
		evs[i] = it.ev
	}
	c, err := w.writeCommit(rootH, parents, message(evs), when)
	if err != nil {
		return plumbing.ZeroHash, nil, err
	}
	return c, added, nil
}

// rewrite writes tree base with add put in.
func (w *Writer) rewrite(t *trees, base plumbing.Hash, add []object.TreeEntry) (plumbing.Hash, error) {
	es, err := t.upsert(base, add)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return w.writeTree(es)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
