package session

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
	"sync"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
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

// ReferenceTransaction is git's reference-transaction hook (git 2.28 and
// later): in the "prepared" state it judges the commits a branch update
// adds that no lockgate commit hook judged (`commit --no-verify`, a
// cherry-pick, a rebase, plumbing), as pre-commit and pre-push would; a
// refusal makes git abort the update.
func (e *Workspace) ReferenceTransaction(ctx context.Context, in HookInput) (*Report, error) {
	tx := in.Transaction
	if tx == nil {
		var err error
		if tx, err = ReadRefTransaction(ctx, e.Cwd, in.Args, in.Input()); err != nil {
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
	getenv := e.HookEnv(in)
	h, err := e.LogRunner(ctx, getenv("LOCKGATE_PROFILE"))
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
	return e.FinishHook("reference-transaction", r, err)
}

// Input is the hook's standard input, empty when there is none.
func (in HookInput) Input() io.Reader {
	if in.Stdin == nil {
		return strings.NewReader("")
	}
	return in.Stdin
}

// HookEnv reads the hook's environment, else the workspace's.
func (e *Workspace) HookEnv(in HookInput) func(string) string {
	if in.Getenv != nil {
		return in.Getenv
	}
	return e.Getenv
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
	if listsStaged(name) && e.repo.Toplevel != "" {
		// git lists the staged change while the store opens (since Load
		// when it was told the hook).
		if staged = e.takeStaged(); staged == nil {
			staged = gitexec.StartStaged(ctx, e.repo.Toplevel)
		}
	}
	getenv := e.HookEnv(in)
	h, err := e.HookRunner(ctx, name, getenv, Purpose{Cached: true})
	if err != nil {
		return nil, err
	}
	h.Staged = staged
	h.Trailers = e.Cfg.Hooks.Trailers
	h.IndexFile = getenv("GIT_INDEX_FILE")
	if h.IndexFile == "" {
		h.IndexFile = filepath.Join(e.repo.GitDir, "index")
	} else if abs, err := filepath.Abs(h.IndexFile); err == nil {
		h.IndexFile = abs // one key whichever way git spells it
	}
	if name != "commit-msg" || h.Trailers { // commit-msg reads paths for its trailers only
		if h.MergeParents, err = mergeParents(name, e.repo.GitDir, in.Environ); err != nil {
			return nil, &HookError{Hook: name, Err: err}
		}
	}
	var r *Report
	if name == "commit-msg" {
		if h.Trailers {
			if h.CommentString, err = gitexec.CommentString(ctx, e.repo); err != nil {
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
	if note := e.StateAgeNote(); note != "" && name != "commit-msg" {
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
	getenv := e.HookEnv(in)
	remote := getenv("PRE_COMMIT_REMOTE_NAME")
	if len(in.Args) > 0 {
		remote = in.Args[0]
	}
	h, err := e.HookRunner(ctx, "pre-push", getenv, Purpose{Gate: true})
	if err != nil {
		return nil, err
	}
	if err := e.pushBeforeJudging(ctx); err != nil {
		return nil, &HookError{Hook: "pre-push", Err: err}
	}
	// lockgate's refs only grow, whichever store this clone uses.
	h.LockRef = e.Cfg.Locks.Git.Ref
	h.WorkflowRef = "refs/heads/" + e.Cfg.Workflow.Branch
	// The clone's own worker pushes: a commit naming another is judged
	// as it, unless that worker signed it (or trust.pushers lets it).
	e.BindPusher(h, e.PusherOf(e.Me.Holder, false), "")
	if h.Signers != nil {
		// The allowed signers are read only for a commit that needs them
		// (one naming another worker, or workflow.signed): most pushes
		// need no base, and finding it costs two git processes.
		signers := sync.OnceValue(func() func(context.Context, []string) (map[string][]string, error) {
			return e.signersAt(e.localSignersBase(ctx, remote))
		})
		h.Signers = func(ctx context.Context, shas []string) (map[string][]string, error) {
			return signers()(ctx, shas)
		}
	}
	r, err := h.PrePush(ctx, remote, in.Input(), getenv)
	return e.FinishHook("pre-push", r, err)
}

// HookRunner is the runner of hook name, its store opened for p. An
// unknown LOCKGATE_PROFILE is invalid input, as for check --profile, not a
// hook that could not decide: the fix is the variable, not the store.
func (e *Workspace) HookRunner(ctx context.Context, name string, getenv func(string) string, p Purpose) (*hooks.Runner, error) {
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

// FinishHook is a push hook's report, with the age of the lock state it
// judged by, or the error of a hook that could not decide.
func (e *Workspace) FinishHook(name string, r *Report, err error) (*Report, error) {
	if err != nil {
		return nil, &HookError{Hook: name, Err: err}
	}
	if note := e.StateAgeNote(); note != "" {
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
