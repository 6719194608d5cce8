package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/workflow"
)

// Report is what a hook, check, verify or guard found: the violations,
// with the reason and fix for each, and the warnings.
type Report = hooks.Report

// Violation is one refusal of a Report.
type Violation = hooks.Violation

// HookInput is what git gives a hook: its arguments, its stdin and its
// environment. Front ends pass them as they got them; the hook contracts
// read from it what git tells them (GIT_INDEX_FILE, GITHEAD_<commit>,
// hooks.identity_env, the pre-commit framework's PRE_COMMIT_*).
type HookInput struct {
	Args []string
	// Stdin is the hook's standard input; nil reads as empty.
	Stdin io.Reader
	// Getenv reads the hook's environment; nil is the workspace's
	// (Options.Getenv).
	Getenv func(string) string
	// Environ is the whole environment as KEY=VALUE: git merge names the
	// merged commits only in the names of GITHEAD_<commit> variables.
	Environ []string
	// Transaction is the reference-transaction hook's stdin as the front
	// end read it (ReadRefTransaction) to see whether anything needs
	// judging; nil reads Stdin.
	Transaction *hooks.RefTransaction
}

// RefTransaction is what a reference-transaction hook judges.
type RefTransaction = hooks.RefTransaction

// ReadRefTransaction reads the reference-transaction hook's state
// argument and stdin, with no config or store: most transactions
// (fetches, tags, checkouts, deletions, and the commit the commit hooks
// just judged) need nothing more, and come back Empty. dir is where the
// hook runs, in the repository.
func ReadRefTransaction(ctx context.Context, dir string, args []string, stdin io.Reader) (*RefTransaction, error) {
	tx, err := hooks.ReadRefTransaction(args, stdin)
	if err != nil {
		return nil, &HookError{Hook: "reference-transaction", Err: err}
	}
	if len(tx.Branches) == 1 {
		if dir == "" {
			dir = "."
		}
		repo, err := gitexec.Discover(ctx, dir)
		if err != nil {
			return nil, &HookError{Hook: "reference-transaction", Err: err}
		}
		if hooks.TakePass(repo.GitDir, time.Now(), tx) {
			tx.Branches = nil
		}
	}
	return tx, nil
}

// PostCheckout is git's hook after a checkout; with PostMerge and
// PostRewrite (after a merge, an amend, a rebase) it brings the files'
// modes up to date for locks.read_only (SyncReadOnly), since git writes
// the files of a checkout with the modes of the index. They never refuse:
// what they cannot do is a warning.
func (e *Workspace) PostCheckout(ctx context.Context, in HookInput) (*Report, error) {
	return e.syncHook(ctx, "post-checkout", in)
}

// PostMerge is git's post-merge hook (see PostCheckout). Under
// locks.release_on_merge it also releases the locks whose holder's work
// the merge (or pull) brought onto the branch: ReleaseMerged over
// ORIG_HEAD..HEAD, which git sets for it. A failure to is a warning: the
// merge is done.
func (e *Workspace) PostMerge(ctx context.Context, in HookInput) (*Report, error) {
	r, err := e.syncHook(ctx, "post-merge", in)
	if err != nil || !e.Cfg.Locks.ReleaseOnMerge || len(in.Args) > 0 && in.Args[0] == "1" {
		return r, err // a squash merge commits later, as a commit of its own
	}
	branch, err := gitexec.HeadBranch(e.Repo.GitDir)
	if err != nil || branch == "" {
		r.Warnings = append(r.Warnings, "locks.release_on_merge: no lock released: HEAD is on no branch")
		return r, nil
	}
	res, err := e.ReleaseMerged(ctx, ReleaseMergedRequest{Range: "ORIG_HEAD..HEAD", Branch: branch})
	if err != nil {
		r.Warnings = append(r.Warnings, "locks.release_on_merge: no lock released: "+err.Error())
		return r, nil
	}
	for _, m := range res.Released {
		e.notify("", fmt.Sprintf("released %s of %s: its work is on %s (%s)", m.Key, m.Holder, branch, short(m.Merge)))
	}
	for _, m := range res.Kept {
		r.Warnings = append(r.Warnings, fmt.Sprintf("locks.release_on_merge: kept %s of %s: %s has commits on it that %s does not have yet (%s)",
			m.Key, m.Holder, m.Holder, branch, shortList(m.Unmerged)))
	}
	return r, nil
}

