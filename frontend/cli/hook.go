package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/lockgate/lockgate/service/outcome"

	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/diffpath"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/planner"
	"github.com/lockgate/lockgate/model/scope"
	"github.com/lockgate/lockgate/service/hooks"
)

// skipHook honours LOCKGATE_SKIP=1 (or true, yes) for the hooks that run
// in the committer's environment (hint.BypassGit): records a hook_bypass
// and says so. The server's pre-receive never honours it — git hands a
// local push's environment to the remote's hooks. A bypass the journal
// cannot record is not honoured: the checks run, as they do for any other
// value.
func (a *app) skipHook(ctx context.Context, hook string) bool {
	switch v := getenv("LOCKGATE_SKIP"); strings.ToLower(v) {
	case "1", "true", "yes":
	case "", "0", "false", "no":
		return false
	default:
		fmt.Fprintf(a.stdio.Err, "lockgate: LOCKGATE_SKIP=%q is not 1, true or yes: the checks run\n", v)
		return false
	}
	if _, ok := hint.BypassGit[hook]; !ok {
		return false
	}
	j, me, err := a.bypassJournal(ctx)
	if err == nil {
		err = j.Append(journal.Event{Worker: me.Holder, WorkerType: me.HolderType, Session: me.Session,
			Action: journal.ActionHookBypass, Details: hook + " skipped with LOCKGATE_SKIP"})
	}
	if err != nil {
		fmt.Fprintf(a.stdio.Err, "lockgate: LOCKGATE_SKIP not honoured: the bypass cannot be recorded: %v\n", err)
		return false
	}
	fmt.Fprintf(a.stdio.Err, "lockgate: LOCKGATE_SKIP is set: %s checks skipped (recorded as hook_bypass)\n", hook)
	return true
}

// bypassJournal is the journal a bypass is recorded in and the identity it
// is recorded for. Neither needs the config, so that a bypass still works
// when the config is what cannot be read.
func (a *app) bypassJournal(ctx context.Context) (*journal.Journal, locks.Owner, error) {
	if e, err := a.load(ctx); err == nil {
		return e.JournalFile(), e.Me, nil
	}
	cwd, err := filepath.Abs(cmp.Or(a.globals.Dir, "."))
	if err != nil {
		return nil, locks.Owner{}, fmt.Errorf("resolve -C %s: %w", a.globals.Dir, err)
	}
	repo, err := gitexec.Discover(ctx, cwd)
	if err != nil {
		return nil, locks.Owner{}, err
	}
	me, err := service.Owner(a.options())
	if err != nil {
		return nil, locks.Owner{}, err
	}
	return journal.Open(filepath.Join(repo.CommonDir, "lockgate", "events.jsonl")), me, nil
}

// finishReport prints a report and turns a refusal into exit 1.
func (a *app) finishReport(r *hooks.Report, what, format string) error {
	a.carryReport(r)
	switch {
	case a.globals.JSON || format == "json":
		if err := writeJSON(a.stdio.Out, r); err != nil {
			return err
		}
	case format == "github":
		r.WriteGitHub(a.stdio.Out)
	}
	if !a.globals.JSON && format != "json" {
		r.WriteStyled(a.stdio.Err, what, a.paintRole)
	}
	switch {
	case r.OK:
		return nil
	case len(r.Violations) == 0:
		// Nothing proven wrong, but the lock log could not judge
		// everything (verify): never a pass.
		return &outcome.ExitError{Code: outcome.ExitUnavailable}
	}
	return &outcome.ExitError{Code: outcome.ExitPolicy}
}

// noteRejections records, for the planner's cooldown, the paths a backfill
// check rejected, and says so.
func (a *app) noteRejections(ctx context.Context, e *service.Workspace, taskType string, r *hooks.Report) {
	cycle, list, err := e.NoteRejections(ctx, taskType, r)
	switch {
	case err != nil:
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: rejected paths not recorded for the planner: %v\n", err)
	case len(list) > 0:
		fmt.Fprintf(a.stdio.Err, "lockgate: planner cooldown from cycle %d: %s\n", cycle, strings.Join(list, ", "))
	}
}

