package workflow

import (
	"context"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/lockgate/lockgate/internal/gitexec"
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

// Migrated is what Migrate did: the format-1 tip it moved (Base), or the
// remote's branch of format 2 it took instead (Merged; MergeCommit is
// the merge it made when the local branch had commits of its own), or
// neither.
type Migrated struct {
	Base, Merged, MergeCommit string
}

// Migrate moves a branch of format 1 to format 2 in place, with one
// commit on its tip (on the remote-tracking ref when the clone has no
// branch yet): its tree holds the tip's events tree and a format blob
// naming the tip as a base, so that readers find every earlier event in
// that one tree and walk no further down. The branch only moves
// forward; nothing is rewritten. It fetches the remote's branch first
// (best effort: offline, it migrates what it has): when another clone
// moved it already, the local branch takes it (a fast-forward, or a
// merge naming the local tip as a base) rather than move a second time.
// Nothing to do (format 2 already, or no branch) is the zero Migrated.
func (w *Writer) Migrate(ctx context.Context) (Migrated, error) {
	var done Migrated
	if err := gitexec.Fetch(ctx, w.repo, w.remote, "+"+w.ref.String()+":"+w.TrackingRef()); err == nil {
		if err := w.odb.reindex(); err != nil {
			return done, fmt.Errorf("migrate %s: %w", w.branch, err)
		}
	}
	err := w.withLock(ctx, func() error {
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
		if theirs, theirRoot, ok := w.movedElsewhere(t, from); ok {
			behind, err := gitexec.IsAncestor(ctx, w.repo, from.String(), theirs.String())
			if err != nil {
				return err
			}
			next, _, _, err := w.mergeHistories(from, theirs, root, theirRoot, behind)
			if err != nil {
				return err
			}
			if err := w.swap(ctx, w.ref, next, tip, "take the remote's format 2"); err != nil {
				return err
			}
			done.Merged = theirs.String()
			if next != theirs {
				done.MergeCommit = next.String()
			}
			return nil
		}
		events, err := t.subtree(root, eventsDir)
		if err != nil {
			return err
		}
		fm := branchFormat{version: formatVersion}.withBases(from.String())
		newRoot, err := w.formatRoot(events, fm)
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
		done.Base = from.String()
		return nil
	})
	if err != nil {
		return Migrated{}, fmt.Errorf("migrate %s: %w", w.branch, err)
	}
	return done, nil
}

// movedElsewhere returns the remote-tracking ref's tip, and its root
// tree, when it is of format 2 and not from itself: another clone
// migrated the branch.
func (w *Writer) movedElsewhere(t *trees, from plumbing.Hash) (theirs, root plumbing.Hash, ok bool) {
	theirs, err := w.readRef(plumbing.ReferenceName(w.TrackingRef()))
	if err != nil || theirs.IsZero() || theirs == from {
		return plumbing.ZeroHash, plumbing.ZeroHash, false
	}
	if root, err = w.commitTree(theirs); err != nil {
		return plumbing.ZeroHash, plumbing.ZeroHash, false
	}
	if _, _, old, err := w.commitFormat(t, root); err != nil || old {
		return plumbing.ZeroHash, plumbing.ZeroHash, false
	}
	return theirs, root, true
}