// PostRewrite is git's post-rewrite hook (see PostCheckout).
func (e *Workspace) PostRewrite(ctx context.Context, in HookInput) (*Report, error) {
	if in.Stdin != nil {
		_, _ = io.Copy(io.Discard, in.Stdin) // the rewritten commits: not needed
	}
	return e.syncHook(ctx, "post-rewrite", in)
}

func (e *Workspace) syncHook(ctx context.Context, name string, in HookInput) (*Report, error) {
	if err := HookArgs(name, in.Args); err != nil {
		return nil, err
	}
	r := &Report{Hook: name}
	if _, err := e.SyncReadOnly(ctx); err != nil {
		r.Warnings = append(r.Warnings, "locks.read_only: the files' modes were not brought up to date: "+err.Error())
	}
	r.Finish()
	return r, nil
}

// ReferenceTransaction is git's reference-transaction hook (git 2.28 and
// later): in the "prepared" state it judges the commits a branch update
// adds that no lockgate commit hook judged (`commit --no-verify`, a
// cherry-pick, a rebase, plumbing), as pre-commit and pre-push would; a
// refusal makes git abort the update.
func (e *Workspace) ReferenceTransaction(ctx context.Context, in HookInput) (*Report, error) {
	tx := in.Transaction
	if tx == nil {
		var err error
		if tx, err = ReadRefTransaction(ctx, e.Cwd, in.Args, in.stdin()); err != nil {
			return nil, err
		}
	}
	workflowRef := "refs/heads/" + e.Cfg.Workflow.Branch
	// lockgate's own commits of events: not work, and not worth a store.
	tx.Branches = slices.DeleteFunc(tx.Branches, func(u hooks.RefUpdate) bool { return u.Ref == workflowRef })
	if tx.Empty() {
		r := &Report{Hook: "reference-transaction"}
		r.Finish()
		return r, nil
	}
	getenv := e.hookEnv(in)
	h, err := e.logRunner(ctx, getenv("LOCKGATE_PROFILE"))
	var up *UnknownProfileError
	if errors.As(err, &up) {
		return nil, Usagef("LOCKGATE_PROFILE: %v: set it to one of them, or unset it", up.Err)
	}
	if err == nil {
		err = e.judgeByCommitted(ctx, h.Checker)
	}
	if err != nil {
		return nil, &HookError{Hook: "reference-transaction", Err: err}
	}
	h.WorkflowRef = workflowRef
	// The store is opened only when there are commits to judge: a branch
	// made or reset on existing work needs none.
	r, err := h.ReferenceTransaction(ctx, tx, func(ctx context.Context) error {
		return e.attachStore(ctx, h, Purpose{Cached: true})
	})
	return e.finishHook("reference-transaction", r, err)
}

// stdin is the hook's standard input, empty when there is none.
func (in HookInput) stdin() io.Reader {
	if in.Stdin == nil {
		return strings.NewReader("")
	}
	return in.Stdin
}

// hookEnv reads the hook's environment, else the workspace's.
func (e *Workspace) hookEnv(in HookInput) func(string) string {
	if in.Getenv != nil {
		return in.Getenv
	}
	return e.getenv
}

// PreCommit is git's pre-commit hook: it refuses a staged change that
// breaks locks or scope.
func (e *Workspace) PreCommit(ctx context.Context, in HookInput) (*Report, error) {
	return e.commitHook(ctx, "pre-commit", in)
}

// PreMergeCommit is git's pre-merge-commit hook: the pre-commit checks on
// what a merge changes beyond its parents.
func (e *Workspace) PreMergeCommit(ctx context.Context, in HookInput) (*Report, error) {
	return e.commitHook(ctx, "pre-merge-commit", in)
}

// CommitMsg is git's commit-msg hook, given the message file as its one
// argument: it refuses while paused; with hooks.commit_msg.require_task the
// message must name a held task; it adds the Lockgate-* trailers.
func (e *Workspace) CommitMsg(ctx context.Context, in HookInput) (*Report, error) {
	if err := HookArgs("commit-msg", in.Args); err != nil {
		return nil, err
	}
	return e.commitHook(ctx, "commit-msg", in)
}

