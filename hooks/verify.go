package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/lockgate/lockgate/diffpath"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/scope"
)

// RuleAttestation is the rule a commit breaks when its Lockgate-Lock trailer
// names a lock the log shows was not the author's, or not live when the
// commit was made.
const RuleAttestation = "attestation"

// Margin is how far from a commit's time lockgate verify looks both ways:
// git keeps whole seconds, and the clocks of the machine that made the
// commit and of those that took the locks may differ by this much. A
// commit made at second t is judged over [t-Margin, t+1s+Margin]: another's
// lock refuses it only when the log shows it live over all of that span,
// and a lock of the author's counts when it may have been live at any
// moment of it (docs/verify.md).
const Margin = 2 * time.Second

// Undecided is a commit the lock log cannot judge.
type Undecided struct {
	Commit  string `json:"commit,omitempty"`
	Subject string `json:"subject"`
	Path    string `json:"path,omitempty"`
	Key     string `json:"key,omitempty"`
	Reason  string `json:"reason"`
}

// span is the time over which a commit made at second t is judged.
func span(t time.Time) (from, to time.Time) { return t.Add(-Margin), t.Add(time.Second + Margin) }

// Verify judges every commit `git rev-list revArgs` names against the lock
// log, each as the worker its trailers name (else as Checker.Me) at the
// time it was made: the scope policy, the locks of others the log shows
// live then, hooks.require_lock with the author's locks of then, and the
// locks its trailers name. What the log cannot tell goes to r.Undecided.
// readLog is called at once, and runs while git lists the commits; the
// grants are then built for the paths the commits touch.
func (h *Runner) Verify(ctx context.Context, revArgs []string, branch string, readLog func() ([]journal.Event, error), r *Report) error {
	return h.VerifyReading(ctx, revArgs, branch, func(func() (*history.Keys, bool)) ([]journal.Event, error) { return readLog() }, r)
}

// LogReader reads the lock log for VerifyReading, while git lists the
// commits. bearing, which it calls only when it needs to, waits for
// them and returns the keys whose grants can bear on them (the grants
// VerifyReading builds): a reader that would read further back only for
// grants of other keys need not. It is false when the commits were not
// listed: nothing the reader returns is then used.
type LogReader func(bearing func() (*history.Keys, bool)) ([]journal.Event, error)

// VerifyReading is Verify with a reader of the lock log that is told,
// when it asks, which keys bear on the commits.
func (h *Runner) VerifyReading(ctx context.Context, revArgs []string, branch string, readLog LogReader, r *Report) error {
	type result struct {
		evs []journal.Event
		err error
	}
	// keysc gets the keys once the commits are listed; closed without
	// them when Verify returns first.
	keysc := make(chan *history.Keys, 1)
	defer close(keysc)
	bearing := sync.OnceValues(func() (*history.Keys, bool) {
		k, ok := <-keysc
		return k, ok
	})
	logc := make(chan result, 1)
	go func() {
		evs, err := readLog(bearing)
		logc <- result{evs, err}
	}()
	var seen rangeSeen
	commits, parents, err := h.commitsOf(ctx, revArgs, &seen, r)
	if errors.Is(err, errLimit) {
		// Too much to judge is not a violation of history: undecided.
		lim := r.Violations[len(r.Violations)-1]
		r.Violations = r.Violations[:len(r.Violations)-1]
		r.Undecided = append(r.Undecided, Undecided{Subject: "(range)", Reason: lim.Reason + ": verify a narrower --range, or raise the limit"})
		return nil
	}
	if err != nil {
		return err
	}
	if err := h.bindPusher(ctx, commits, r); err != nil {
		return err
	}
	// A commit was made after its parents, whatever its date says: one
	// dated before a parent of the range is judged at that parent's time.
	// git log lists children first: parents are judged first, from the end.
	at := make(map[string]time.Time, len(commits))
	for i := len(commits) - 1; i >= 0; i-- {
		c := &commits[i]
		for _, p := range parents[i] {
			if t, ok := at[p]; ok && t.After(c.when) {
				c.backdated, c.when = c.when, t
			}
		}
		at[c.sha] = c.when
	}
	var paths []string
	for _, c := range commits {
		paths = append(paths, c.paths...)
		for _, hl := range c.held {
			paths = append(paths, hl.Key) // the grants its trailers name
		}
	}
	keysc <- history.KeysFor(paths)
	res := <-logc
	if res.err != nil {
		return res.err
	}
	log := history.BuildFor(res.evs, paths)
	for i := len(commits) - 1; i >= 0; i-- { // oldest first, as rev-list --reverse
		if err := h.verifyOne(ctx, &commits[i], branch, log, r); err != nil {
			return err
		}
	}
	if r.Hook != "verify" {
		// pre-receive judges a push; which packages it finishes is
		// `lockgate verify`'s to list.
		return nil
	}
	return h.packagesDone(ctx, res.evs, &seen, r)
}

