package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/diffpath"
	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/planner"
	"github.com/lockgate/lockgate/scope"
)

// ChangeRequest is the change `check` judges against locks and scope, for
// CI: the staged change unless Range or Patch names another.
type ChangeRequest struct {
	// Range is every commit of A..B (as git rev-list), judged by the
	// policy and store of its base.
	Range string
	// Branch is the branch the change lands on, for branch locks
	// (locks.per_branch); "" finds it (RangeBranch).
	Branch string
	// Patch is a file holding a unified diff, "-" for Stdin.
	Patch string
	Stdin io.Reader
	// Profile is the scope profile to enforce; "" is LOCKGATE_PROFILE.
	Profile string
	// AllowEmpty accepts a change that touches no file; without it an
	// empty patch, range or index is invalid input, so that a CI job fed
	// nothing (a failed `git diff`, a typo'd base) cannot pass.
	AllowEmpty bool
	// RecordCooldown records the paths a backfill profile rejects for the
	// planner's cooldown, as rejected for TaskType ("" is
	// LOCKGATE_TASK_TYPE, else every type); a plain CI check leaves no
	// state behind.
	RecordCooldown bool
	TaskType       string
}

// ChangeResult is what `check` found, and what it recorded for the
// planner's cooldown.
type ChangeResult struct {
	Report *Report
	// Cooldown says what RecordCooldown recorded: the cycle of the last
	// plan and the rejections, or why they could not be recorded.
	Cooldown Cooldown
}

// Cooldown is the rejections a backfill check recorded for the planner.
type Cooldown struct {
	Cycle    int
	Recorded []string
	Err      error
}

// CheckChange judges the change req names against locks and scope, as the
// pre-commit hook would. A range is judged by the policy and store of its
// base, any change by -c FILE when given; else by the checkout's.
func (e *Workspace) CheckChange(ctx context.Context, req ChangeRequest) (*ChangeResult, error) {
	profile := cmp.Or(req.Profile, e.Getenv("LOCKGATE_PROFILE"))
	taskType := cmp.Or(req.TaskType, e.Getenv("LOCKGATE_TASK_TYPE"))
	switch {
	case req.RecordCooldown && !scope.IsBackfillProfile(profile):
		return nil, Usagef("check: --record-cooldown needs a backfill profile (--profile backfill or backfill-bridge)")
	case req.TaskType != "" && !req.RecordCooldown:
		return nil, Usagef("check: --task-type %s only names what --record-cooldown records; add --record-cooldown", req.TaskType)
	case req.RecordCooldown && taskType != "" && !planner.ValidType(taskType):
		return nil, Usagef("check: task type %q must match [a-z0-9_-]+ (as in backfill:type:<type>)", taskType)
	}
	if req.Range != "" {
		if err := e.Verifier().CheckRange(ctx, "check", req.Range); err != nil {
			return nil, err
		}
		if err := e.JudgeByBase(ctx, req.Range); err != nil {
			return nil, err
		}
	} else {
		e.JudgeByFile()
	}
	h, err := e.Runner(ctx, Purpose{}, profile)
	if err != nil {
		return nil, err
	}
	var r *Report
	switch {
	case req.Range != "":
		r = &Report{Hook: "check"}
		var p *hooks.Pusher
		if p, err = e.CIPusher(); err != nil {
			return nil, err
		}
		e.BindPusher(h, p, e.Base)
		var branch string
		if branch, err = e.Verifier().RangeBranch(ctx, req.Range, req.Branch); err != nil {
			return nil, err
		}
		if err = h.Range(ctx, []string{req.Range}, branch, r); err == nil {
			r.Finish()
		}
	case req.Patch != "":
		r, err = e.checkPatch(ctx, h, req.Stdin, e.CmdFile(req.Patch))
	default:
		r, err = h.PreCommit(ctx)
		if r != nil {
			r.Hook = "check"
		}
	}
	if err != nil {
		return nil, err
	}
	if r.OK && r.Paths == 0 && !req.AllowEmpty {
		return nil, Usagef("check: %s; pass --allow-empty to accept a change that touches no file", emptyChange(req))
	}
	res := &ChangeResult{Report: r}
	if req.RecordCooldown {
		c := &res.Cooldown
		c.Cycle, c.Recorded, c.Err = e.noteRejections(ctx, taskType, r)
	}
	return res, nil
}

// emptyChange says what `check` was given that touches no file.
func emptyChange(req ChangeRequest) string {
	switch {
	case req.Patch == "-":
		return "no diff on stdin"
	case req.Patch != "":
		return "no diff in " + req.Patch
	case req.Range != "":
		// diff-tree prints nothing for a commit that changes nothing, so
		// an empty range and a range of empty commits look the same.
		return "--range " + req.Range + " changes no file (no commits, or none that changes a file)"
	}
	return "nothing is staged"
}

