package hooks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/pathmatch"
	"github.com/lockgate/lockgate/scope"
)

// Checker decides whether a set of touched paths may be committed or pushed
// by one worker: the scope policy first (no I/O), then the locks in the
// store, read once for the whole set.
type Checker struct {
	Policy *scope.Compiled
	// Committed is the policy committed on HEAD when the worktree's
	// .lockgate.yaml differs from it (nil when they are the same): a
	// change is judged by both, so that editing the policy file, staged
	// or not, relaxes nothing before the edit is committed — and
	// committing it is refused to agents (PolicyFiles).
	Committed *scope.Compiled
	// PolicyFiles are lockgate's own files (the policy, the work
	// packages), repo-relative: an agent may not change them
	// (RulePolicyFile) unless AgentEditable names them.
	PolicyFiles   []string
	AgentEditable []string
	// IgnoreCase compares PolicyFiles as core.ignorecase says.
	IgnoreCase bool
	// Store is where locks are read; nil when it could not be opened, with
	// StoreErr saying why.
	Store    locks.Store
	StoreErr error
	// WarnUnavailable: an unreadable store is a warning, not an error
	// (hooks.on_store_unavailable: warn).
	WarnUnavailable bool
	Me              locks.Owner
	Profile         string
	// PerBranch (locks.per_branch): the branch locks of the branch a
	// change lands on hold too, besides the locks without a branch; those
	// of every branch when the branch is not known.
	PerBranch bool
	// RequireLock: every touched path must be covered by a lock of Me.
	RequireLock bool
	Now         time.Time
	// Dir is the directory the user works in, repo-relative with a
	// trailing slash ("" at the top; a hook has it from GIT_PREFIX): the
	// commands of hints name paths relative to it, so they run as pasted.
	Dir string
	// pauses is the read of the pause records ReadPauses made ahead of
	// the next Check, nil when none did.
	pauses *pauseRead
}

// pauseRead is one read of the store's pause records.
type pauseRead struct {
	entries []locks.Entry
	err     error
}

// ReadPauses reads the pause records now, for the next Check: they do not
// depend on the paths, so pre-commit reads them while git still lists the
// staged change. Check judges them, and their errors, as if it had read
// them itself.
func (c *Checker) ReadPauses(ctx context.Context) {
	if c.Store == nil {
		return
	}
	entries, err := c.Store.InNamespace(ctx, "feature")
	c.pauses = &pauseRead{entries, err}
}

// Check evaluates paths (repo-relative, normalized) committed to branch
// ("" when unknown) and adds what it refuses to r. It returns an error only
// when it cannot decide: a store that cannot be read, unless warned about.
func (c *Checker) Check(ctx context.Context, paths []string, branch string, r *Report) error {
	r.Paths += len(paths)
	var heldKeys map[string]bool
	others := map[string]*locks.Lock{} // keys another holds, for hints
	hasKey := func(key string) bool {
		if heldKeys == nil {
			heldKeys = map[string]bool{}
		}
		held, ok := heldKeys[key]
		if !ok {
			held, others[key] = c.lookup(ctx, key)
			heldKeys[key] = held
		}
		return held
	}
	policy := c.Policy
	if policy == nil {
		policy = &scope.Compiled{}
	}
	subject := scope.Subject{WorkerType: c.Me.HolderType, Profile: c.Profile, Branch: branch, HasKey: hasKey}
	found := policy.Evaluate(paths, subject)
	if c.Committed != nil {
		seen := map[scope.Violation]bool{}
		for _, v := range found {
			seen[v] = true
		}
		for _, v := range c.Committed.Evaluate(paths, subject) {
			if !seen[v] {
				found = append(found, v)
			}
		}
	}
	for _, v := range found {
		r.Add(c.scopeViolation(v, others[v.Key]))
	}
	c.checkPolicyFiles(paths, r)
	if err := c.storeOK(r); err != nil || c.Store == nil {
		return err
	}
	if err := c.checkPauses(ctx, r); err != nil {
		return c.unavailable(r, err)
	}
	if len(paths) == 0 {
		r.locksRead = true
		return nil
	}
	entries, err := c.covering(ctx, paths, branch)
	if err != nil {
		return c.unavailable(r, err)
	}
	c.checkLocks(paths, entries, branch, r)
	r.locksRead, r.held = true, c.held(entries)
	return nil
}

// covering is the records of the locks that may cover paths on branch:
// the store's Covering and, under PerBranch, the branch locks of branch
// (of every branch when branch is "") and the records of that namespace
// that cannot be read, which are never free.
func (c *Checker) covering(ctx context.Context, paths []string, branch string) ([]locks.Entry, error) {
	entries, err := c.Store.Covering(ctx, paths)
	if err != nil || !c.PerBranch {
		return entries, err
	}
	branched, err := c.Store.InNamespace(ctx, lockkey.BranchNamespace)
	if err != nil {
		return nil, err
	}
	for _, e := range branched {
		b, _, ok := lockkey.SplitBranch(e.Key)
		if e.Err != nil || !ok || branch == "" || b == branch {
			entries = append(entries, e)
		}
	}
	return entries, nil
}