func hookCommand() *command {
	return &command{usage: "hook <name>", short: "run a git hook (what the installed hooks call)", sub: map[string]*command{
		"pre-commit": {
			usage: "hook pre-commit",
			short: "git pre-commit hook: refuse a staged change that breaks locks or scope (exit 1)",
			run: func(ctx context.Context, a *app, args []string) error {
				return a.runHook(ctx, "pre-commit", args, 0, func(h *hooks.Runner) (*hooks.Report, error) {
					return h.PreCommit(ctx)
				})
			},
		},
		"pre-merge-commit": {
			usage: "hook pre-merge-commit",
			short: "git pre-merge-commit hook: the pre-commit checks on what a merge changes beyond its parents",
			run: func(ctx context.Context, a *app, args []string) error {
				return a.runHook(ctx, "pre-merge-commit", args, 0, func(h *hooks.Runner) (*hooks.Report, error) {
					r, err := h.PreCommit(ctx)
					if r != nil {
						r.Hook = "pre-merge-commit"
					}
					return r, err
				})
			},
		},
		"commit-msg": {
			usage: "hook commit-msg FILE",
			short: "git commit-msg hook: refuse while paused; with require_task, the message must name a held task; add the Lockgate-* trailers",
			run: func(ctx context.Context, a *app, args []string) error {
				if len(args) != 1 {
					return service.Usagef("hook commit-msg: want the message FILE as the only argument")
				}
				return a.runHook(ctx, "commit-msg", args, 1, func(h *hooks.Runner) (*hooks.Report, error) {
					return h.CommitMsg(ctx, args[0], a.env.Cfg.Hooks.CommitMsg.RequireTask)
				})
			},
		},
		"pre-push": {
			usage: "hook pre-push [REMOTE [URL]]",
			short: "git pre-push hook: check every commit no remote-tracking ref has, as its trailers' worker (refs on stdin)",
			run: func(ctx context.Context, a *app, args []string) error {
				if len(args) > 2 {
					return service.Usagef("hook pre-push: want REMOTE and URL")
				}
				remote := getenv("PRE_COMMIT_REMOTE_NAME")
				if len(args) > 0 {
					remote = args[0]
				}
				return a.runHook(ctx, "pre-push", args, 2, func(h *hooks.Runner) (*hooks.Report, error) {
					return h.PrePush(ctx, remote, stdinOrEmpty(a.stdio.In), getenv)
				})
			},
		},
		"pre-receive": {
			usage: "hook pre-receive",
			short: "server-side hook: check each pushed ref (identity from hooks.identity_env)",
			run: func(ctx context.Context, a *app, args []string) error {
				if len(args) > 0 {
					return service.Usagef("hook pre-receive takes no arguments (refs come on stdin)")
				}
				return a.runHook(ctx, "pre-receive", args, 0, func(h *hooks.Runner) (*hooks.Report, error) {
					return h.PreReceive(ctx, stdinOrEmpty(a.stdio.In))
				})
			},
		},
	}}
}