// checkPatch checks the unified diff in file ("-" for stdin). A file that
// cannot be opened or is not a regular file, and text that is not a diff,
// are invalid input (exit 2); a failing read is exit 3.
func (e *Workspace) checkPatch(ctx context.Context, h *hooks.Runner, stdin io.Reader, file string) (*Report, error) {
	in, name := stdin, "stdin"
	if in == nil {
		in = strings.NewReader("")
	}
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, Usagef("check: --patch: %v", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, Usagef("check: --patch %s: is a directory, want a patch file", file)
		}
		in, name = f, file
	}
	changes, alt, err := diffpath.ParsePatchReadings(in)
	if err != nil {
		err = fmt.Errorf("parse patch %s: %w", name, err)
		var se *diffpath.SyntaxError
		var pe *diffpath.PathError
		if errors.As(err, &se) || errors.As(err, &pe) {
			return nil, Usagef("check: %v", err)
		}
		return nil, err
	}
	if alt != nil {
		if changes, alt, err = ruleOutReading(ctx, e.repo(), changes, alt); err != nil {
			return nil, err
		}
	}
	if err := requireModified(ctx, e.repo(), name, changes); err != nil {
		return nil, err
	}
	r, err := h.Patch(ctx, changes)
	if err != nil || alt == nil {
		return r, err
	}
	stripped, err := h.Patch(ctx, alt.Changes)
	if err != nil {
		return nil, err
	}
	return judgeReadings(name, changes, alt, r, stripped)
}

// modifiedPaths are the paths changes modify or change the type of: only
// those files exist both before and after the change. The files that
// deletions and renames remove are gone from a checkout of the change (git
// diff origin/main in CI), and additions are new.
func modifiedPaths(changes []diffpath.Change) (paths []string) {
	for _, c := range changes {
		if c.Status == 'M' || c.Status == 'T' {
			paths = append(paths, c.Path)
		}
	}
	return paths
}

// ruleOutReading keeps the one reading of an ambiguous patch that can be
// right, if only one can: a reading that modifies a file which neither
// HEAD's tree nor the index has is not how git diff made the patch, nor
// how git apply could apply it (see modifiedPaths). It returns alt nil
// when one reading is left; when both or neither are, both stand.
func ruleOutReading(ctx context.Context, repo *gitexec.Repo, changes []diffpath.Change, alt *diffpath.Reading) ([]diffpath.Change, *diffpath.Reading, error) {
	written, stripped := modifiedPaths(changes), modifiedPaths(alt.Changes)
	tracked, err := gitexec.TrackedPaths(ctx, repo, slices.Concat(written, stripped))
	if err != nil {
		return nil, nil, fmt.Errorf("check: %w", err)
	}
	all := func(paths []string) bool {
		for _, p := range paths {
			if !tracked[p] {
				return false
			}
		}
		return true
	}
	switch w, s := all(written), all(stripped); {
	case w && !s:
		return changes, nil, nil
	case s && !w:
		return alt.Changes, nil, nil
	}
	return changes, alt, nil
}

// requireModified refuses, as input check cannot judge, a patch whose
// names are relative to a directory of the repository instead of its top:
// git diff --relative or diff.relative=true write "a.go" for src/a.go, and
// judging "a.go" as written would pass a change to the locked src/a.go. A
// modification (see modifiedPaths) of a file the repository does not have
// — not in HEAD, the index or the worktree — while one of its directories
// has a file of that name is such a patch. A file the repository has
// nowhere is judged as written: the patch may come from another base.
func requireModified(ctx context.Context, repo *gitexec.Repo, name string, changes []diffpath.Change) error {
	modified := modifiedPaths(changes)
	tracked, err := gitexec.TrackedPaths(ctx, repo, modified)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	var absent []string
	for _, p := range modified {
		if tracked[p] {
			continue
		}
		if repo.Toplevel != "" {
			if _, err := os.Lstat(filepath.Join(repo.Toplevel, filepath.FromSlash(p))); err == nil {
				continue
			}
		}
		absent = append(absent, p)
	}
	below, err := gitexec.TrackedBelow(ctx, repo, absent)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	for _, p := range absent {
		if f, ok := below[p]; ok {
			return Usagef("check: %s modifies %s, which this repository does not have, but it has %s: the patch's names look relative to a directory (git diff --relative, diff.relative=true), and lockgate reads them from the top of the repository; make the patch from the top: git -c diff.relative=false diff", name, p, f)
		}
	}
	return nil
}