// HookArgs refuses arguments git does not give hook: commit-msg takes the
// message file, pre-push the remote and its URL, the others none.
func HookArgs(hook string, args []string) error {
	switch {
	case hook == "commit-msg" && len(args) != 1:
		return Usagef("hook commit-msg: want the message FILE as the only argument")
	case hook == "pre-push" && len(args) > 2:
		return Usagef("hook pre-push: want REMOTE and URL")
	case hook == "post-checkout" && len(args) != 3:
		return Usagef("hook post-checkout: want the previous HEAD, the new HEAD and the branch flag")
	case (hook == "post-merge" || hook == "post-rewrite") && len(args) != 1:
		return Usagef("hook %s: want one argument, as git gives it", hook)
	case hook == "reference-transaction" && len(args) != 1:
		return Usagef("hook reference-transaction: want the state (prepared, committed or aborted) as the only argument")
	case hook == "pre-receive" && len(args) > 0:
		return Usagef("hook pre-receive takes no arguments (refs come on stdin)")
	case len(args) > 0 && (hook == "pre-commit" || hook == "pre-merge-commit"):
		return Usagef("hook %s: unexpected arguments %q", hook, args)
	}
	return nil
}

// commitHook runs the hooks of a commit being made: pre-commit,
// pre-merge-commit and commit-msg. They may judge by a git store's state
// younger than locks.git.max_age (Purpose.Cached).
func (e *Workspace) commitHook(ctx context.Context, name string, in HookInput) (*Report, error) {
	if err := HookArgs(name, in.Args); err != nil {
		return nil, err
	}
	var staged func() ([]byte, error)
	if listsStaged(name) && e.Repo.Toplevel != "" {
		// git lists the staged change while the store opens (since Load
		// when it was told the hook).
		if staged = e.takeStaged(); staged == nil {
			staged = gitexec.StartStaged(ctx, e.Repo.Toplevel)
		}
	}
	getenv := e.hookEnv(in)
	h, err := e.hookRunner(ctx, name, getenv, Purpose{Cached: true})
	if err != nil {
		return nil, err
	}
	h.Staged = staged
	h.Trailers = e.Cfg.Hooks.Trailers
	h.IndexFile = getenv("GIT_INDEX_FILE")
	if h.IndexFile == "" {
		h.IndexFile = filepath.Join(e.Repo.GitDir, "index")
	} else if abs, err := filepath.Abs(h.IndexFile); err == nil {
		h.IndexFile = abs // one key whichever way git spells it
	}
	if name != "commit-msg" || h.Trailers { // commit-msg reads paths for its trailers only
		if h.MergeParents, err = mergeParents(name, e.Repo.GitDir, in.Environ); err != nil {
			return nil, &HookError{Hook: name, Err: err}
		}
	}
	var r *Report
	if name == "commit-msg" {
		if h.Trailers {
			if h.CommentString, err = gitexec.CommentString(ctx, e.Repo); err != nil {
				return nil, &HookError{Hook: name, Err: err}
			}
		}
		r, err = h.CommitMsg(ctx, in.Args[0], e.Cfg.Hooks.CommitMsg.RequireTask)
	} else {
		r, err = h.PreCommit(ctx)
	}
	if err != nil {
		return nil, &HookError{Hook: name, Err: err}
	}
	r.Hook = name
	h.RecordPass(r.OK)
	if note := e.stateAgeNote(); note != "" && name != "commit-msg" {
		r.Warnings = append(r.Warnings, note) // once per commit: pre-commit said it
	}
	return r, nil
}

// listsStaged reports whether hook judges the staged change, which git
// lists for it: pre-commit and pre-merge-commit.
func listsStaged(hook string) bool { return hook == "pre-commit" || hook == "pre-merge-commit" }

// takeStaged returns the listing of the staged change Load started, once:
// a later hook in the same workspace lists the index as it is then.
func (e *Workspace) takeStaged() func() ([]byte, error) {
	s := e.Staged
	e.Staged = nil
	return s
}

