package hooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
)

// defaultMaxWorkflowCommits bounds the commits of one push to the
// workflow branch that are read when MaxCommits is not set.
const defaultMaxWorkflowCommits = 10000

// guardWorkflow judges, under hooks.pre_receive.verify, a push to ref, the
// workflow branch or another ref the lock log is read from (old and new
// are the ref's values). The lock log is what pushes are verified
// against, so a push may only add events to it: deleting the branch, or
// moving it to a commit that does not descend from the server's, would
// drop events and let a commit they refuse in; so would a commit that
// deletes or changes an event file, even in a fast-forward; a commit that
// is not an event commit would make the log unreadable (a stray file) or
// put a commit of code on a ref, where a later push of it to a branch is
// no longer a new commit and goes unverified. ok is false when the push
// is refused: its events are then not read.
func (h *Runner) guardWorkflow(ctx context.Context, ref, oldSHA, newSHA string, r *Report) (ok bool, err error) {
	refuse := func(rule, reason string, hintLine string) (bool, error) {
		r.Add(Violation{Rule: rule, Reason: reason, Hint: hintLine})
		return false, nil
	}
	if zeroSHA(newSHA) {
		return refuse(RuleWorkflowBranch, fmt.Sprintf("the push deletes %s, the lock log pushes are verified against (hooks.pre_receive.verify)", ref),
			hint.Line(hint.WorkflowAppendOnly))
	}
	if !zeroSHA(oldSHA) {
		ff, err := isAncestor(ctx, h.Dir, oldSHA, newSHA)
		if err != nil {
			return false, fmt.Errorf("pre-receive: %s: %w", ref, err)
		}
		if !ff {
			return refuse(RuleWorkflowBranch, fmt.Sprintf("the push moves %s from %s to %s, which is not a fast-forward: it would drop events of the lock log (lockgate never forces the workflow branch)",
				ref, shortSHA(oldSHA), shortSHA(newSHA)), hint.Line(hint.WorkflowAppendOnly))
		}
	}
	limit := h.MaxCommits
	if limit <= 0 {
		limit = defaultMaxWorkflowCommits
	}
	out, err := gitexec.Output(ctx, h.Dir, nil, "rev-list", fmt.Sprintf("--max-count=%d", limit+1), newSHA, "--not", "--all")
	if err != nil {
		return false, fmt.Errorf("pre-receive: list the commits pushed to %s: %w", ref, err)
	}
	commits := strings.Fields(string(out))
	if len(commits) > limit {
		return refuse(RuleLimit, fmt.Sprintf("more than %d new commits on %s to check (hooks.pre_push.max_commits)", limit, ref),
			hint.Line(hint.MaxCommits))
	}
	if h.EventCommits == nil || len(commits) == 0 {
		return true, nil
	}
	reason, err := h.EventCommits(ctx, commits)
	if err != nil {
		return false, fmt.Errorf("pre-receive: check the commits pushed to %s: %w", ref, err)
	}
	if reason != "" {
		return refuse(RuleWorkflowBranch, fmt.Sprintf("the push to %s carries a commit that is not an event commit: %s", ref, reason),
			hint.Line(hint.WorkflowEventsOnly))
	}
	return true, nil
}

// logRef reports a ref the lock log is read from: WorkflowRef, or one of
// LogRefs.
func (h *Runner) logRef(ref string) bool {
	return ref == h.WorkflowRef || slices.Contains(h.LogRefs, ref)
}

// isAncestor reports whether commit a is an ancestor of, or is, commit b.
func isAncestor(ctx context.Context, dir, a, b string) (bool, error) {
	_, err := gitexec.Output(ctx, dir, nil, "merge-base", "--is-ancestor", a, b)
	var ge *gitexec.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ge) && ge.ExitCode() == 1:
		return false, nil
	}
	return false, err
}
