package lockops

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/session"
)

// ReleaseMergedRequest is `release-merged --range A..B [--branch B]`:
// the commits A..B just landed on branch B.
type ReleaseMergedRequest struct {
	Range, Branch string
	// DryRun says what would be released, and releases nothing.
	DryRun bool
}

// MergedLock is a lock whose holder's work touched its paths in the
// range: released, or kept while the holder has commits on those paths
// that are on no commit of the branch yet.
type MergedLock struct {
	session.LockView
	// Commits are the holder's commits of the range touching the lock's
	// paths; Merge is the commit of the branch that brought them.
	Commits []string `json:"commits"`
	Merge   string   `json:"merge"`
	// Unmerged are the holder's commits on those paths elsewhere (other
	// branches, remote-tracking refs): while any is left, the lock stays.
	Unmerged []string `json:"unmerged,omitempty"`
}

// ReleaseMergedResult is what release-merged found and did.
type ReleaseMergedResult struct {
	// Enabled is locks.release_on_merge: off, nothing is looked at.
	Enabled  bool         `json:"enabled"`
	Branch   string       `json:"branch,omitempty"`
	Range    string       `json:"range,omitempty"`
	DryRun   bool         `json:"dry_run,omitempty"`
	Released []MergedLock `json:"released"`
	Kept     []MergedLock `json:"kept"`
}

// ReleaseMerged releases the locks whose work landed
// (locks.release_on_merge): each live lock that holds on the branch the
// range lands on (a lock of that branch, or one without a branch) and
// whose holder's commits of the range (by their lockgate trailers)
// touch its paths — unless that holder has commits on those paths that
// the branch does not have yet (another pull request still open). Each
// release is logged as lock_release by the caller, naming the commit
// that brought the work, and only the grant judged is released: a lock
// taken anew meanwhile stays.
func (e *Handler) ReleaseMerged(ctx context.Context, r ReleaseMergedRequest) (ReleaseMergedResult, error) {
	out := ReleaseMergedResult{Enabled: e.Cfg.Locks.ReleaseOnMerge, Released: []MergedLock{}, Kept: []MergedLock{}, DryRun: r.DryRun}
	if !out.Enabled {
		return out, nil
	}
	base, tip, ok := strings.Cut(r.Range, "..")
	if !ok || base == "" || tip == "" || strings.HasPrefix(tip, ".") {
		return out, session.Usagef("release-merged: --range %q: want BEFORE..AFTER, the commits that just landed", r.Range)
	}
	if err := e.verifier().CheckRange(ctx, "release-merged", r.Range); err != nil {
		return out, err
	}
	branch, err := e.verifier().RangeBranch(ctx, r.Range, r.Branch)
	if err != nil {
		return out, err
	}
	if branch == "" {
		return out, session.Usagef("release-merged: which branch did %s land on? Give --branch B", r.Range)
	}
	out.Branch, out.Range = branch, r.Range
	h, err := e.Runner(ctx, session.Purpose{}, "")
	if err != nil {
		return out, err
	}
	merged, err := h.WorkCommits(ctx, []string{r.Range})
	if err != nil {
		return out, fmt.Errorf("release-merged: %w", err)
	}
	if len(merged) == 0 {
		return out, nil
	}
	// Work elsewhere: every branch and remote-tracking branch, but the
	// workflow branch, whose commits hold events, not work.
	wf := e.Cfg.Workflow.Branch
	unmerged, err := h.WorkCommits(ctx, []string{"--exclude=" + wf, "--branches", "--exclude=*/" + wf, "--remotes", "--not", tip})
	if err != nil {
		return out, fmt.Errorf("release-merged: %w", err)
	}
	entries, err := e.Store.List(ctx)
	if err != nil {
		return out, err
	}
	now := e.Now()
	var live []locks.Lock
	for _, en := range entries {
		if en.Err == nil && !en.Expired(now) && !session.IsBookkeeping(en.Lock) {
			live = append(live, en.Lock)
		}
	}
	landings, err := hooks.Landed(live, branch, merged, unmerged)
	if err != nil {
		return out, err
	}
	var landed []locks.Landed
	for _, l := range landings {
		m := MergedLock{LockView: session.ViewOf(l.Lock), Commits: l.Merged, Unmerged: l.Unmerged}
		if m.Merge, err = e.mergeOf(ctx, base, tip, l.Merged[len(l.Merged)-1]); err != nil {
			return out, err
		}
		if len(l.Unmerged) > 0 {
			out.Kept = append(out.Kept, m)
			continue
		}
		out.Released = append(out.Released, m)
		landed = append(landed, locks.Landed{Key: l.Lock.Key, Fence: l.Lock.Fence, Commit: m.Merge,
			Details: fmt.Sprintf("released on merge: %s's work on it (%s) is on %s in %s; held since %s",
				l.Lock.Holder, ShortList(l.Merged), branch, session.Short(m.Merge), l.Lock.CreatedAt.UTC().Format(time.RFC3339))})
	}
	if r.DryRun || len(landed) == 0 {
		return out, nil
	}
	res, err := e.Mgr.ReleaseLanded(ctx, landed, e.Me)
	e.syncAfterLocks(ctx)
	if err != nil {
		return out, err
	}
	// A grant released or taken anew meanwhile was not released here.
	out.Released = slices.DeleteFunc(out.Released, func(m MergedLock) bool { return slices.Contains(res.Missing, m.Key) })
	return out, nil
}

// mergeOf is the commit of base..tip's first-parent line that brought
// commit c onto the branch: c itself when it is on that line (a
// fast-forward or a rebase), else the oldest commit of that line that
// has c as an ancestor (the merge that brought it).
func (e *Handler) mergeOf(ctx context.Context, base, tip, c string) (string, error) {
	out, err := gitexec.RepoOutput(ctx, e.repo(), "rev-list", "--first-parent", base+".."+tip)
	if err != nil {
		return "", fmt.Errorf("release-merged: %w", err)
	}
	line := strings.Fields(string(out)) // newest first
	if slices.Contains(line, c) {
		return c, nil
	}
	// Every descendant of c up to tip, by any parent: with --first-parent,
	// --ancestry-path walks first-parent edges only and finds no path from
	// a commit below a merge's second parent (c followed by more work on
	// its branch before the merge).
	out, err = gitexec.RepoOutput(ctx, e.repo(), "rev-list", "--ancestry-path", c+".."+tip)
	if err != nil {
		return "", fmt.Errorf("release-merged: %w", err)
	}
	after := map[string]bool{}
	for _, sha := range strings.Fields(string(out)) {
		after[sha] = true
	}
	for i := len(line) - 1; i >= 0; i-- {
		if after[line[i]] {
			return line[i], nil
		}
	}
	return c, nil
}

// ShortList is shas, each short, comma-separated.
func ShortList(shas []string) string {
	out := make([]string, len(shas))
	for i, s := range shas {
		out[i] = session.Short(s)
	}
	return strings.Join(out, ", ")
}