// judgeReadings decides a patch that reads two ways: its names as written
// (a --no-prefix diff) or without alt.Prefix (the same prefix on both
// sides, --src-prefix=x/ --dst-prefix=x/, which git apply removes). The
// same verdict is the verdict; different verdicts are invalid input, since
// either may be the truth.
func judgeReadings(name string, changes []diffpath.Change, alt *diffpath.Reading, written, stripped *Report) (*Report, error) {
	switch {
	case written.OK && stripped.OK:
		return written, nil
	case !written.OK && !stripped.OK:
		written.Warnings = append(written.Warnings, fmt.Sprintf("the names in %s may begin with a prefix %s on both sides (git diff --src-prefix=%[2]s --dst-prefix=%[2]s) or be paths as written (--no-prefix); both readings are refused, and the violations shown are those of the names as written", name, alt.Prefix))
		return written, nil
	}
	refused, other := written.Violations, alt.Changes
	if written.OK {
		refused, other = stripped.Violations, changes
	}
	v := refused[0]
	for _, w := range refused {
		if w.Path != "" {
			v = w
			break
		}
	}
	path, counterpart := "the change", "the change"
	if v.Path != "" {
		path, counterpart = fmt.Sprintf("%q", v.Path), fmt.Sprintf("%q", counterpartPath(v.Path, alt.Prefix, other, written.OK))
	}
	detail := fmt.Sprintf("as written, %s is refused (%s: %s); without the prefix, %s passes", path, v.Rule, v.Reason, counterpart)
	if written.OK {
		detail = fmt.Sprintf("as written, %s passes; without the prefix, %s is refused (%s: %s)", counterpart, path, v.Rule, v.Reason)
	}
	return nil, Usagef("check: cannot tell how to read the names in %s: they may begin with a prefix %s on both sides (git diff --src-prefix=%[2]s --dst-prefix=%[2]s, which git apply removes) or be paths as written (git diff --no-prefix), and the verdicts differ: %s; write the patch with git's default prefixes: git -c diff.noprefix=false diff --src-prefix=a/ --dst-prefix=b/",
		name, alt.Prefix, detail)
}

// counterpartPath is the path in the other reading (changes) of a patch
// that path names in one: with prefix added when path is of the reading
// without it (fromStripped), else removed. Paths the readings share, such
// as those of renames, stay as they are.
func counterpartPath(path, prefix string, changes []diffpath.Change, fromStripped bool) string {
	want := prefix + path
	if !fromStripped {
		rest, ok := strings.CutPrefix(path, prefix)
		if !ok {
			return path
		}
		want = rest
	}
	for _, c := range changes {
		if slices.Contains(c.Touched(), want) {
			return want
		}
	}
	return path
}

// PathCheck asks whether a change of Paths would pass: scope and locks,
// read once.
type PathCheck struct {
	// Paths are absolute, or relative to the current directory (after -C);
	// under Commit, to the top of the worktree.
	Paths []string
	// Profile is the scope profile to check against.
	Profile string
	// Commit judges the paths as a commit on HEAD's branch would be
	// (check_change). Without it they are judged as an edit (the pre-edit
	// guards): the protected-branch rule is left to the commit, since
	// editing is not committing.
	Commit bool
}

// PathCheckResult is what CheckPaths found, and the paths it judged,
// repo-relative.
type PathCheckResult struct {
	Report *Report
	Paths  []string
}

// CheckPaths judges a change of the paths req names, for e's worker, as
// the pre-commit hook would.
func (e *Workspace) CheckPaths(ctx context.Context, req PathCheck) (*PathCheckResult, error) {
	base, branch := e.Cwd, ""
	if req.Commit {
		base = e.WorkTree()
	}
	paths := make([]string, 0, len(req.Paths))
	for _, p := range req.Paths {
		rp, err := e.RepoPath(p, base)
		if err != nil {
			return nil, err
		}
		paths = append(paths, rp)
	}
	if req.Commit {
		var err error
		if branch, err = gitexec.HeadBranch(e.GitDir()); err != nil {
			return nil, err
		}
	}
	h, err := e.Runner(ctx, Purpose{}, req.Profile)
	if err != nil {
		return nil, err
	}
	r := &Report{Hook: "check"}
	if err := h.Checker.Check(ctx, paths, branch, r); err != nil {
		return nil, err
	}
	r.Finish()
	if !req.Commit {
		r.Hook = "guard"
	}
	return &PathCheckResult{Report: r, Paths: paths}, nil
}
