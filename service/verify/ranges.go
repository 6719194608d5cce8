package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// ciBranchVars name, in order, the branch a CI job's commits land on: a
// pull or merge request's target first, then the branch pushed.
var ciBranchVars = []string{"GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "CI_COMMIT_BRANCH"}

// RangeBranch is the branch the commits of rng ("" for HEAD's own)
// land on, for branch locks: explicit when given; else the branch rng's
// base names (origin/main..HEAD: main); else the target a CI job names
// (GITHUB_BASE_REF, CI_MERGE_REQUEST_TARGET_BRANCH_NAME,
// CI_COMMIT_BRANCH, GITHUB_REF_NAME of a branch push); else HEAD's
// branch. "" when none is known: every branch's locks then hold, the
// strictest reading.
func (e Handler) RangeBranch(ctx context.Context, rng, explicit string) (string, error) {
	if explicit != "" {
		if r := lockkey.BranchProblem(explicit); r != "" {
			return "", session.Usagef("--branch %q: %s", explicit, r)
		}
		return explicit, nil
	}
	if !e.Cfg.Locks.PerBranch {
		return "", nil // nothing depends on it
	}
	if base, _, ok := strings.Cut(rng, ".."); ok && base != "" {
		out, err := gitexec.RepoOutput(ctx, e.repo(), "rev-parse", "--symbolic-full-name", "--end-of-options", strings.TrimSuffix(base, "."))
		if err == nil {
			// git 2.39 echoes --end-of-options first: the name is last.
			lines := strings.Fields(string(out))
			ref := ""
			if len(lines) > 0 {
				ref = lines[len(lines)-1]
			}
			if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
				return b, nil
			}
			if rest, ok := strings.CutPrefix(ref, "refs/remotes/"); ok {
				if _, b, ok := strings.Cut(rest, "/"); ok && b != "HEAD" {
					return b, nil
				}
			}
		}
	}
	for _, v := range ciBranchVars {
		if b := e.Getenv(v); b != "" {
			return b, nil
		}
	}
	if strings.HasPrefix(e.Getenv("GITHUB_REF"), "refs/heads/") {
		return e.Getenv("GITHUB_REF_NAME"), nil
	}
	if e.GitDir() == "" {
		return "", nil
	}
	b, err := gitexec.HeadBranch(e.GitDir())
	if err != nil {
		return "", fmt.Errorf("the branch of the commits: %w", err)
	}
	return b, nil
}

// CheckRange refuses, as invalid input, a --range that git does not read
// as revisions: an option such as --all, or a name that does not resolve.
// Passed on to rev-list, a typo would be reported as git failing (exit 3).
func (e Handler) CheckRange(ctx context.Context, cmd, rng string) error {
	if strings.HasPrefix(rng, "-") {
		return session.Usagef("%s: --range %q: want revisions such as A..B, not an option", cmd, rng)
	}
	dir := e.Root()
	// "--" makes rev-parse take the argument as revisions only, never a path.
	out, err := gitexec.Output(ctx, dir, nil, "rev-parse", rng, "--")
	var ge *gitexec.Error
	if errors.As(err, &ge) && ge.ExitCode() == 128 {
		return session.Usagef("%s: --range %s: %s", cmd, rng, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ge.Stderr), "fatal: ")))
	}
	if err != nil {
		return err
	}
	// rev-parse passes any full object name; rev-list would then fail on
	// one the clone lacks. The all-zero name is what git (and a CI event)
	// gives as the old value of a new branch.
	for _, f := range strings.Fields(string(out)) {
		sha := strings.TrimPrefix(f, "^")
		if sha == "--" || strings.Trim(sha, "0123456789abcdef") != "" {
			continue
		}
		if strings.Trim(sha, "0") == "" {
			return session.Usagef("%s: --range %s: names the all-zero object (the old value of a new branch): name its base instead, e.g. --range origin/main..HEAD", cmd, rng)
		}
		if !gitexec.ObjectExists(ctx, dir, sha) {
			return session.Usagef("%s: --range %s: this clone has no commit %s (fetch it, or fetch with more history)", cmd, rng, sha)
		}
	}
	return nil
}
