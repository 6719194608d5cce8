package lockops

import (
	"context"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// onBranch is keys as locks on branch (locks.per_branch): each path or
// pattern key becomes its branch lock's key (lockkey.BranchKey); with no
// branch, keys as they are. take says the keys are to be taken: a branch
// lock then needs locks.per_branch, while one may always be released,
// checked or cleared (left from a time the setting was on).
func (e *Handler) onBranch(keys []lockkey.Key, branch string, take bool) ([]lockkey.Key, error) {
	if branch == "" {
		if take && !e.Cfg.Locks.PerBranch {
			for _, k := range keys {
				if k.Kind == lockkey.KindBranch {
					return nil, session.Usagef("%s: locks on one branch are off: set locks.per_branch: true in .lockgate.yaml", lockkey.Shorten(k.Canonical))
				}
			}
		}
		return keys, nil
	}
	if take && !e.Cfg.Locks.PerBranch {
		return nil, session.Usagef("--branch %s: locks on one branch are off: set locks.per_branch: true in .lockgate.yaml", branch)
	}
	if r := lockkey.BranchProblem(branch); r != "" {
		return nil, session.Usagef("--branch %q: %s", branch, r)
	}
	out := make([]lockkey.Key, 0, len(keys))
	for _, k := range keys {
		if k.Kind != lockkey.KindPath && k.Kind != lockkey.KindPattern {
			return nil, session.Usagef("%s: only a path or pattern is locked on one branch (--branch %s)", lockkey.Shorten(k.Canonical), branch)
		}
		bk, err := lockkey.Parse(lockkey.BranchKey(branch, k.Canonical), e.KeyOptions())
		if err != nil {
			return nil, session.Usagef("--branch %s: %v", branch, err)
		}
		out = append(out, bk)
	}
	return out, nil
}

// HeldOnBranches is the branches on which the caller holds a branch lock
// of key (a path or pattern key): what `lock release KEY` without
// --branch did not release. Nil when locks.per_branch is off or the
// store cannot say.
func (e *Handler) HeldOnBranches(ctx context.Context, key string) []string {
	if !e.Cfg.Locks.PerBranch || !lockkey.IsPathLike(key) || e.Store == nil {
		return nil
	}
	entries, err := e.Store.InNamespace(ctx, lockkey.BranchNamespace)
	if err != nil {
		return nil
	}
	var out []string
	id := lockkey.FoldCase(key)
	for _, en := range entries {
		b, inner, ok := lockkey.SplitBranch(en.Key)
		if en.Err == nil && ok && lockkey.FoldCase(inner) == id && en.OwnedBy(e.Me) && !en.Expired(e.Now()) {
			out = append(out, b)
		}
	}
	return out
}
