package hooks

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
)

// growOnly returns the rule guarding ref when it is one of lockgate's refs
// on a remote, which only grow: the git store's lock table (LockRef) and
// the workflow branch (WorkflowRef); "" for any other ref.
func (h *Runner) growOnly(ref string) string {
	switch {
	case ref == "":
		return ""
	case ref == h.LockRef:
		return RuleLockRef
	case ref == h.WorkflowRef:
		return RuleWorkflowBranch
	}
	return ""
}

// guardGrowth judges a push to one of lockgate's refs on remote (rule
// from growOnly; remote "" in pre-receive, on the server itself): it may create the ref or move it forward,
// never delete or rewind it: the lock table to a later state
// (LockStates.Follows), the workflow branch to a commit that contains it.
// A deleted or rewound lock table starts over
// and hands out fences that live locks hold; a deleted or rewound
// workflow branch drops events of the lock log. A remote state the clone
// does not have cannot be judged: the push is refused until it is
// fetched. ok is false when the push is refused.
func (h *Runner) guardGrowth(ctx context.Context, rule, remote, ref, localSHA, remoteSHA string, r *Report) (ok bool, err error) {
	what, hintID := "the lock table of the git store: the locks and fences in it would be lost, and a fresh table would hand out the fences of live locks again", hint.LockRefForward
	if rule == RuleWorkflowBranch {
		what, hintID = "the workflow branch: events of the lock log would be lost", hint.WorkflowAppendOnly
	}
	where := ref
	if remote != "" {
		where = ref + " on " + remote
	}
	refuse := func(format string, args ...any) (bool, error) {
		r.Add(Violation{Rule: rule, Reason: fmt.Sprintf(format, args...), Hint: hint.Line(hintID)})
		return false, nil
	}
	switch {
	case zeroSHA(localSHA):
		return refuse("the push deletes %s, %s (lockgate never deletes it)", where, what)
	case zeroSHA(remoteSHA):
		return true, nil // a new ref: nothing to lose
	case !gitexec.ObjectExists(ctx, h.Dir, remoteSHA):
		return refuse("%s names %s, which this clone does not have: lockgate cannot tell whether the push rewinds it. Fetch it first (git fetch %s %s) and push again",
			where, shortSHA(remoteSHA), cmp.Or(remote, "REMOTE"), ref)
	}
	if rule == RuleLockRef {
		// Each state of the lock table is a commit without parents: its
		// stamp, not its history, says whether it is a later one.
		later, why, err := h.LockStates.follows(ctx, h.Dir, remoteSHA, localSHA)
		if err != nil {
			return false, fmt.Errorf("%s: %s: %w", r.Hook, ref, err)
		}
		if !later {
			return refuse("the push moves %s from %s to %s, %s: it rewinds %s (lockgate moves it only to a later state)",
				where, shortSHA(remoteSHA), shortSHA(localSHA), why, what)
		}
		// A later state all the same may drop a live lock unannounced:
		// lockgate's states say which locks they end, and why.
		reasons, err := h.LockStates.unlogged(ctx, h.Dir, remoteSHA, localSHA, h.Checker.Now)
		if err != nil {
			return false, fmt.Errorf("%s: %s: %w", r.Hook, ref, err)
		}
		if len(reasons) > 0 {
			r.Add(Violation{Rule: rule, Reason: fmt.Sprintf("the push moves %s to %s, a state lockgate did not write: %s",
				where, shortSHA(localSHA), strings.Join(reasons, "; ")), Hint: hint.Line(hint.LockRefLogged)})
			return false, nil
		}
		return true, nil
	}
	ff, err := isAncestor(ctx, h.Dir, remoteSHA, localSHA)
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", r.Hook, ref, err)
	}
	if !ff {
		return refuse("the push moves %s from %s to %s, which does not contain it: it rewinds %s (lockgate never forces it)",
			where, shortSHA(remoteSHA), shortSHA(localSHA), what)
	}
	return true, nil
}

// guardPruned refuses a push that would delete lockgate's refs on remote
// without naming them on the hook's stdin: `git push --mirror` (or a
// remote with remote.<name>.mirror) and `git push --prune` delete every
// remote ref their refspecs cover that the clone lacks, and git lists
// none of those deletions to pre-push. A ref counts as deleted when the
// remote has it and the clone has no ref of that name. seen are the
// remote refs stdin named, judged already.
func (h *Runner) guardPruned(ctx context.Context, remote string, seen map[string]bool, r *Report) error {
	if remote == "" || strings.HasPrefix(remote, "-") {
		return nil
	}
	pruning := false
	for _, a := range pushArgs() {
		if a == "--mirror" || a == "--prune" {
			pruning = true
		}
	}
	if !pruning {
		var err error
		repo := &gitexec.Repo{Toplevel: h.Dir, GitDir: h.GitDir, CommonDir: h.CommonDir}
		if pruning, err = gitexec.RemoteMirror(ctx, repo, remote); err != nil {
			return err
		}
	}
	if !pruning {
		return nil
	}
	for _, ref := range []string{h.LockRef, h.WorkflowRef} {
		if ref == "" || seen[ref] {
			continue
		}
		if _, err := gitexec.Output(ctx, h.Dir, nil, "rev-parse", "--verify", "-q", ref); err == nil {
			continue // the clone has it: a mirror pushes it, and stdin named it
		}
		out, err := gitexec.Output(ctx, h.Dir, nil, "ls-remote", "--", remote, ref)
		if err != nil {
			return fmt.Errorf("%s: ask %s for %s: %w", r.Hook, remote, ref, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[1] == ref && objectName(f[0]) {
				if _, err := h.guardGrowth(ctx, h.growOnly(ref), remote, ref, strings.Repeat("0", len(f[0])), f[0], r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
