package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// Has reports whether the event with this id is on the branch: in the
// tree of a commit it reaches (see Events).
func (w *Writer) Has(ctx context.Context, id string) (bool, error) {
	if id == "" {
		return false, errors.New("has: empty event id")
	}
	evs, err := w.Events(ctx)
	if err != nil {
		return false, err
	}
	for _, ev := range evs {
		if ev.ID == id {
			return true, nil
		}
	}
	return false, nil
}

// readingTip runs a read-only fn on the root tree of the branch's tip
// and, if an object is missing, runs it once more with the pack index read
// again: another git process may have repacked since it was loaded. The
// caller holds w.mu.
func (w *Writer) readingTip(fn func(t *trees, tip, root plumbing.Hash) error) error {
	run := func() error {
		tip, err := w.tip()
		if err != nil {
			return err
		}
		root, err := w.commitTree(tip)
		if err != nil {
			return err
		}
		return fn(w.trees(), tip, root)
	}
	err := run()
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		if rerr := w.odb.reindex(); rerr != nil {
			return rerr
		}
		err = run()
	}
	return err
}

// Events returns every event on the branch, sorted by timestamp, then id:
// those of every commit the tip reaches, down to the bases its format
// names (a format-1 commit's tree holds the events of its history, so
// the walk stops there too). A missing branch has no events. A blob that
// is not an event is an error naming its path. It walks the commits in
// process, apart from the log reader (ReadEvents) that the commands use,
// and reads every commit: it is for Sync's checks and the tests.
func (w *Writer) Events(ctx context.Context) ([]journal.Event, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var evs []journal.Event
	err := w.readingTip(func(t *trees, tip, root plumbing.Hash) error {
		evs = nil
		if tip.IsZero() {
			return nil
		}
		fm, _, _, err := w.commitFormat(t, root)
		if err != nil {
			return err
		}
		seen := map[plumbing.Hash]bool{}
		for _, b := range fm.bases {
			seen[plumbing.NewHash(b)] = true
		}
		files := map[string]plumbing.Hash{}
		queue := []plumbing.Hash{tip}
		for len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			if seen[c] {
				continue
			}
			seen[c] = true
			cm, err := object.GetCommit(w.odb, c)
			if err != nil {
				return fmt.Errorf("read commit %s: %w", c, err)
			}
			_, _, old, err := w.commitFormat(t, cm.TreeHash)
			if err != nil {
				return fmt.Errorf("commit %s: %w", c, err)
			}
			events, err := t.subtree(cm.TreeHash, eventsDir)
			if err != nil {
				return err
			}
			if !events.IsZero() {
				err := w.walk(ctx, events, eventsDir, 0, func(path string, blob plumbing.Hash) error {
					if have, ok := files[path]; !ok || blob.String() < have.String() {
						files[path] = blob
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			if !old {
				queue = append(queue, cm.ParentHashes...)
			}
		}
		for _, path := range sortedKeys(files) {
			ev, err := w.readEvent(files[path])
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			evs = append(evs, ev)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", w.branch, err)
	}
	sort.SliceStable(evs, func(i, j int) bool {
		if !evs[i].Timestamp.Equal(evs[j].Timestamp) {
			return evs[i].Timestamp.Before(evs[j].Timestamp)
		}
		return evs[i].ID < evs[j].ID
	})
	return evs, nil
}

// walk calls fn for every file of the event shards under tree h (depth
// 0 is events/), reading each tree once and no blob.
func (w *Writer) walk(ctx context.Context, h plumbing.Hash, path string, depth int, fn func(path string, blob plumbing.Hash) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	tr, err := object.GetTree(w.odb, h)
	if err != nil {
		return fmt.Errorf("read tree %s (%s): %w", h, path, err)
	}
	for _, e := range tr.Entries {
		p := path + "/" + e.Name
		switch {
		case depth == 0 && e.Name == formatFile && e.Mode.IsFile():
			continue // format 2's blob, not an event
		case e.Mode == filemode.Dir && depth < 2:
			if err := w.walk(ctx, e.Hash, p, depth+1, fn); err != nil {
				return err
			}
		case e.Mode.IsFile() && depth == 2:
			if err := fn(p, e.Hash); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: %w (not the events/xx/yy/<id>.json layout)", p, errShape)
		}
	}
	return nil
}

func (w *Writer) readEvent(h plumbing.Hash) (journal.Event, error) {
	obj, err := w.odb.EncodedObject(plumbing.BlobObject, h)
	if err != nil {
		return journal.Event{}, fmt.Errorf("read blob %s: %w", h, err)
	}
	if obj.Size() > journal.MaxLineBytes+1 {
		return journal.Event{}, fmt.Errorf("blob %s: %d bytes, more than an event", h, obj.Size())
	}
	r, err := obj.Reader()
	if err != nil {
		return journal.Event{}, fmt.Errorf("read blob %s: %w", h, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return journal.Event{}, fmt.Errorf("read blob %s: %w", h, err)
	}
	ev, err := journal.ParseLine(b)
	if err != nil {
		return journal.Event{}, fmt.Errorf("not an event: %w", err)
	}
	return ev, nil
}