// PrePush is git's pre-push hook, given REMOTE and URL as arguments (or
// the pre-commit framework's PRE_COMMIT_* variables) and the refs on
// stdin: it checks every commit no remote-tracking ref has, as its
// trailers' worker, and keeps lockgate's refs on the remote growing. A
// checkout at odds with the clone's store is refused (Purpose.Gate).
func (e *Workspace) PrePush(ctx context.Context, in HookInput) (*Report, error) {
	if err := HookArgs("pre-push", in.Args); err != nil {
		return nil, err
	}
	getenv := e.hookEnv(in)
	remote := getenv("PRE_COMMIT_REMOTE_NAME")
	if len(in.Args) > 0 {
		remote = in.Args[0]
	}
	h, err := e.hookRunner(ctx, "pre-push", getenv, Purpose{Gate: true})
	if err != nil {
		return nil, err
	}
	e.pushBeforeJudging(ctx)
	// lockgate's refs only grow, whichever store this clone uses.
	h.LockRef = e.Cfg.Locks.Git.Ref
	h.WorkflowRef = "refs/heads/" + e.Cfg.Workflow.Branch
	// The clone's own worker pushes: a commit naming another is judged
	// as it, unless that worker signed it (or trust.pushers lets it).
	e.bindPusher(h, e.pusherOf(e.Me.Holder, false), e.localSignersBase(ctx, remote))
	r, err := h.PrePush(ctx, remote, in.stdin(), getenv)
	return e.finishHook("pre-push", r, err)
}

// PreReceive is the server's pre-receive hook, given the pushed refs on
// stdin: it checks each, as the worker hooks.identity_env names, and with
// hooks.pre_receive.verify proves the pushed commits against the lock log.
func (e *Workspace) PreReceive(ctx context.Context, in HookInput) (*Report, error) {
	if err := HookArgs("pre-receive", in.Args); err != nil {
		return nil, err
	}
	getenv := e.hookEnv(in)
	p, err := e.pusher(getenv)
	if err != nil {
		return nil, &HookError{Hook: "pre-receive", Err: err}
	}
	h, err := e.hookRunner(ctx, "pre-receive", getenv, Purpose{})
	if err != nil {
		return nil, err
	}
	base := e.serverBase(ctx)
	e.bindPusher(h, p, base)
	if h.RequireSigned {
		h.EventsAdded = func(ctx context.Context, commits []string) (map[string][]journal.Event, error) {
			return workflow.AddedEvents(ctx, e.Root(), commits)
		}
	}
	h.LockRef = e.Cfg.Locks.Git.Ref
	h.WorkflowRef = "refs/heads/" + e.Cfg.Workflow.Branch
	h.ProtectLog = e.Cfg.Hooks.PreReceive.ProtectLog
	h.Bookkeeping = append(e.LogRefs(), e.Cfg.Locks.Git.Ref)
	if e.Cfg.Hooks.PreReceive.Verify {
		h.VerifyLog = func(ctx context.Context, pushed map[string]string) ([]journal.Event, error) {
			var extra []string
			if tip, ok := pushed[h.WorkflowRef]; ok {
				extra = append(extra, tip) // the events pushed with the commits
			}
			return e.readLockLog(ctx, extra...)
		}
		h.EventCommits = e.EventCommits
		h.LogRefs = e.LogRefs()
	}
	r, err := h.PreReceive(ctx, in.stdin())
	return e.finishHook("pre-receive", r, err)
}

// pusher makes the worker a server judges a push as the one the first set
// variable of hooks.identity_env names (the server's authenticated user),
// as trust.pushers maps it, and binds the pushed commits' trailers to
// that user; without one, to the server's own worker.
func (e *Workspace) pusher(getenv func(string) string) (*hooks.Pusher, error) {
	for _, v := range e.Cfg.Hooks.IdentityEnv {
		if id := getenv(v); id != "" {
			p := e.pusherOf(id, true)
			me, err := e.identity(p.Workers[0])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v, err)
			}
			e.Me = me
			return p, nil
		}
	}
	return e.pusherOf(e.Me.Holder, true), nil
}

