package hooks

import (
	"context"
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
)

// guardSignedEvents judges, under RequireSigned, the commits a push adds
// to the workflow branch ref (those the server has on no ref): each must
// carry a good signature (Signers), and that signature must vouch for the
// worker of every event the commit adds. An event is only as true as the
// worker who wrote it: an unsigned one could say anything.
func (h *Runner) guardSignedEvents(ctx context.Context, ref, newSHA string, r *Report) error {
	if h.EventsAdded == nil || h.Signers == nil {
		return fmt.Errorf("%s: %s: workflow.signed is required, and the server cannot check signatures", r.Hook, ref)
	}
	out, err := gitexec.Output(ctx, h.Dir, nil, "rev-list", fmt.Sprintf("--max-count=%d", defaultMaxWorkflowCommits+1), newSHA, "--not", "--all")
	if err != nil {
		return fmt.Errorf("%s: list the commits pushed to %s: %w", r.Hook, ref, err)
	}
	commits := strings.Fields(string(out))
	if len(commits) == 0 {
		return nil
	}
	if len(commits) > defaultMaxWorkflowCommits {
		r.Add(Violation{Rule: RuleLimit, Reason: fmt.Sprintf("more than %d new commits on %s to check", defaultMaxWorkflowCommits, ref), Hint: hint.Line(hint.MaxCommits)})
		return nil
	}
	signer, err := h.Signers(ctx, commits)
	if err != nil {
		return fmt.Errorf("%s: check the signatures of %s: %w", r.Hook, ref, err)
	}
	added, err := h.EventsAdded(ctx, commits)
	if err != nil {
		return fmt.Errorf("%s: read the events pushed to %s: %w", r.Hook, ref, err)
	}
	for _, c := range commits {
		p := signer[c]
		if len(p) == 0 {
			r.Add(Violation{Rule: RuleSignature, Commit: shortSHA(c),
				Reason: fmt.Sprintf("commit %s of %s carries no good signature by the allowed signers of the base (workflow.signed: required)", shortSHA(c), ref),
				Hint:   hint.Line(hint.SignCommits)})
			continue
		}
		for _, ev := range added[c] {
			if !h.Vouches(p, ev.Worker) {
				r.Add(Violation{Rule: RuleSignature, Commit: shortSHA(c), Key: ev.Key, Holder: ev.Worker,
					Reason: fmt.Sprintf("commit %s of %s adds %s's %s event %s, and %s signed it: an event must be signed by its worker", shortSHA(c), ref, ev.Worker, ev.Action, ev.ID, strings.Join(p, ",")),
					Hint:   hint.Line(hint.SignCommits)})
			}
		}
	}
	return nil
}

// guardSignedState judges, under RequireSigned, a state of the lock table
// pushed to ref: it must carry a good signature, and that signature must
// vouch for the holder of every lock it releases (a clear or a take-over
// may be anyone's, and says so in the log).
func (h *Runner) guardSignedState(ctx context.Context, ref, newSHA string, r *Report) error {
	if h.Signers == nil {
		return fmt.Errorf("%s: %s: workflow.signed is required, and the server cannot check signatures", r.Hook, ref)
	}
	signer, err := h.Signers(ctx, []string{newSHA})
	if err != nil {
		return fmt.Errorf("%s: check the signature of %s: %w", r.Hook, ref, err)
	}
	p := signer[newSHA]
	if len(p) == 0 {
		r.Add(Violation{Rule: RuleSignature, Commit: shortSHA(newSHA),
			Reason: fmt.Sprintf("the state %s of %s carries no good signature by the allowed signers of the base (workflow.signed: required)", shortSHA(newSHA), ref),
			Hint:   hint.Line(hint.SignCommits)})
		return nil
	}
	holders, err := h.LockStates.released(ctx, h.Dir, newSHA)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", r.Hook, ref, err)
	}
	for _, w := range holders {
		if !h.Vouches(p, w) {
			r.Add(Violation{Rule: RuleSignature, Commit: shortSHA(newSHA), Holder: w,
				Reason: fmt.Sprintf("the state %s of %s releases %s's locks, and %s signed it: only %s may release them (lock clear is logged as such)", shortSHA(newSHA), ref, w, strings.Join(p, ","), w),
				Hint:   hint.Line(hint.SignCommits)})
		}
	}
	return nil
}