// storeOK handles a store that could not be opened.
func (c *Checker) storeOK(r *Report) error {
	if c.Store != nil || c.StoreErr == nil {
		return nil
	}
	return c.unavailable(r, c.StoreErr)
}

func (c *Checker) unavailable(r *Report, err error) error {
	if c.WarnUnavailable {
		r.Warnings = append(r.Warnings, fmt.Sprintf("locks not checked: %v (hooks.on_store_unavailable: warn)", err))
		return nil
	}
	return err
}

// lookup reports whether Me holds a live lock on key, or else the live
// lock another holds on it (nil when none does).
func (c *Checker) lookup(ctx context.Context, key string) (mine bool, other *locks.Lock) {
	if c.Store == nil {
		return false, nil
	}
	l, err := c.Store.Get(ctx, key)
	switch {
	case err != nil || l.Expired(c.Now):
		return false, nil
	case l.OwnedBy(c.Me):
		return true, nil
	}
	return false, &l
}

// takeKey is the hint to take key first (tmpl), or, when another holds
// it, who does and how to wait for it.
func (c *Checker) takeKey(tmpl hint.ID, key string, other *locks.Lock) string {
	if other != nil {
		return hint.Line(hint.KeyHeld, other.Holder, stamp(other.ExpiresAt), c.waitFor(*other), lockkey.RelArg(key, c.Dir))
	}
	return hint.Line(tmpl, lockkey.RelArg(key, c.Dir))
}

func (c *Checker) checkPauses(ctx context.Context, r *Report) error {
	read := c.pauses
	c.pauses = nil
	if read == nil {
		entries, err := c.Store.InNamespace(ctx, "feature")
		read = &pauseRead{entries, err}
	}
	entries, err := read.entries, read.err
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Err != nil || !lockkey.IsPause(e.Key) || e.OwnedBy(c.Me) || e.Expired(c.Now) {
			continue
		}
		v := lockViolation(RulePaused, "", e.Lock)
		v.Reason = fmt.Sprintf("%s is paused by %s (%s) until %s", pauseFeature(e.Key), e.Holder, e.HolderType, stamp(e.ExpiresAt))
		if e.Reason != "" {
			v.Reason += ": " + e.Reason
		}
		v.Hint = hint.Line(hint.Paused, pauseFeature(e.Key), e.Holder, pauseFeature(e.Key))
		r.Add(v)
	}
	return nil
}

func (c *Checker) checkLocks(paths []string, entries []locks.Entry, branch string, r *Report) {
	covered := c.coverage(paths, entries)
	mine := map[string]bool{} // paths covered by a lock of Me
	for n, e := range entries {
		if e.Err != nil {
			var ce *locks.CorruptError
			loc := e.Name
			if errors.As(e.Err, &ce) {
				loc = ce.Path
			}
			for _, p := range covered[n] {
				r.Add(Violation{Rule: RuleCorruptLock, Path: p, Key: e.Key,
					Reason: fmt.Sprintf("the lock record %s cannot be read; it is never treated as free", loc),
					Hint:   hint.CorruptLine(locks.RecordWhere(c.Store), loc, e.Key, lockkey.RelArg(e.Key, c.Dir))})
			}
			continue
		}
		if e.Expired(c.Now) {
			continue
		}
		if e.OwnedBy(c.Me) {
			for _, p := range covered[n] {
				mine[p] = true
			}
			continue
		}
		for _, p := range covered[n] {
			v := lockViolation(RuleLocked, p, e.Lock)
			via := ""
			if e.Key != p {
				via = " through " + e.Key
			}
			v.Reason = fmt.Sprintf("locked%s by %s (%s) until %s", via, e.Holder, e.HolderType, stamp(e.ExpiresAt))
			if e.Reason != "" {
				v.Reason += ": " + e.Reason
			}
			v.Hint = hint.Line(hint.PathLocked, e.Holder, e.Key, c.waitFor(e.Lock), c.takeArg(e.Key, branch))
			r.Add(v)
		}
	}
	if c.RequireLock {
		for _, p := range paths {
			if !mine[p] {
				r.Add(Violation{Rule: RuleNotLocked, Path: p,
					Reason: "hooks.require_lock is on and you hold no lock on it",
					Hint:   hint.Line(hint.PathNotLocked, c.takeArg(p, branch))})
			}
		}
	}
}