// commitsOf reads the commits revArgs names, with their changes, times,
// parents and authors, from one git log, within hooks.pre_push's limits
// (errLimit past them, the limit added to r as a violation). Commits that
// change no file are left out, as git diff-tree leaves them out; seen
// gets every commit.
func (h *Runner) commitsOf(ctx context.Context, revArgs []string, seen *rangeSeen, r *Report) ([]rangeCommit, [][]string, error) {
	var commits []rangeCommit
	var parents [][]string
	npaths := 0
	var limit *Violation
	err := gitexec.LogChanges(ctx, h.Dir, diffpath.LogFormat, revArgs, func(out io.Reader) error {
		lr := diffpath.NewLogReader(out)
		for {
			lc, err := lr.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read commits: %w", err)
			}
			seen.add(lc.SHA, lc.Parents, lc.Committed)
			if len(lc.Changes) == 0 {
				continue
			}
			r.Commits++
			c := rangeCommit{sha: lc.SHA, paths: touched(lc.Changes), when: lc.Committed, authored: lc.Authored, subject: subject(lc.Message)}
			npaths += len(c.paths)
			if limit = h.overLimit(r.Commits, npaths); limit != nil {
				return errStop
			}
			c.author, c.trailers = CommitAuthor(lc.Message, h.CommentString)
			if c.trailers {
				_, _, c.held = parseTrailers(lc.Message, h.comment())
			} else {
				c.author = h.Checker.Me
				r.AsPusher++
			}
			commits = append(commits, c)
			parents = append(parents, lc.Parents)
		}
	})
	if limit != nil {
		r.Add(*limit)
		return nil, nil, errLimit
	}
	return commits, parents, err
}

// VerifyStaged judges the staged change as a commit Checker.Me makes at
// now, against the lock log.
func (h *Runner) VerifyStaged(ctx context.Context, now time.Time, log *history.Log, r *Report) error {
	if h.MergeParents == nil {
		// A merge being concluded: judged for what it changes beyond its
		// parents, as the hooks judge it.
		heads, err := gitexec.MergeHeads(h.GitDir)
		if err != nil {
			return err
		}
		h.MergeParents = heads
	}
	paths, err := h.stagedPaths(ctx, nil)
	if err != nil {
		return err
	}
	branch, err := gitexec.HeadBranch(h.GitDir)
	if err != nil {
		return err
	}
	c := rangeCommit{paths: paths, when: now.Truncate(time.Second), author: h.Checker.Me, subject: "(staged)"}
	return h.verifyOne(ctx, &c, branch, log, r)
}

