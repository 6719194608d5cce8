package workflow

import (
	"context"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// OldFormat reports whether the branch is of format 1: its tip, or
// without one the remote-tracking ref it would start on, is an event
// commit without the format blob. Commit refuses such a branch
// (ErrOldFormat) until Migrate moves it.
func (w *Writer) OldFormat(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var old bool
	err := w.readingTip(func(t *trees, tip, root plumbing.Hash) error {
		if tip.IsZero() {
			start := w.startingPoint()
			if start.IsZero() {
				return nil
			}
			var err error
			if root, err = w.commitTree(start); err != nil {
				return err
			}
		}
		_, _, o, err := w.commitFormat(t, root)
		old = o
		return err
	})
	if err != nil {
		return false, fmt.Errorf("read the format of %s: %w", w.branch, err)
	}
	return old, nil
}

// CheckFormat returns an error wrapping ErrOldFormat when the branch is
// of format 1 (OldFormat), or the error that kept it from telling.
func (w *Writer) CheckFormat(ctx context.Context) error {
	old, err := w.OldFormat(ctx)
	if err == nil && old {
		err = fmt.Errorf("%s: %w", w.branch, ErrOldFormat)
	}
	return err
}

// Migrate moves a branch of format 1 to format 2 in place, with one
// commit on its tip (on the remote-tracking ref when the clone has no
// branch yet): its tree holds the tip's events tree as it is and a
// format blob naming the tip as a base, so that readers find every
// earlier event in that one tree and walk no further down. The branch
// only moves forward; nothing is rewritten. It returns the base, or ""
// when there was nothing to migrate (format 2 already, or no branch).
func (w *Writer) Migrate(ctx context.Context) (base string, err error) {
	err = w.withLock(ctx, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		tip, err := w.tip()
		if err != nil {
			return err
		}
		from := tip
		if from.IsZero() {
			from = w.startingPoint()
		}
		if from.IsZero() {
			return nil
		}
		t := w.trees()
		root, err := w.commitTree(from)
		if err != nil {
			return err
		}
		_, _, old, err := w.commitFormat(t, root)
		if err != nil || !old {
			return err
		}
		events, err := t.subtree(root, eventsDir)
		if err != nil {
			return err
		}
		fm := branchFormat{version: formatVersion}.withBases(from.String())
		newRoot, err := w.formatRoot(events, plumbing.ZeroHash, fm)
		if err != nil {
			return err
		}
		msg := fmt.Sprintf("Move the workflow branch to format %d\n\nEvery event before this commit is in its tree, as it was in %s's;\nlater commits hold the events of their own segment.\n", formatVersion, from)
		c, err := w.writeCommit(newRoot, []plumbing.Hash{from}, msg, time.Time{})
		if err != nil {
			return err
		}
		if err := w.swap(ctx, w.ref, c, tip, "migrate to format 2"); err != nil {
			return err
		}
		base = from.String()
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("migrate %s: %w", w.branch, err)
	}
	return base, nil
}
