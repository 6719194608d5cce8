package service

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/workflow"
)

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
	branch, err := gitexec.HeadBranch(e.GitDir())
	if err != nil || branch == "" {
		r.Warnings = append(r.Warnings, "locks.release_on_merge: no lock released: HEAD is on no branch")
		return r, nil
	}
	res, err := e.Locks().ReleaseMerged(ctx, lockops.ReleaseMergedRequest{Range: "ORIG_HEAD..HEAD", Branch: branch})
	if err != nil {
		r.Warnings = append(r.Warnings, "locks.release_on_merge: no lock released: "+err.Error())
		return r, nil
	}
	for _, m := range res.Released {
		e.Notify("", fmt.Sprintf("released %s of %s: its work is on %s (%s)", m.Key, m.Holder, branch, session.Short(m.Merge)))
	}
	for _, m := range res.Kept {
		r.Warnings = append(r.Warnings, fmt.Sprintf("locks.release_on_merge: kept %s of %s: %s has commits on it that %s does not have yet (%s)",
			m.Key, m.Holder, m.Holder, branch, lockops.ShortList(m.Unmerged)))
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
	if _, err := e.Locks().SyncReadOnly(ctx); err != nil {
		r.Warnings = append(r.Warnings, "locks.read_only: the files' modes were not brought up to date: "+err.Error())
	}
	r.Finish()
	return r, nil
}

// PreReceive is the server's pre-receive hook, given the pushed refs on
// stdin: it checks each, as the worker hooks.identity_env names, and with
// hooks.pre_receive.verify proves the pushed commits against the lock log.
func (e *Workspace) PreReceive(ctx context.Context, in HookInput) (*Report, error) {
	if err := HookArgs("pre-receive", in.Args); err != nil {
		return nil, err
	}
	getenv := e.HookEnv(in)
	p, err := e.pusher(getenv)
	if err != nil {
		return nil, &HookError{Hook: "pre-receive", Err: err}
	}
	h, err := e.HookRunner(ctx, "pre-receive", getenv, Purpose{})
	if err != nil {
		return nil, err
	}
	base := e.ServerBase(ctx)
	e.BindPusher(h, p, base)
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
			return e.Verifier().ReadLockLog(ctx, extra...)
		}
		h.EventCommits = e.Verifier().EventCommits
		h.LogRefs = e.LogRefs()
	}
	r, err := h.PreReceive(ctx, in.Input())
	return e.FinishHook("pre-receive", r, err)
}

// pusher makes the worker a server judges a push as the one the first set
// variable of hooks.identity_env names (the server's authenticated user),
// as trust.pushers maps it, and binds the pushed commits' trailers to
// that user; without one, to the server's own worker.
func (e *Workspace) pusher(getenv func(string) string) (*hooks.Pusher, error) {
	for _, v := range e.Cfg.Hooks.IdentityEnv {
		if id := getenv(v); id != "" {
			p := e.PusherOf(id, true)
			me, err := e.Identity(p.Workers[0])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", v, err)
			}
			e.Me = me
			return p, nil
		}
	}
	return e.PusherOf(e.Me.Holder, true), nil
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
	for _, d := range []string{e.CommonDir(), e.GitDir()} {
		if rel, err := filepath.Rel(d, f); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}
