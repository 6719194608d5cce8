package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/diffpath"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/pathmatch"
)

// WorkCommit is a commit as locks.release_on_merge reads it: the worker
// its lockgate trailers name ("" when they name none) and the paths it
// touched.
type WorkCommit struct {
	SHA    string
	Worker string
	Paths  []string
	// When is the commit's committer time.
	When time.Time
	// Fences are the grants its Lockgate-Lock trailers say it was made
	// under: the fence of each lock, by its key's identity (FoldCase).
	Fences map[string]uint64
}

// madeUnder reports whether the commit is work under grant l: when its
// trailers name l's key, made under that very grant (its fence), however
// close in time another grant of it was; else made since the grant, as
// its committer time says (since: the grant, less a margin for two
// machines' clocks).
func (c WorkCommit) madeUnder(l locks.Lock, since time.Time) bool {
	if fence, ok := c.Fences[lockkey.FoldCase(l.Key)]; ok {
		return fence == l.Fence
	}
	return !c.When.Before(since)
}

// WorkCommits lists the commits `git rev-list revArgs` names, oldest
// first, each with its trailers' worker and its paths.
func (h *Runner) WorkCommits(ctx context.Context, revArgs []string) ([]WorkCommit, error) {
	var commits []WorkCommit
	err := gitexec.TreeDiffs(ctx, h.Dir, revArgs, func(out io.Reader) error {
		tr := diffpath.NewTreeReader(out)
		for {
			header, changes, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read commits: %w", err)
			}
			sha, _, _ := strings.Cut(header, " ")
			commits = append(commits, WorkCommit{SHA: sha, Paths: touched(changes)})
		}
	})
	if err != nil {
		return nil, err
	}
	shas := make([]string, len(commits))
	for i, c := range commits {
		shas[i] = c.SHA
	}
	i := 0
	err = gitexec.CommitMessages(ctx, h.Dir, shas, MaxCommitMsgBytes, func(ci gitexec.CommitInfo) {
		if i < len(commits) {
			if me, ok := CommitAuthor(ci.Message, h.CommentString); ok {
				commits[i].Worker = me.Holder
				_, _, held := parseTrailers(ci.Message, h.comment())
				for _, l := range held {
					if commits[i].Fences == nil {
						commits[i].Fences = map[string]uint64{}
					}
					commits[i].Fences[lockkey.FoldCase(l.Key)] = l.Fence
				}
			}
			commits[i].When = ci.Committed
		}
		i++
	})
	if err == nil && i != len(commits) {
		err = fmt.Errorf("read commits: git gave %d messages for %d commits", i, len(commits))
	}
	return commits, err
}

// Landing is what a lock's holder's work on a branch says of the lock:
// the commits of the holder on the branch that touch the lock's paths
// (Merged), and those on no commit of the branch yet (Unmerged).
type Landing struct {
	Lock     locks.Lock
	Merged   []string
	Unmerged []string
}

// Landed says, of each live lock of ls that holds on branch (a branch
// lock of that branch, or a lock without one) and covers paths, which of
// its holder's commits touching those paths merged (on the branch) and
// unmerged (elsewhere) hold. A lock none of whose holder's merged commits
// made since its grant touches its paths is left out.
func Landed(ls []locks.Lock, branch string, merged, unmerged []WorkCommit) ([]Landing, error) {
	var out []Landing
	for _, l := range ls {
		b, inner, ok := lockkey.SplitBranch(l.Key)
		if ok && b != branch {
			continue
		}
		if !ok {
			inner = l.Key
		}
		if !lockkey.IsPathLike(inner) {
			continue // a logical key names no file a commit touches
		}
		covers, err := coverer(inner)
		if err != nil {
			return nil, err
		}
		landing := Landing{Lock: l}
		// Work made before the grant is not work under it: a lock taken
		// anew after its holder's work landed stays.
		since := l.CreatedAt.Add(-Margin)
		for _, c := range merged {
			if c.Worker == l.Holder && c.madeUnder(l, since) && slices.ContainsFunc(c.Paths, covers) {
				landing.Merged = append(landing.Merged, c.SHA)
			}
		}
		if len(landing.Merged) == 0 {
			continue
		}
		for _, c := range unmerged {
			if c.Worker == l.Holder && slices.ContainsFunc(c.Paths, covers) {
				landing.Unmerged = append(landing.Unmerged, c.SHA)
			}
		}
		out = append(out, landing)
	}
	return out, nil
}

// coverer is whether a path is one key covers, compared as the stores
// compare keys (folded).
func coverer(key string) (func(string) bool, error) {
	if !lockkey.IsPattern(key) {
		id := lockkey.FoldCase(key)
		return func(p string) bool { return lockkey.FoldPath(p) == id }, nil
	}
	g, _ := lockkey.FoldedGlob(key)
	m, err := pathmatch.NewMatcher([]string{g}, false)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", key, err)
	}
	return func(p string) bool {
		_, ok := m.Match(lockkey.Folded(p))
		return ok
	}, nil
}