func stdinOrEmpty(r io.Reader) io.Reader {
	if r == nil {
		return eofReader{}
	}
	return r
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

func (a *app) runHook(ctx context.Context, name string, args []string, maxArgs int, run func(*hooks.Runner) (*hooks.Report, error)) error {
	if len(args) > maxArgs {
		return service.Usagef("hook %s: unexpected arguments %q", name, args)
	}
	if a.skipHook(ctx, name) {
		return nil
	}
	e, err := a.load(ctx)
	if err != nil {
		return &service.HookError{Hook: name, Err: err}
	}
	var staged func() ([]byte, error)
	if (name == "pre-commit" || name == "pre-merge-commit") && e.Repo.Toplevel != "" {
		staged = gitexec.StartStaged(ctx, e.Repo.Toplevel)
	}
	if name == "pre-receive" {
		for _, v := range e.Cfg.Hooks.IdentityEnv {
			if id := getenv(v); id != "" {
				if e.Me, err = service.NewOwner(id, e.Me.HolderType, id); err != nil {
					return &service.HookError{Hook: name, Err: fmt.Errorf("%s: %w", v, err)}
				}
				break
			}
		}
	}
	switch name {
	case "pre-commit", "pre-merge-commit", "commit-msg":
		a.purpose.Cached = true // locks.git.max_age applies
	case "pre-push":
		a.purpose.Gate = true // a checkout at odds with the clone's store is refused
	}
	h, err := e.Runner(ctx, a.purpose, getenv("LOCKGATE_PROFILE"))
	var up *service.UnknownProfileError
	if errors.As(err, &up) {
		// Invalid input, as for check --profile, not a hook that could
		// not decide: the fix is the variable, not the store.
		return service.Usagef("LOCKGATE_PROFILE: %v: set it to one of them, or unset it", up.Err)
	}
	if err != nil {
		return &service.HookError{Hook: name, Err: err}
	}
	h.Staged = staged
	if name == "pre-push" || name == "pre-receive" {
		// lockgate's refs only grow, whichever store this clone uses.
		h.LockRef = e.Cfg.Locks.Git.Ref
	}
	if name == "pre-push" {
		h.WorkflowRef = "refs/heads/" + e.Cfg.Workflow.Branch
	}
	if name == "pre-receive" {
		h.Bookkeeping = append(e.LogRefs(), e.Cfg.Locks.Git.Ref)
	}
	if name == "pre-receive" && e.Cfg.Hooks.PreReceive.Verify {
		h.WorkflowRef = "refs/heads/" + e.Cfg.Workflow.Branch
		h.VerifyLog = func(ctx context.Context, pushed map[string]string) ([]journal.Event, error) {
			var extra []string
			if tip, ok := pushed[h.WorkflowRef]; ok {
				extra = append(extra, tip) // the events pushed with the commits
			}
			return e.ReadLockLog(ctx, extra...)
		}
		h.EventCommits = e.EventCommits
		h.LogRefs = e.LogRefs()
	}
	switch name {
	case "pre-commit", "pre-merge-commit", "commit-msg":
		h.Trailers = e.Cfg.Hooks.Trailers
		h.IndexFile = getenv("GIT_INDEX_FILE")
		if h.IndexFile == "" {
			h.IndexFile = filepath.Join(e.Repo.GitDir, "index")
		} else if abs, err := filepath.Abs(h.IndexFile); err == nil {
			h.IndexFile = abs // one key whichever way git spells it
		}
		if name != "commit-msg" || h.Trailers { // commit-msg reads paths for its trailers only
			if h.MergeParents, err = mergeParents(name, e.Repo.GitDir); err != nil {
				return &service.HookError{Hook: name, Err: err}
			}
		}
		if name == "commit-msg" && h.Trailers {
			if h.CommentString, err = gitexec.CommentString(ctx, e.Repo); err != nil {
				return &service.HookError{Hook: name, Err: err}
			}
		}
	}
	r, err := run(h)
	if err != nil {
		return &service.HookError{Hook: name, Err: err}
	}
	if note := e.StateAgeNote(); note != "" && name != "commit-msg" {
		r.Warnings = append(r.Warnings, note) // once per commit: pre-commit said it
	}
	return a.finishReport(r, name, "")
}

// mergeParents are the other parents of the merge a hook is asked about,
// none for an ordinary commit. `git merge` names them to pre-merge-commit
// only in GITHEAD_<commit> variables (it writes MERGE_HEAD after that
// hook); commit-msg, and pre-commit when `git commit` concludes a merge,
// find them in MERGE_HEAD.
func mergeParents(hook, gitDir string) ([]string, error) {
	if hook == "pre-merge-commit" {
		var heads []string
		for _, kv := range os.Environ() {
			name, _, _ := strings.Cut(kv, "=")
			sha, ok := strings.CutPrefix(name, "GITHEAD_")
			if !ok {
				continue
			}
			if !gitexec.IsObjectName(sha) {
				return nil, fmt.Errorf("%s: want GITHEAD_ and a full object name", name)
			}
			heads = append(heads, sha)
		}
		if len(heads) > 0 {
			sort.Strings(heads)
			return heads, nil
		}
	}
	return gitexec.MergeHeads(gitDir)
}

// CheckOptions are `check`'s flags.
type CheckOptions struct {
	Staged   bool
	Range    string
	Patch    string
	Profile  string
	Format   string
	TaskType string
	// AllowEmpty accepts a change that touches no file; without it an
	// empty patch, range or index is exit 2, so that a CI job fed nothing
	// (a failed `git diff`, a typo'd base) cannot pass.
	AllowEmpty bool
	// RecordCooldown records the paths a backfill check rejects for the
	// planner's cooldown; a plain CI check leaves no state behind.
	RecordCooldown bool
}

// AddFlags registers the options on fs.
func (o *CheckOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Staged, "staged", false, "check the staged change (the default)")
	o.Format = "text"
	fs.Var(once(&o.Range), "range", "check every commit of `A..B` (as git rev-list)")
	fs.Var(once(&o.Patch), "patch", "check the paths of a unified diff `FILE` (- for stdin)")
	fs.Var(once(&o.Profile), "profile", "scope profile to enforce (e.g. backfill)")
	fs.Var(once(&o.Format), "format", "output: text, json or github (workflow annotations)")
	fs.BoolVar(&o.AllowEmpty, "allow-empty", false, "accept a change that touches no file (empty patch, range without commits or changes, nothing staged) instead of exit 2")
	fs.BoolVar(&o.RecordCooldown, "record-cooldown", false, "with a backfill profile: record the paths it rejects, so `lockgate plan` skips backfills touching them for planner.cooldown_cycles")
	fs.Var(once(&o.TaskType), "task-type", "with --record-cooldown: the backfill task `TYPE` of the change; rejected paths cool down for that type only (default $LOCKGATE_TASK_TYPE, else every type)")
}

