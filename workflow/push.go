package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// PushAttempts bounds the push → fetch → merge rounds of one Push.
const PushAttempts = 10

// PushError is a failed Push. Err wraps ErrNoRemote, ErrUnreachable,
// ErrRejected or the failure of a local step. Nothing is lost: the events
// stay in the journal and on the local branch, and the next Push sends
// them.
type PushError struct {
	Remote string
	Branch string
	Err    error
}

func (e *PushError) Error() string {
	return fmt.Sprintf("push %s to %s: %v (the events stay in the journal and on the local branch %s; the next push sends them)",
		e.Branch, e.Remote, e.Err, e.Branch)
}

func (e *PushError) Unwrap() error { return e.Err }

// PushFailure is why the push failed, without what Error adds around it.
func (e *PushError) PushFailure() error { return e.Err }

// TrackingRef is where Push fetches the remote branch before a merge:
// refs/remotes/<remote>/<branch>, the ref `git fetch` itself would write.
func (w *Writer) TrackingRef() string {
	return "refs/remotes/" + w.remote + "/" + w.branch
}

// Push pushes the branch to the remote, never forcing. When the remote
// has events this clone lacks (a non-fast-forward), it fetches the remote
// branch into TrackingRef, merges the two event sets by id (a merge
// commit whose tree is the union, see the package doc) and pushes again,
// at most PushAttempts times. A missing branch has nothing to push. Push
// runs `git push --no-verify`: the user's pre-push hook is for the user's
// branches, not for lockgate's own.
func (w *Writer) Push(ctx context.Context) error {
	fail := func(err error) error { return &PushError{Remote: w.remote, Branch: w.branch, Err: err} }
	if _, ok, err := gitexec.RemoteURL(ctx, w.repo, w.remote); err != nil {
		return fail(err)
	} else if !ok {
		return fail(fmt.Errorf("%w: there is no remote %q (add one with `git remote add %s <url>` or set workflow.remote)",
			ErrNoRemote, w.remote, w.remote))
	}
	spec := w.ref.String() + ":" + w.ref.String()
	last := ""
	var took time.Duration
	for attempt := 0; attempt < PushAttempts; attempt++ {
		if attempt > 0 {
			// Another clone may be pushing in the same rhythm.
			if err := backoff(ctx, attempt-1, took); err != nil {
				return fail(err)
			}
		}
		start := time.Now()
		w.mu.Lock()
		local, err := w.tip()
		w.mu.Unlock()
		if err != nil {
			return fail(err)
		}
		if local.IsZero() {
			return nil
		}
		sts, err := gitexec.Push(ctx, w.repo, w.remote, spec)
		if err == nil {
			w.trackPushed(ctx, local)
			return nil
		}
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		st, ok := statusOf(sts, w.ref.String())
		switch {
		case !ok:
			return fail(fmt.Errorf("%w: %s", ErrUnreachable, gitReason(err)))
		case remoteBusy(st):
			// Another push held the remote's ref lock or moved the ref
			// under this one: push again (and fetch if it is ahead).
			last = st.Summary
		case st.Rejected():
			last = st.Summary
			// FetchRef runs no automatic gc: git's gc --auto, started by
			// the fetch, would repack the whole clone (every event the
			// branch ever had, once its loose objects pass gc.auto) in
			// the background of the command that happened to fetch. The
			// clone's own git commands still pack what lockgate wrote.
			if err := gitexec.FetchRef(ctx, w.repo, w.remote, w.ref.String(), w.TrackingRef()); err != nil {
				if ctx.Err() != nil {
					return fail(ctx.Err())
				}
				return fail(fmt.Errorf("fetch to merge: %w: %s", ErrUnreachable, gitReason(err)))
			}
			if err := w.mergeRemote(ctx); err != nil {
				return fail(err)
			}
		default:
			if said := remoteSaid(err); said != "" {
				return fail(fmt.Errorf("%w by the remote: %s; it said: %s", ErrRejected, st.Summary, said))
			}
			return fail(fmt.Errorf("%w by the remote: %s", ErrRejected, st.Summary))
		}
		took = time.Since(start)
	}
	return fail(fmt.Errorf("%w: still %s after %d attempts", ErrRejected, last, PushAttempts))
}