// serverBase is the default branch's commit a server reads its policy
// and allowed signers from ("" in an empty repository, or when the
// operator's own policy file judges).
func (e *Workspace) serverBase(ctx context.Context) string {
	out, err := gitexec.RepoOutput(ctx, e.Repo, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// hookRunner is the runner of hook name, its store opened for p. An
// unknown LOCKGATE_PROFILE is invalid input, as for check --profile, not a
// hook that could not decide: the fix is the variable, not the store.
func (e *Workspace) hookRunner(ctx context.Context, name string, getenv func(string) string, p Purpose) (*hooks.Runner, error) {
	h, err := e.Runner(ctx, p, getenv("LOCKGATE_PROFILE"))
	var up *UnknownProfileError
	if errors.As(err, &up) {
		return nil, Usagef("LOCKGATE_PROFILE: %v: set it to one of them, or unset it", up.Err)
	}
	if err != nil {
		return nil, &HookError{Hook: name, Err: err}
	}
	return h, nil
}

// finishHook is a push hook's report, with the age of the lock state it
// judged by, or the error of a hook that could not decide.
func (e *Workspace) finishHook(name string, r *Report, err error) (*Report, error) {
	if err != nil {
		return nil, &HookError{Hook: name, Err: err}
	}
	if note := e.stateAgeNote(); note != "" {
		r.Warnings = append(r.Warnings, note)
	}
	return r, nil
}

// mergeParents are the other parents of the merge a hook is asked about,
// none for an ordinary commit. `git merge` names them to pre-merge-commit
// only in GITHEAD_<commit> variables of environ (it writes MERGE_HEAD after
// that hook); commit-msg, and pre-commit when `git commit` concludes a
// merge, find them in MERGE_HEAD.
func mergeParents(hook, gitDir string, environ []string) ([]string, error) {
	if hook == "pre-merge-commit" {
		var heads []string
		for _, kv := range environ {
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

// Bypass is what LOCKGATE_SKIP did to a hook.
type Bypass struct {
	// Skipped: the hook's checks are skipped, and the bypass is recorded
	// as a hook_bypass event.
	Skipped bool
	// Invalid is a value of LOCKGATE_SKIP that is neither yes nor no: the
	// checks run.
	Invalid string
	// Unrecorded says why a bypass asked for is not honoured: the journal
	// could not record it, and the checks run.
	Unrecorded error
}

// BypassHook honours LOCKGATE_SKIP=1 (or true, yes) for the hooks that run
// in the committer's environment (hint.BypassGit), recording a
// hook_bypass. The server's pre-receive never honours it: git hands a
// local push's environment to the remote's hooks. e is the workspace the
// hook runs in, nil when it could not be loaded: neither the journal nor
// the identity needs the config, so that a bypass still works when the
// config is what cannot be read.
func BypassHook(ctx context.Context, e *Workspace, opts Options, hook string) Bypass {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch v := getenv("LOCKGATE_SKIP"); strings.ToLower(v) {
	case "1", "true", "yes":
	case "", "0", "false", "no":
		return Bypass{}
	default:
		return Bypass{Invalid: v}
	}
	if _, ok := hint.BypassGit[hook]; !ok {
		return Bypass{}
	}
	j, me, err := bypassJournal(ctx, e, opts)
	if err == nil {
		err = j.Append(journal.Event{Worker: me.Holder, WorkerType: me.HolderType, Session: me.Session,
			Action: journal.ActionHookBypass, Details: hook + " skipped with LOCKGATE_SKIP"})
	}
	if err != nil {
		return Bypass{Unrecorded: err}
	}
	return Bypass{Skipped: true}
}

// bypassJournal is the journal a bypass is recorded in and the identity it
// is recorded for: e's, else found from opts without reading the config.
func bypassJournal(ctx context.Context, e *Workspace, opts Options) (*journal.Journal, locks.Owner, error) {
	if e != nil {
		return e.JournalFile(), e.Me, nil
	}
	dir := opts.Dir
	if dir == "" {
		dir = "."
	}
	cwd, err := filepath.Abs(dir)
	if err != nil {
		return nil, locks.Owner{}, fmt.Errorf("resolve -C %s: %w", opts.Dir, err)
	}
	repo, err := gitexec.Discover(ctx, cwd)
	if err != nil {
		return nil, locks.Owner{}, err
	}
	me, err := owner(opts)
	if err != nil {
		return nil, locks.Owner{}, err
	}
	return journal.Open(filepath.Join(repo.CommonDir, "lockgate", "events.jsonl")), me, nil
}

// InstallResult says what installing did per hook.
type InstallResult = hooks.InstallResult

// UninstallResult says what uninstalling did per hook.
type UninstallResult = hooks.UninstallResult

// HookInstall names the git hooks to install or uninstall.
type HookInstall struct {
	// Hooks are the hooks' names; none is hooks.DefaultHooks.
	Hooks []string
	// GlobalHooksPath installs even though core.hooksPath comes from a
	// global or system config.
	GlobalHooksPath bool
	// Command is the lockgate the shims run.
	Command string
}

// InstallHooks writes lockgate's shims for the hooks req names where git
// runs this repository's hooks, keeping and chaining the hooks there.
func (e *Workspace) InstallHooks(ctx context.Context, req HookInstall) ([]InstallResult, error) {
	dir, names, err := e.hookTargets(ctx, req)
	if err != nil {
		return nil, err
	}
	var skipped []InstallResult
	if slices.Contains(names, hooks.RefTxHook) {
		major, minor, err := gitexec.Version(ctx)
		if err != nil {
			return nil, err
		}
		if major < 2 || major == 2 && minor < 28 {
			why := fmt.Sprintf("git %d.%d does not run the reference-transaction hook (git 2.28 and later do): commits made with --no-verify are caught only by pre-push, pre-receive and CI; upgrade git", major, minor)
			if len(req.Hooks) > 0 {
				return nil, Usagef("install --hook %s: %s", hooks.RefTxHook, why)
			}
			names = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == hooks.RefTxHook })
			skipped = append(skipped, InstallResult{Hook: hooks.RefTxHook, Skipped: why})
		}
	}
	res, err := hooks.Install(dir, req.Command, names)
	return append(res, skipped...), err
}

// UninstallHooks removes lockgate's shims for the hooks req names and
// restores the hooks they chained.
func (e *Workspace) UninstallHooks(ctx context.Context, req HookInstall) ([]UninstallResult, error) {
	dir, names, err := e.hookTargets(ctx, req)
	if err != nil {
		return nil, err
	}
	return hooks.Uninstall(dir, names)
}

// Validate refuses a hook lockgate has no contract for.
func (req HookInstall) Validate() error {
	for _, h := range req.Hooks {
		if !slices.Contains(hooks.Known, h) {
			return Usagef("unknown hook %q: want one of %s", h, strings.Join(hooks.Known, ", "))
		}
	}
	return nil
}

// hookTargets resolves which hooks to (un)install and where.
func (e *Workspace) hookTargets(ctx context.Context, req HookInstall) (dir string, names []string, err error) {
	if err := req.Validate(); err != nil {
		return "", nil, err
	}
	names = req.Hooks
	if len(names) == 0 {
		names = hooks.DefaultHooks
		if e.Cfg.Locks.ReadOnly {
			names = append(slices.Clone(names), hooks.ReadOnlyHooks...)
		}
		if e.Cfg.Locks.ReleaseOnMerge && !slices.Contains(names, "post-merge") {
			names = append(slices.Clone(names), "post-merge")
		}
	}
	dir, err = e.hooksDir(ctx, req.GlobalHooksPath)
	return dir, names, err
}

// hooksDir is where git runs this repository's hooks, refusing a
// core.hooksPath set outside the repository unless allowGlobal: installing
// there would put lockgate in every repository that shares it.
func (e *Workspace) hooksDir(ctx context.Context, allowGlobal bool) (string, error) {
	dir := e.Root()
	value, origin, err := gitexec.ConfigOrigin(ctx, dir, "core.hooksPath")
	if err != nil {
		return "", err
	}
	if value != "" && !allowGlobal && !e.repoLocalOrigin(dir, origin) {
		return "", Usagef("core.hooksPath is %s, set in %s: hooks installed there run in every repository that uses it.\n"+
			"  Use a repository-local setting (git config core.hooksPath …) or pass --global-hooks-path to install there anyway",
			value, strings.TrimPrefix(origin, "file:"))
	}
	return gitexec.HooksDir(ctx, dir)
}

// repoLocalOrigin reports whether a setting's origin (git config
// --show-origin) is a file of this repository.
func (e *Workspace) repoLocalOrigin(dir, origin string) bool {
	f, ok := strings.CutPrefix(origin, "file:")
	if !ok {
		return false // command line, environment: not a file of this repository
	}
	if !filepath.IsAbs(f) {
		f = filepath.Join(dir, f)
	}
	for _, d := range []string{e.Repo.CommonDir, e.Repo.GitDir} {
		if rel, err := filepath.Rel(d, f); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// WorkTree is the repository's working tree, "" for a bare repository.
func (e *Workspace) WorkTree() string { return e.Repo.Toplevel }

// Dir is the absolute directory the request runs in (after -C).
func (e *Workspace) Dir() string { return e.Cwd }

// ConfigPath is the config file the request reads, "" when it reads the
// built-in defaults.
func (e *Workspace) ConfigPath() string { return e.Cfg.Path }