func checkChangeCommand() *command {
	o := &CheckOptions{}
	return &command{
		usage: "check [--staged | --range A..B | --patch FILE | -] [--allow-empty] [--profile P [--record-cooldown [--task-type T]]] [--format text|json|github]",
		short: "check a change against locks and scope, for CI (exit 1 on violations)",
		flags: o.AddFlags,
		// A CI job reading --format json reads its errors there too.
		jsonErrors: func() bool { return o.Format == "json" },
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) == 1 && args[0] == "-" {
				if o.Patch != "" {
					return service.Usagef("check: give --patch FILE or -, not both")
				}
				o.Patch, args = "-", nil
			}
			if len(args) > 0 {
				return service.Usagef("check: unexpected arguments %q", args)
			}
			modes := 0
			for _, set := range []bool{o.Staged, o.Range != "", o.Patch != ""} {
				if set {
					modes++
				}
			}
			if modes > 1 {
				return service.Usagef("check: give one of --staged, --range, --patch")
			}
			if err := reportFormat("check", o.Format); err != nil {
				return err
			}
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			profile := cmp.Or(o.Profile, getenv("LOCKGATE_PROFILE"))
			taskType := cmp.Or(o.TaskType, getenv("LOCKGATE_TASK_TYPE"))
			switch {
			case o.RecordCooldown && !scope.IsBackfillProfile(profile):
				return service.Usagef("check: --record-cooldown needs a backfill profile (--profile backfill or backfill-bridge)")
			case o.TaskType != "" && !o.RecordCooldown:
				return service.Usagef("check: --task-type %s only names what --record-cooldown records; add --record-cooldown", o.TaskType)
			case o.RecordCooldown && taskType != "" && !planner.ValidType(taskType):
				return service.Usagef("check: task type %q must match [a-z0-9_-]+ (as in backfill:type:<type>)", taskType)
			}
			// A range is judged by the policy and store of its base, any
			// change by -c FILE when given; else by the checkout's.
			if o.Range != "" {
				if err := verifyRange(ctx, e.Root(), "check", o.Range); err != nil {
					return err
				}
				if err := e.JudgeByBase(ctx, o.Range); err != nil {
					return err
				}
			} else {
				e.JudgeByFile()
			}
			h, err := e.Runner(ctx, a.purpose, profile)
			if err != nil {
				return err
			}
			var r *hooks.Report
			switch {
			case o.Range != "":
				r = &hooks.Report{Hook: "check"}
				if err = h.Range(ctx, []string{o.Range}, "", r); err == nil {
					r.Finish()
				}
			case o.Patch != "":
				r, err = checkPatch(ctx, h, e.Repo, a.stdio.In, e.CmdFile(o.Patch))
			default:
				r, err = h.PreCommit(ctx)
				if r != nil {
					r.Hook = "check"
				}
			}
			if err != nil {
				return err
			}
			if r.OK && r.Paths == 0 && !o.AllowEmpty {
				return service.Usagef("check: %s; pass --allow-empty to accept a change that touches no file", emptyChange(o))
			}
			err = a.finishReport(r, "change", o.Format)
			if o.RecordCooldown {
				a.noteRejections(ctx, e, taskType, r)
			}
			return err
		},
	}
}

// reportFormat refuses a --format a report cannot be printed in.
func reportFormat(cmd, f string) error {
	switch f {
	case "text", "json", "github":
		return nil
	}
	return service.Usagef("%s: --format %q: want text, json or github", cmd, f)
}