// remoteBusy reports a refusal caused by a concurrent push on the remote:
// receive-pack could not take the ref's lock, or the ref moved between
// the advertisement and the update.
func remoteBusy(st gitexec.PushStatus) bool {
	return st.Flag == '!' && strings.HasPrefix(st.Summary, "[remote rejected]") &&
		(strings.Contains(st.Summary, "failed to update ref") || strings.Contains(st.Summary, "failed to lock") ||
			strings.Contains(st.Summary, "cannot lock ref"))
}

func statusOf(sts []gitexec.PushStatus, ref string) (gitexec.PushStatus, bool) {
	for _, s := range sts {
		if s.To == ref || s.From == ref {
			return s, true
		}
	}
	return gitexec.PushStatus{}, false
}

// remoteSaid is what the remote's hooks wrote to a refused push (git's
// "remote: " lines), "" when nothing: the reason a server refused.
func remoteSaid(err error) string {
	var ge *gitexec.Error
	if !errors.As(err, &ge) {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(ge.Stderr, "\n") {
		if l, ok := strings.CutPrefix(strings.TrimSpace(l), "remote:"); ok && strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return oneLine(strings.Join(lines, " | "), 600)
}

// gitReason is the gist of a failed git command: its fatal/error lines.
func gitReason(err error) string {
	var ge *gitexec.Error
	if !errors.As(err, &ge) || strings.TrimSpace(ge.Stderr) == "" {
		return err.Error()
	}
	var lines []string
	for _, l := range strings.Split(ge.Stderr, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "fatal: ") || strings.HasPrefix(l, "error: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		lines = []string{strings.TrimSpace(ge.Stderr)}
	}
	return oneLine(strings.Join(lines, "; "), 400)
}

// mergeRemote brings the fetched remote branch into the local one: nothing
// when the local branch already has it, a fast-forward when the local
// branch is behind, else a merge commit (parents: local, remote) whose tree
// is the union of both.
func (w *Writer) mergeRemote(ctx context.Context) error {
	tracking := plumbing.ReferenceName(w.TrackingRef())
	return w.withLock(ctx, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if err := w.odb.reindex(); err != nil { // the fetch may have written a pack
			return err
		}
		theirs, err := w.readRef(tracking)
		if err != nil {
			return err
		}
		if theirs.IsZero() {
			return fmt.Errorf("merge: the fetch did not write %s", tracking)
		}
		var lost error
		var took time.Duration
		for attempt := 0; attempt < w.attempts; attempt++ {
			if attempt > 0 {
				if err := backoff(ctx, attempt-1, took); err != nil {
					return err
				}
			}
			start := time.Now()
			ours, err := w.tip()
			if err != nil {
				return err
			}
			if ours == theirs {
				return nil
			}
			next, msg := theirs, "fast-forward to "+w.remote+"/"+w.branch
			if !ours.IsZero() {
				if in, err := gitexec.IsAncestor(ctx, w.repo, theirs.String(), ours.String()); err != nil {
					return fmt.Errorf("merge: %w", err)
				} else if in {
					return nil // a push made meanwhile got there already
				}
				behind, err := gitexec.IsAncestor(ctx, w.repo, ours.String(), theirs.String())
				if err != nil {
					return fmt.Errorf("merge: %w", err)
				}
				// Behind is not enough for a fast-forward: a commit on
				// the remote may have deleted (or changed) an event this
				// branch holds, and the branch would lose it. Only a
				// remote tree that keeps every file of ours, as it is,
				// is taken as it is.
				if next, msg, err = w.merge(ours, theirs, behind); err != nil {
					return fmt.Errorf("merge %s into %s: %w", tracking, w.branch, err)
				}
			}
			err = w.swap(ctx, w.ref, next, ours, msg)
			if err == nil {
				return nil
			}
			if !errors.Is(err, errRetry) {
				return err
			}
			lost, took = err, time.Since(start)
		}
		return fmt.Errorf("merge %s: %w: gave up after %d attempts (last: %v)", tracking, ErrContention, w.attempts, lost)
	})
}

// merge writes the merge commit of ours and theirs; with ff (ours is an
// ancestor of theirs) it returns theirs when its tree holds every file of
// ours, unchanged.
func (w *Writer) merge(ours, theirs plumbing.Hash, ff bool) (plumbing.Hash, string, error) {
	a, err := w.commitTree(ours)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	b, err := w.commitTree(theirs)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	if c, msg, ok, err := w.mergeHistories(ours, theirs, a, b, ff); ok || err != nil {
		return c, msg, err
	}
	var st mergeStats
	root, err := w.trees().union(a, b, &st)
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	src := w.remote + "/" + w.branch
	if ff && st.onlyOurs == 0 && st.differ == 0 {
		return theirs, "fast-forward to " + src, nil
	}
	var body strings.Builder
	fmt.Fprintf(&body, "Merge %s: %d events from %s\n\n", src, st.onlyTheirs, w.remote)
	fmt.Fprintf(&body, "%d events only on %s, %d only here; the tree is the union by event id.\n", st.onlyTheirs, w.remote, st.onlyOurs)
	if st.differ > 0 {
		fmt.Fprintf(&body, "%d event ids had different content on each side; the blob with the smaller hash was kept.\n", st.differ)
	}
	c, err := w.writeCommit(root, []plumbing.Hash{ours, theirs}, body.String(), time.Time{})
	if err != nil {
		return plumbing.ZeroHash, "", err
	}
	return c, "merge " + src, nil
}

// mergeHistories merges ours and theirs (root trees a and b) when either
// is of format 2 (ok false when neither is): the events of a format-2
// branch are those of its history, so ours behind theirs is a
// fast-forward, and a merge commit adds no event of its own. Its format
// names the bases of both sides, and a side of format 1 as a base too,
// whose events tree it then holds, as the commit that migrates a branch
// does.
func (w *Writer) mergeHistories(ours, theirs, a, b plumbing.Hash, ff bool) (plumbing.Hash, string, bool, error) {
	t := w.trees()
	fa, _, oldA, err := w.commitFormat(t, a)
	if err != nil {
		return plumbing.ZeroHash, "", false, err
	}
	fb, _, oldB, err := w.commitFormat(t, b)
	if err != nil {
		return plumbing.ZeroHash, "", false, err
	}
	if oldA && oldB {
		return plumbing.ZeroHash, "", false, nil
	}
	src := w.remote + "/" + w.branch
	if ff && !oldB {
		return theirs, "fast-forward to " + src, true, nil
	}
	fm := branchFormat{version: formatVersion}
	var events plumbing.Hash
	for _, side := range []struct {
		c, root plumbing.Hash
		fm      branchFormat
		old     bool
	}{{ours, a, fa, oldA}, {theirs, b, fb, oldB}} {
		if !side.old {
			fm = fm.withBases(side.fm.bases...)
			continue
		}
		fm = fm.withBases(side.c.String())
		if events, err = t.subtree(side.root, eventsDir); err != nil {
			return plumbing.ZeroHash, "", false, err
		}
	}
	root, err := w.formatRoot(events, fm)
	if err != nil {
		return plumbing.ZeroHash, "", false, err
	}
	body := fmt.Sprintf("Merge %s\n\nThe events of both histories; this commit adds none of its own.\n", src)
	c, err := w.writeCommit(root, []plumbing.Hash{ours, theirs}, body, time.Time{})
	if err != nil {
		return plumbing.ZeroHash, "", false, err
	}
	return c, "merge " + src, true, nil
}
