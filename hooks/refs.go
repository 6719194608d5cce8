package hooks

import (
	"cmp"
	"context"
	"fmt"

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
// never delete or rewind it. A deleted or rewound lock table starts over
// and hands out fences that live locks hold; a deleted or rewound
// workflow branch drops events of the lock log. A remote state the clone
// does not have cannot be judged: the push is refused until it is
// fetched. ok is false when the push is refused.
func (h *Runner) guardGrowth(ctx context.Context, rule, remote, ref, localSHA, remoteSHA string, r *Report) (ok bool, err error) {
	what, hintID := "the lock table of the git store: the locks and fences in it would be lost, and a fresh table would hand out the fences of live locks again", hint.LockRefGrows
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