func (h *Runner) verifyOne(ctx context.Context, c *rangeCommit, branch string, log *history.Log, r *Report) error {
	from, to := span(c.when)
	undecided := func(path, key, reason string) {
		r.Undecided = append(r.Undecided, Undecided{Commit: shortSHA(c.sha), Subject: c.subject, Path: path, Key: key, Reason: reason})
	}
	// A commit the log cannot judge still counts its paths, as Check
	// counts those of one it judges: a report of no path says the change
	// was empty (verify --staged: "nothing is staged", exit 2), not that
	// it could not be judged (exit 3).
	cannotJudge := func(reason string) {
		undecided("", "", reason)
		r.Paths += len(c.paths)
	}
	// The grants its trailers name decide, by their fences, which other
	// grants of their keys it can have met (history.View.Under). What
	// they find is reported once the commit is judged at all.
	var under []history.Trailer
	var attested Report
	var unsure []Undecided
	if log.Events > 0 {
		under = h.checkAttested(c, log.During(from, to, c.author), log, &attested, func(path, key, reason string) {
			unsure = append(unsure, Undecided{Commit: shortSHA(c.sha), Subject: c.subject, Path: path, Key: key, Reason: reason})
		})
	}
	if log.Events == 0 || from.Before(log.First) && !acquiredBefore(under) {
		first := "has no event"
		if log.Events > 0 {
			first = "begins at " + stamp(log.First)
		}
		cannotJudge(fmt.Sprintf("made at %s; the lock log %s", stamp(c.when), first))
		return nil
	}
	if now := h.Checker.Now; c.sha != "" && !now.IsZero() && c.when.After(now.Add(Margin)) {
		// Dated after now: no log can tell who will hold its paths then.
		cannotJudge(fmt.Sprintf("dated %s, later than now (%s): its date cannot be right", stamp(c.when), stamp(now)))
		return nil
	}
	if !c.backdated.IsZero() && c.sha != "" {
		r.Warnings = append(r.Warnings, fmt.Sprintf("commit %s \"%s\" is dated %s, before its parent: judged at its parent's time, %s",
			shortSHA(c.sha), c.subject, stamp(c.backdated), stamp(c.when)))
	}
	r.Add(attested.Violations...)
	r.Undecided = append(r.Undecided, unsure...)
	view := log.During(from, to, c.author).Under(under)
	checker := *h.Checker
	checker.Store, checker.StoreErr, checker.WarnUnavailable = view, nil, false
	checker.Me, checker.Now = c.author, from
	mark := len(r.Violations)
	if err := checker.Check(ctx, c.paths, branch, r); err != nil {
		return err
	}
	for j := mark; j < len(r.Violations); j++ {
		v := &r.Violations[j]
		v.Commit, v.Subject, v.AsPusher, v.Named = shortSHA(c.sha), c.subject, !c.trailers, c.named
		h.historical(v, c, view)
	}
	for _, g := range view.Unshown(c.paths) {
		if g.Undecided(from, to) {
			undecided("", g.Key, fmt.Sprintf("made at %s, when %s may have held %s: %s", stamp(c.when), holderOf(g), g.Key, unknownEnd(g)))
			continue
		}
		what := "the staged change"
		if c.sha != "" {
			what = fmt.Sprintf("commit %s \"%s\" was made at %s,", shortSHA(c.sha), c.subject, stamp(c.when))
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s within %s of %s's lock on %s (%s to %s): not refused for it",
			what, Margin, holderOf(g), g.Key, stamp(g.Start), endStamp(g)))
	}
	return nil
}

// acquiredBefore reports whether the log has the acquisition of a grant
// a commit was made under: then the log began before the commit, even
// when the commit's span reaches back past the log's first event (a
// commit made within the clock skew of a fleet's first lock).
func acquiredBefore(under []history.Trailer) bool {
	for _, t := range under {
		if t.AtCommit && t.Grant.StartKnown {
			return true
		}
	}
	return false
}

// historical turns a violation found against the log into one about the
// past: who held the lock when the commit was made, and what can be done
// about a commit already made.
func (h *Runner) historical(v *Violation, c *rangeCommit, view *history.View) {
	if c.sha == "" {
		return // the staged change: the hints of the hooks apply
	}
	switch v.Rule {
	case RuleLocked, RulePaused:
		for _, g := range view.Others(v.Key) {
			if g.Lock().Holder != v.Holder {
				continue
			}
			v.Reason = fmt.Sprintf("made at %s, while %s (%s) held %s (from %s until %s)",
				stamp(c.when), v.Holder, v.HolderType, g.Key, stamp(g.Start), endStamp(g))
			if g.Reason != "" {
				v.Reason += ": " + g.Reason
			}
			v.Hint = hint.Line(hint.MadeWhileHeld, v.Holder, shortSHA(c.sha))
			break
		}
	case RuleNotLocked:
		v.Reason = fmt.Sprintf("made at %s; hooks.require_lock is on and its author held no lock on it then", stamp(c.when))
		v.Hint = hint.Line(hint.MadeUnlocked, shortSHA(c.sha))
	case scope.RuleKeyRule:
		// The policy speaks to whoever commits now; here the author did.
		v.Reason = strings.Replace(v.Reason, "which you do not hold", "which its author did not hold at "+stamp(c.when), 1)
		v.Hint = hint.Line(hint.MadeUnlocked, shortSHA(c.sha))
	}
}

