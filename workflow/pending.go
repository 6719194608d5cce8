package workflow

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// Unpushed reports whether the branch holds commits the remote may lack:
// events committed that no push has sent yet (a push that lost its race
// and gave up, a remote that was down, a process killed before its
// push). It compares the branch with its remote-tracking ref
// (TrackingRef), which every successful Push leaves at the pushed tip
// and every fetch of the branch moves on: reading two refs, and running
// `git merge-base --is-ancestor` only when they differ. It never talks
// to the remote; a remote that moved on since this clone last saw it is
// found by the push.
func (w *Writer) Unpushed(ctx context.Context) (bool, error) {
	w.mu.Lock()
	local, err := w.tip()
	var tracking plumbing.Hash
	if err == nil {
		tracking, err = w.readRef(plumbing.ReferenceName(w.TrackingRef()))
	}
	w.mu.Unlock()
	switch {
	case err != nil:
		return false, err
	case local.IsZero() || local == tracking:
		return false, nil
	case tracking.IsZero():
		return true, nil
	}
	in, err := gitexec.IsAncestor(ctx, w.repo, local.String(), tracking.String())
	if err != nil {
		return false, fmt.Errorf("compare %s with %s: %w", w.branch, w.TrackingRef(), err)
	}
	return !in, nil
}

// PushRounds bounds the rounds of PushPending: each is a whole Push (its
// own push → fetch → merge attempts), and a round that fails waits
// longer before the next.
const PushRounds = 5

// PushPending pushes the branch when Unpushed says the remote may lack
// some of it, and reports whether it pushed. A Push that fails is tried
// again, up to rounds rounds in all, after a wait that doubles from a
// quarter of a second (with jitter, so that clones that lost one race
// do not meet again at the next); a remote that is not configured is not
// tried again. The error is the last round's *PushError: the events
// stay on the local branch, and the next PushPending sends them.
func (w *Writer) PushPending(ctx context.Context, rounds int) (bool, error) {
	pending, err := w.Unpushed(ctx)
	if err != nil || !pending {
		return false, err
	}
	wait := 250 * time.Millisecond
	for round := 1; ; round++ {
		err := w.Push(ctx)
		if err == nil {
			return true, nil
		}
		if round >= rounds || errors.Is(err, ErrNoRemote) || ctx.Err() != nil {
			return false, err
		}
		t := time.NewTimer(wait/2 + rand.N(wait))
		select {
		case <-ctx.Done():
			t.Stop()
			return false, err
		case <-t.C:
		}
		wait = min(2*wait, 4*time.Second)
	}
}

// trackPushed moves TrackingRef to pushed, the tip a push just sent,
// when the push did not (a remote without a fetch refspec for the
// branch), so that Unpushed finds nothing left to send. It never moves
// the ref back: a fetch meanwhile may have moved it past pushed. Best
// effort: a ref left behind costs one push that sends nothing.
func (w *Writer) trackPushed(ctx context.Context, pushed plumbing.Hash) {
	name := plumbing.ReferenceName(w.TrackingRef())
	w.mu.Lock()
	tracking, err := w.readRef(name)
	w.mu.Unlock()
	if err != nil || tracking == pushed {
		return
	}
	old := gitexec.ZeroSHA
	if !tracking.IsZero() {
		if behind, err := gitexec.IsAncestor(ctx, w.repo, tracking.String(), pushed.String()); err != nil || !behind {
			return
		}
		old = tracking.String()
	}
	_ = gitexec.UpdateRef(ctx, w.repo, name.String(), pushed.String(), old, "lockgate: pushed "+w.branch)
}
