package hooks

import (
	"context"
	"fmt"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/config"
)

// RulePusher refuses a pushed commit whose trailers name a worker the
// pusher may not push for, without that worker's signature.
const RulePusher = "pusher"

// Pusher is who pushes the commits a check judges, as the server, the CI
// system or the clone knows it. A commit's trailers are the committer's
// own claim: believed only for a worker the pusher may push for, or when
// that worker's signature vouches for the commit.
type Pusher struct {
	// Name is the user the push came from, as the server reported it.
	Name string
	// Workers are the worker ids whose commits the pusher may carry: its
	// own, and those trust.pushers gives it.
	Workers config.WorkerList
	// Refuse: a commit naming another worker is refused (a server or CI:
	// the push is someone else's claim); otherwise it is judged as the
	// pusher (pre-push: the clone's own worker pushes it).
	Refuse bool
}

// RuleSignature refuses, under workflow.signed: required, a commit whose
// trailers, an event or a lock table state lacks a good signature of the
// worker it names.
const RuleSignature = "signature"

// Vouches reports whether a good signature by signers (the principals of
// the key that made it) speaks for worker: one of them is the worker, or
// one trust.pushers lets push for it.
func (h *Runner) Vouches(signers []string, worker string) bool {
	for _, s := range signers {
		if ws, ok := h.Trust[s]; ok && ws.Matches(worker) || s == worker {
			return true
		}
	}
	return false
}

// bindPusher holds the trailers of commits to who pushes them and, under
// RequireSigned, to their signatures: a commit naming a worker the pusher
// may not push for (or, signed mode, any commit with trailers) whose good
// signature (h.Signers) does not vouch for that worker is judged as
// Checker.Me, and refused when the pusher binding or signed mode says so.
// Without either the trailers are believed.
func (h *Runner) bindPusher(ctx context.Context, commits []rangeCommit, r *Report) error {
	if h.Pusher == nil && !h.RequireSigned {
		return nil
	}
	var doubt []int
	for i, c := range commits {
		if c.trailers && c.sha != "" && (h.RequireSigned || !h.Pusher.Workers.Matches(c.author.Holder)) {
			doubt = append(doubt, i)
		}
	}
	if len(doubt) == 0 {
		return nil
	}
	var signer map[string][]string
	if h.Signers != nil {
		shas := make([]string, len(doubt))
		for j, i := range doubt {
			shas[j] = commits[i].sha
		}
		var err error
		if signer, err = h.Signers(ctx, shas); err != nil {
			return fmt.Errorf("%s: check the signatures of commits naming workers: %w", r.Hook, err)
		}
	}
	for _, i := range doubt {
		c := &commits[i]
		if h.Vouches(signer[c.sha], c.author.Holder) {
			continue // its worker's signature vouches for it
		}
		switch {
		case h.RequireSigned:
			r.Add(Violation{Rule: RuleSignature, Commit: shortSHA(c.sha), Subject: c.subject, Holder: c.author.Holder,
				Reason: fmt.Sprintf("its trailers name %s, and it carries no good signature of %s by the allowed signers of the base (workflow.signed: required)",
					c.author.Holder, c.author.Holder),
				Hint: hint.Line(hint.SignCommits)})
		case h.Pusher.Refuse:
			r.Add(Violation{Rule: RulePusher, Commit: shortSHA(c.sha), Subject: c.subject, Holder: c.author.Holder,
				Reason: fmt.Sprintf("its trailers name %s, and %s pushed it: a commit may name only its pusher's worker (trust.pushers) unless %s signed it",
					c.author.Holder, h.Pusher.Name, c.author.Holder),
				Hint: hint.Line(hint.PusherTrailers)})
		}
		c.named = c.author.Holder
		c.author, c.trailers, c.held = h.Checker.Me, false, nil
		r.AsPusher++
	}
	return nil
}