// checkPatch checks the unified diff in file ("-" for stdin). A file that
// cannot be opened or is not a regular file, and text that is not a diff,
// are invalid input (exit 2); a failing read is exit 3.
func checkPatch(ctx context.Context, h *hooks.Runner, repo *gitexec.Repo, stdin io.Reader, file string) (*hooks.Report, error) {
	in, name := stdinOrEmpty(stdin), "stdin"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, service.Usagef("check: --patch: %v", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, service.Usagef("check: --patch %s: is a directory, want a patch file", file)
		}
		in, name = f, file
	}
	changes, alt, err := diffpath.ParsePatchReadings(in)
	if err != nil {
		err = fmt.Errorf("parse patch %s: %w", name, err)
		var se *diffpath.SyntaxError
		var pe *diffpath.PathError
		if errors.As(err, &se) || errors.As(err, &pe) {
			return nil, service.Usagef("check: %v", err)
		}
		return nil, err
	}
	if alt != nil {
		if changes, alt, err = ruleOutReading(ctx, repo, changes, alt); err != nil {
			return nil, err
		}
	}
	if err := requireModified(ctx, repo, name, changes); err != nil {
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

// ruleOutReading keeps the one reading of an ambiguous patch that can be
// right, if only one can: a reading that modifies a file which neither
// HEAD's tree nor the index has is not how git diff made the patch, nor
// how git apply could apply it. Only modifications and type changes count,
// as their files exist both before and after the change: the files that
// deletions and renames remove are gone from a checkout of the change
// (git diff origin/main in CI), and additions are new. It returns alt nil
// when one reading is left; when both or neither are, both stand.
func ruleOutReading(ctx context.Context, repo *gitexec.Repo, changes []diffpath.Change, alt *diffpath.Reading) ([]diffpath.Change, *diffpath.Reading, error) {
	modified := func(cs []diffpath.Change) (paths []string) {
		for _, c := range cs {
			if c.Status == 'M' || c.Status == 'T' {
				paths = append(paths, c.Path)
			}
		}
		return paths
	}
	written, stripped := modified(changes), modified(alt.Changes)
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
// modification (only those count, see ruleOutReading) of a file the
// repository does not have — not in HEAD, the index or the worktree —
// while one of its directories has a file of that name is such a patch.
// A file the repository has nowhere is judged as written: the patch may
// come from another base.
func requireModified(ctx context.Context, repo *gitexec.Repo, name string, changes []diffpath.Change) error {
	var modified []string
	for _, c := range changes {
		if c.Status == 'M' || c.Status == 'T' {
			modified = append(modified, c.Path)
		}
	}
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
			return service.Usagef("check: %s modifies %s, which this repository does not have, but it has %s: the patch's names look relative to a directory (git diff --relative, diff.relative=true), and lockgate reads them from the top of the repository; make the patch from the top: git -c diff.relative=false diff", name, p, f)
		}
	}
	return nil
}

// judgeReadings decides a patch that reads two ways: its names as written
// (a --no-prefix diff) or without alt.Prefix (the same prefix on both
// sides, --src-prefix=x/ --dst-prefix=x/, which git apply removes). The
// same verdict is the verdict; different verdicts are invalid input, since
// either may be the truth.
func judgeReadings(name string, changes []diffpath.Change, alt *diffpath.Reading, written, stripped *hooks.Report) (*hooks.Report, error) {
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
	return nil, service.Usagef("check: cannot tell how to read the names in %s: they may begin with a prefix %s on both sides (git diff --src-prefix=%[2]s --dst-prefix=%[2]s, which git apply removes) or be paths as written (git diff --no-prefix), and the verdicts differ: %s; write the patch with git's default prefixes: git -c diff.noprefix=false diff --src-prefix=a/ --dst-prefix=b/",
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

// verifyRange refuses, as invalid input, a --range that git does not read
// as revisions: an option such as --all, or a name that does not resolve.
// Passed on to rev-list, a typo would be reported as git failing (exit 3).
func verifyRange(ctx context.Context, dir, cmd, rng string) error {
	if strings.HasPrefix(rng, "-") {
		return service.Usagef("%s: --range %q: want revisions such as A..B, not an option", cmd, rng)
	}
	// "--" makes rev-parse take the argument as revisions only, never a path.
	out, err := gitexec.Output(ctx, dir, nil, "rev-parse", rng, "--")
	var ge *gitexec.Error
	if errors.As(err, &ge) && ge.ExitCode() == 128 {
		return service.Usagef("%s: --range %s: %s", cmd, rng, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(ge.Stderr), "fatal: ")))
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
			return service.Usagef("%s: --range %s: names the all-zero object (the old value of a new branch): name its base instead, e.g. --range origin/main..HEAD", cmd, rng)
		}
		if !gitexec.ObjectExists(ctx, dir, sha) {
			return service.Usagef("%s: --range %s: this clone has no commit %s (fetch it, or fetch with more history)", cmd, rng, sha)
		}
	}
	return nil
}

// emptyChange says what `check` was given that touches no file.
func emptyChange(o *CheckOptions) string {
	switch {
	case o.Patch == "-":
		return "no diff on stdin"
	case o.Patch != "":
		return "no diff in " + o.Patch
	case o.Range != "":
		// diff-tree prints nothing for a commit that changes nothing, so
		// an empty range and a range of empty commits look the same.
		return "--range " + o.Range + " changes no file (no commits, or none that changes a file)"
	}
	return "nothing is staged"
}