// checkAttested checks the locks a commit's trailers name against the log:
// each must be a grant of the author's that may have been live when the
// commit was made. One the log does not have means the log is behind. It
// returns the grants that pass.
func (h *Runner) checkAttested(c *rangeCommit, view *history.View, log *history.Log, r *Report, undecided func(path, key, reason string)) []history.Trailer {
	// A rebase or cherry-pick dates the commit anew and keeps its
	// trailers: the lock may have covered it when it was written.
	afrom, ato := span(c.authored)
	var under []history.Trailer
	for _, hl := range c.held {
		gs := log.ByFence(hl.Key, hl.Fence)
		if len(gs) == 0 {
			undecided("", hl.Key, fmt.Sprintf("its trailers name %s fence=%d, which the lock log does not have: the clone that took it has not pushed its events (there: `lockgate workflow sync --push`; then fetch the log again)", hl.Key, hl.Fence))
			continue
		}
		var live, ended, shared *history.Grant
		for _, g := range gs {
			if g.Owner.Holder != c.author.Holder || g.Owner.Session != c.author.Session {
				if g.Shared() {
					shared = g
				}
				continue
			}
			if atCommit := g.Possibly(view.From, view.To); atCommit || !c.authored.IsZero() && g.Possibly(afrom, ato) {
				live = g
				under = append(under, history.Trailer{Grant: g, AtCommit: atCommit})
				break
			}
			ended = g
		}
		var reason string
		switch {
		case live != nil:
			continue
		case ended != nil:
			reason = fmt.Sprintf("made at %s; its trailers name %s fence=%d, a lock that was %s at %s", stamp(c.when), hl.Key, hl.Fence, ended.How, stamp(ended.End))
		case shared != nil:
			reason = fmt.Sprintf("its trailers name %s fence=%d as %s's, but the lock log gives that lock to %s", hl.Key, hl.Fence, c.author.Holder, holderOf(shared))
		default:
			// Each clone's file store counts fences of its own: the
			// author's grant may be one the log does not have yet.
			undecided("", hl.Key, fmt.Sprintf("its trailers name %s fence=%d as %s's; the lock log has that fence only as %s's (the file stores of two clones count fences apart, so %s's may be missing from the log)",
				hl.Key, hl.Fence, c.author.Holder, holderOf(gs[0]), c.author.Holder))
			continue
		}
		l := gs[0].Lock()
		r.Add(Violation{Rule: RuleAttestation, Key: hl.Key, Path: attestedPath(hl.Key), Holder: l.Holder, HolderType: l.HolderType, Reason: reason,
			Commit: shortSHA(c.sha), Subject: c.subject, Hint: hint.Line(hint.MadeUnlocked, shortSHA(c.sha))})
	}
	return under
}

// attestedPath is the path an attestation violation is about: the key
// when it is a path, so that annotations point at the file.
func attestedPath(key string) string {
	if lockkey.IsPathLike(key) && !lockkey.IsPattern(key) {
		return key
	}
	return ""
}

func holderOf(g *history.Grant) string {
	if g.Owner.Holder == "" {
		return "someone"
	}
	return g.Owner.Holder
}

func endStamp(g *history.Grant) string {
	if !g.EndKnown {
		return "?"
	}
	return stamp(g.End)
}

// unknownEnd says what the log lacks about g.
func unknownEnd(g *history.Grant) string {
	if !g.StartKnown && !g.EndKnown {
		return fmt.Sprintf("the log has %s at %s", g.Reason, stamp(g.Start))
	}
	if !g.StartKnown {
		return fmt.Sprintf("the log has its end (%s) but not when it was taken", stamp(g.Start))
	}
	return fmt.Sprintf("it was taken at %s and the log says neither when it expires nor that it ended (an event of an earlier lockgate)", stamp(g.Start))
}