// coverage lists, per entry, the paths its key covers: the path itself for
// a path key, every matching path for a pattern (one matcher over all of
// them), every path for a record that could not be read and names no key.
func (c *Checker) coverage(paths []string, entries []locks.Entry) [][]string {
	out := make([][]string, len(entries))
	exact := map[string][]int{}
	var pats []string
	var patEntry []int
	for n, e := range entries {
		key := lockkey.Unbranched(e.Key) // a branch lock covers its path
		switch {
		case e.Key == "":
			out[n] = []string{""}
		case !lockkey.IsPathLike(key):
			// A record of the branch namespace that names no path: only
			// an unreadable one gets here, and it covers every path.
			out[n] = slices.Clone(paths)
		case lockkey.IsPattern(key):
			// Lock keys compare as the store compares them, folded
			// whatever core.ignorecase says (lockkey.FoldCase).
			p, _ := lockkey.FoldedGlob(key)
			pats, patEntry = append(pats, p), append(patEntry, n)
		default:
			k := lockkey.FoldCase(key)
			exact[k] = append(exact[k], n)
		}
	}
	m, err := pathmatch.NewMatcher(pats, false)
	if err != nil {
		m = nil // stored pattern keys are valid; a bad one matches nothing here
	}
	var buf []int
	for _, p := range paths {
		k, mp := lockkey.FoldPath(p), lockkey.Folded(p)
		for _, n := range exact[k] {
			out[n] = append(out[n], p)
		}
		if len(pats) > 0 {
			buf = m.AppendMatches(buf[:0], mp)
			for _, i := range buf {
				out[patEntry[i]] = append(out[patEntry[i]], p)
			}
		}
	}
	return out
}

// takeArg is the key a hint tells to take for key (a path, a pattern, or
// another's lock) on branch, as typed where the hook runs: under
// PerBranch with the branch known, a path or pattern is taken on that
// branch only — a lock on every branch would block the other branches'
// work and is refused while one of them holds the path.
func (c *Checker) takeArg(key, branch string) string {
	if c.PerBranch && branch != "" && lockkey.IsPathLike(key) {
		return lockkey.BranchKey(branch, key)
	}
	return lockkey.RelArg(key, c.Dir)
}

// waitFor is how long to wait for l: until it expires, at least a minute.
func (c *Checker) waitFor(l locks.Lock) string {
	return duration.Format(max(l.ExpiresAt.Sub(c.Now), time.Minute))
}

func lockViolation(rule, path string, l locks.Lock) Violation {
	exp := l.ExpiresAt
	return Violation{Rule: rule, Path: path, Key: l.Key, Holder: l.Holder, HolderType: l.HolderType, ExpiresAt: &exp}
}

func (c *Checker) scopeViolation(v scope.Violation, other *locks.Lock) Violation {
	out := Violation{Rule: v.Rule, Path: v.Path, Key: v.Key, Reason: v.Reason}
	switch v.Rule {
	case scope.RuleKeyRule:
		out.Hint = c.takeKey(hint.KeyRule, v.Key, other)
	case scope.RuleUserOwned:
		out.Hint = hint.Line(hint.UserOwned)
	case scope.RuleProfile, scope.RuleCore:
		out.Hint = hint.Line(hint.OutsideProfile)
	case scope.RuleProtectedBranch:
		out.Hint = hint.Line(hint.ProtectedBranch)
	}
	return out
}

func pauseFeature(key string) string {
	s := strings.TrimPrefix(key, "feature:")
	return strings.TrimSuffix(s, ":pause")
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// RulePolicyFile refuses an agent's change of lockgate's own files.
const RulePolicyFile = "policy_file"

// checkPolicyFiles refuses an agent's change of the policy or the work
// packages, unless scope.agent_editable names the file: an agent must not
// relax the rules it is judged by, nor hand itself work.
func (c *Checker) checkPolicyFiles(paths []string, r *Report) {
	if c.Me.HolderType == scope.WorkerHuman || len(c.PolicyFiles) == 0 {
		return
	}
	same := func(a, b string) bool {
		if c.IgnoreCase {
			// As lock keys compare: the file system folds more than
			// strings.EqualFold does (ß, NFD spellings).
			return lockkey.Folded(a) == lockkey.Folded(b)
		}
		return a == b
	}
	for _, p := range paths {
		for _, f := range c.PolicyFiles {
			if !same(p, f) || slices.ContainsFunc(c.AgentEditable, func(e string) bool { return same(p, e) }) {
				continue
			}
			r.Add(Violation{Path: p, Rule: RulePolicyFile,
				Reason: fmt.Sprintf("%s is lockgate's policy: agents may not change it; a person may, or name it in scope.agent_editable of the committed .lockgate.yaml", p)})
		}
	}
}
