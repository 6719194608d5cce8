package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/hookcli"
	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/service/verify"
)

// finishReport prints a report and turns a refusal into exit 1.
func (a *app) finishReport(r *service.Report, what, format string) error {
	return a.hookRun("", nil).Finish(r, what, format)
}

// hookRun is the run of hook name with args on this command line.
func (a *app) hookRun(name string, args []string) *hookcli.Run {
	return &hookcli.Run{Name: name, Args: args, Stdio: hookcli.Stdio(a.stdio), Console: a, Options: a.options(), JSON: a.globals.JSON,
		WriteJSON: func(v any) error { return writeJSON(a.stdio.Out, v) }}
}

// Paint colours text for stderr by role (hookcli.Console).
func (a *app) Paint(role termstyle.Role, text string) string { return a.paint(role, text) }

// CarryReport carries the options into the hints of a hook's report
// (hookcli.Console).
func (a *app) CarryReport(r *service.Report) { a.carryReport(r) }

// hookContract is one git hook the installed shims call.
type hookContract = func(*service.Workspace, context.Context, service.HookInput) (*service.Report, error)

func hookCommand() *command {
	sub := map[string]*command{}
	for _, h := range []struct {
		name, usage, short string
		run                hookContract
	}{
		{"pre-commit", "", "git pre-commit hook: refuse a staged change that breaks locks or scope (exit 1)", (*service.Workspace).PreCommit},
		{"pre-merge-commit", "", "git pre-merge-commit hook: the pre-commit checks on what a merge changes beyond its parents", (*service.Workspace).PreMergeCommit},
		{"commit-msg", " FILE", "git commit-msg hook: refuse while paused; with require_task, the message must name a held task; add the Lockgate-* trailers", (*service.Workspace).CommitMsg},
		{"pre-push", " [REMOTE [URL]]", "git pre-push hook: check every commit no remote-tracking ref has, as its trailers' worker (refs on stdin)", (*service.Workspace).PrePush},
		{"reference-transaction", " STATE", "git reference-transaction hook: refuse a branch update that adds commits no lockgate hook judged (commit --no-verify, cherry-pick, rebase) and that break locks or scope", (*service.Workspace).ReferenceTransaction},
		{"post-checkout", " PREV NEW FLAG", "git post-checkout hook: keep the modes of held files current (locks.read_only)", (*service.Workspace).PostCheckout},
		{"post-merge", " SQUASH", "git post-merge hook: keep the modes of held files current (locks.read_only)", (*service.Workspace).PostMerge},
		{"post-rewrite", " COMMAND", "git post-rewrite hook: keep the modes of held files current (locks.read_only)", (*service.Workspace).PostRewrite},
		{"pre-receive", "", "server-side hook: check each pushed ref (identity from hooks.identity_env)", (*service.Workspace).PreReceive},
	} {
		sub[h.name] = &command{usage: "hook " + h.name + h.usage, short: h.short,
			run: func(ctx context.Context, a *app, args []string) error { return a.runHook(ctx, h.name, args, h.run) }}
	}
	return &command{usage: "hook <name>", short: "run a git hook (what the installed hooks call)", sub: sub}
}

// runHook runs hook name on what git gives it, unless LOCKGATE_SKIP skips
// it, and prints its report.
func (a *app) runHook(ctx context.Context, name string, args []string, run hookContract) error {
	a.hook = name
	h := a.hookRun(name, args)
	h.Load = func(ctx context.Context) (*session.Workspace, hookcli.Contract, error) {
		e, err := a.load(ctx)
		if err != nil {
			return nil, nil, err
		}
		return e.Workspace, func(ctx context.Context, in session.HookInput) (*service.Report, error) { return run(e, ctx, in) }, nil
	}
	return h.Do(ctx)
}

func checkChangeCommand() *command {
	var req service.ChangeRequest
	var staged bool
	format := "text"
	return &command{
		noStore: true,
		usage:   "check [--staged | --range A..B [--branch B] | --patch FILE | -] [--allow-empty] [--profile P [--record-cooldown [--task-type T]]] [--format text|json|github]",
		short:   "check a change against locks and scope, for CI (exit 1 on violations)",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&staged, "staged", false, "check the staged change (the default)")
			fs.Var(once(&req.Range), "range", "check every commit of `A..B` (as git rev-list)")
			fs.Var(once(&req.Branch), "branch", "with --range: the branch `B` the commits land on, whose branch locks hold (locks.per_branch; default: the range's base branch, else the CI's target branch)")
			fs.Var(once(&req.Patch), "patch", "check the paths of a unified diff `FILE` (- for stdin)")
			fs.Var(once(&req.Profile), "profile", "scope profile to enforce (e.g. backfill)")
			fs.Var(once(&format), "format", "output: text, json or github (workflow annotations)")
			fs.BoolVar(&req.AllowEmpty, "allow-empty", false, "accept a change that touches no file (empty patch, range without commits or changes, nothing staged) instead of exit 2")
			fs.BoolVar(&req.RecordCooldown, "record-cooldown", false, "with a backfill profile: record the paths it rejects, so `lockgate plan` skips backfills touching them for planner.cooldown_cycles")
			fs.Var(once(&req.TaskType), "task-type", "with --record-cooldown: the backfill task `TYPE` of the change; rejected paths cool down for that type only (default $LOCKGATE_TASK_TYPE, else every type)")
		},
		// A CI job reading --format json reads its errors there too.
		jsonErrors: func() bool { return format == "json" },
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) == 1 && args[0] == "-" {
				if req.Patch != "" {
					return service.Usagef("check: give --patch FILE or -, not both")
				}
				req.Patch, args = "-", nil
			}
			if len(args) > 0 {
				return service.Usagef("check: unexpected arguments %q", args)
			}
			if rng, patch := req.Range != "", req.Patch != ""; staged && rng || staged && patch || rng && patch {
				return service.Usagef("check: give one of --staged, --range, --patch")
			}
			if req.Branch != "" && req.Range == "" {
				return service.Usagef("check: --branch names where the commits of --range land; the staged change lands on HEAD's branch")
			}
			if err := reportFormat("check", format); err != nil {
				return err
			}
			req.Stdin = a.stdio.In
			return run(ctx, a, func(e *service.Workspace) (*service.ChangeResult, error) { return e.CheckChange(ctx, req) },
				func(_ *service.Workspace, res *service.ChangeResult) error {
					err := a.finishReport(res.Report, "change", format)
					switch c := res.Cooldown; {
					case c.Err != nil:
						fmt.Fprintf(a.stdio.Err, "lockgate: warning: rejected paths not recorded for the planner: %v\n", c.Err)
					case len(c.Recorded) > 0:
						fmt.Fprintf(a.stdio.Err, "lockgate: planner cooldown from cycle %d: %s\n", c.Cycle, strings.Join(c.Recorded, ", "))
					}
					return err
				})
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

func verifyCommand() *command {
	var req verify.Request
	format := "text"
	return &command{
		noStore: true,
		usage:   "verify [--range A..B | --staged] [--branch B] [--fetch] [--format text|json|github]",
		short:   "prove commits against the lock log: made by their authors under no one else's lock (exit 1 violations, 3 log incomplete)",
		flags: func(fs *pflag.FlagSet) {
			fs.Var(once(&req.Range), "range", "verify every commit of `A..B` (as git rev-list; default: HEAD's commits on no remote-tracking ref)")
			fs.BoolVar(&req.Staged, "staged", false, "verify the staged change as a commit made now")
			fs.BoolVar(&req.Fetch, "fetch", false, "fetch the workflow branch from workflow.remote first")
			fs.Var(once(&req.Branch), "branch", "the branch `B` the commits land on, whose branch locks hold (locks.per_branch; default: the range's base branch, else the CI's target branch, else HEAD's)")
			fs.Var(once(&format), "format", "output: text, json or github (workflow annotations)")
			fs.BoolVar(&req.AllowEmpty, "allow-empty", false, "accept a range with no commit that changes a file instead of exit 2")
		},
		jsonErrors: func() bool { return format == "json" },
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("verify: unexpected arguments %q", args)
			}
			if err := req.Validate(); err != nil {
				return err
			}
			if err := reportFormat("verify", format); err != nil {
				return err
			}
			return run(ctx, a, func(e *service.Workspace) (*service.Report, error) { return e.Verifier().Verify(ctx, req) },
				func(_ *service.Workspace, r *service.Report) error { return a.finishReport(r, "verify", format) })
		},
	}
}

// Pre-edit guards ask, before a file is edited, what the pre-commit hook
// would answer when it is committed (service.Workspace.CheckPaths).

func guardEditCommand() *command {
	return &command{
		usage:    "guard edit PATH...",
		short:    "exit 0 when this worker may edit PATH (free or its own, in scope, not paused); 1 with the reason otherwise",
		noStore:  true,
		someArgs: "PATH",
		run: func(ctx context.Context, a *app, args []string) error {
			return run(ctx, a, func(e *service.Workspace) (*service.PathCheckResult, error) {
				return e.CheckPaths(ctx, service.PathCheck{Paths: args})
			},
				func(_ *service.Workspace, res *service.PathCheckResult) error {
					return a.finishReport(res.Report, "edit", "")
				})
		},
	}
}

// guardShort describes `guard NAME` for each harness.
var guardShort = map[string]string{
	"claude-code": "Claude Code PreToolUse hook: reads the payload on stdin; exit 2 blocks the edit with the reason on stderr",
	"codex":       "Codex CLI PreToolUse hook (apply_patch, shell): exit 2 blocks with the reason on stderr",
	"gemini":      "Gemini CLI BeforeTool hook (write_file, replace, run_shell_command): a deny decision and exit 2",
	"opencode":    "what lockgate's opencode plugin runs before a tool: exit 2 blocks, the plugin throws the reason",
	"cursor":      "Cursor preToolUse/beforeShellExecution hook: answers {\"permission\": \"allow\"|\"deny\"}",
	"copilot":     "GitHub Copilot preToolUse hook: answers {\"permissionDecision\": \"deny\"} with the reason",
	"cline":       "Cline PreToolUse hook: answers {\"cancel\": true} with the reason (Cline ends the task)",
	"goose":       "Goose PreToolUse hook: exit 2 blocks with the reason on stderr",
}

// guardHarnessCommands are `guard NAME` for every harness lockgate answers.
func guardHarnessCommands(sub map[string]*command) {
	for _, name := range service.Harnesses {
		sub[name] = guardHarnessCommand(name)
	}
}

// guardHarnessCommand reads harness's pre-tool payload on stdin, judges
// every file the tool would write (and the write targets of its shell
// command) as the pre-commit hook would, and answers in the harness's
// convention. Anything it cannot vouch for — a payload it cannot read, a
// store it cannot open — is a denial.
func guardHarnessCommand(harness string) *command {
	return &command{
		usage: "guard " + harness,
		short: guardShort[harness],
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return a.denyCall(harness, service.Usagef("guard %s takes no arguments (the payload comes on stdin)", harness))
			}
			// The caller is a coding agent unless told otherwise.
			if a.globals.WorkerType == "" && getenv("LOCKGATE_WORKER_TYPE") == "" {
				a.globals.WorkerType = "agent"
			}
			call, err := service.ReadToolCall(harness, a.stdio.In)
			if err != nil {
				return a.denyCall(harness, err)
			}
			if !call.Guards() {
				return a.answerCall(harness, false, "") // writes nothing
			}
			if call.Cwd != "" && a.globals.Dir == "" {
				if !filepath.IsAbs(call.Cwd) {
					return a.denyCall(harness, fmt.Errorf("payload cwd %q is not absolute", call.Cwd))
				}
				a.globals.Dir = call.Cwd
			}
			e, err := a.load(ctx)
			if err != nil {
				return a.denyCall(harness, err)
			}
			res, err := e.GuardToolCall(ctx, call)
			if err != nil {
				return a.denyCall(harness, err)
			}
			r := res.Report
			for _, w := range r.Warnings {
				fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s\n", w)
			}
			if r.OK {
				return a.answerCall(harness, false, "")
			}
			a.carryReport(r)
			r.Warnings = nil // said above, on stderr
			var b strings.Builder
			// The headline names a refused file first.
			paths := slices.Clone(res.Paths)
			if v := r.Violations[0].Path; v != "" {
				paths = append([]string{v}, slices.DeleteFunc(paths, func(p string) bool { return p == v })...)
			}
			shown := make([]string, len(paths))
			for i, p := range paths {
				shown[i] = safetext.Field(safetext.Shorten(p))
			}
			r.WriteStyled(&b, service.DescribeCall(call, shown), func(_, text string) string { return text })
			return a.answerCall(harness, true, b.String())
		},
	}
}

// answerCall prints the guard's decision in harness's convention and
// exits as it asks.
func (a *app) answerCall(harness string, deny bool, reason string) error {
	rep := service.GuardAnswer(harness, deny, reason)
	fmt.Fprint(a.stdio.Out, rep.Stdout)
	fmt.Fprint(a.stdio.Err, rep.Stderr)
	if rep.Exit != 0 {
		return &outcome.ExitError{Code: rep.Exit}
	}
	return nil
}

// denyCall refuses a tool call the guard could not vouch for, saying why
// and how to resolve it, in harness's convention.
func (a *app) denyCall(harness string, err error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "lockgate: edit blocked: %s\n", safetext.Text(err.Error()))
	o := a.outcome(err)
	if o.Detail != "" {
		hint.PrintAs(&b, "hint:", o.Detail)
	}
	hint.PrintAs(&b, "hint:", a.carry(o.Hints)...)
	return a.answerCall(harness, true, b.String())
}

func guardWatchCommand() *command {
	interval := 2 * time.Second
	return &command{
		noArgs: true,
		usage:  "guard watch [--interval D]",
		short:  "keep the files other workers hold read-only in this worktree while it runs (locks.read_only)",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &interval, "interval", "how often to read the lock store again (the file store is also followed as it changes)")
		},
		run: func(ctx context.Context, a *app, _ []string) error {
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			if err := e.Locks().CanWatchReadOnly(interval); err != nil {
				return err
			}
			fmt.Fprintf(a.stdio.Err, "lockgate: keeping held files read-only in %s (every %s; Ctrl-C stops)\n", e.WorkTree(), interval)
			err = e.Locks().WatchReadOnly(ctx, interval, func(res *lockops.ReadOnlySync, err error) {
				if err != nil {
					fmt.Fprintf(a.stdio.Err, "lockgate: warning: %v\n", err)
					return
				}
				if a.globals.JSON && (len(res.ReadOnly) > 0 || len(res.Writable) > 0) {
					_ = writeJSONLine(a.stdio.Out, res)
				}
				for _, p := range res.ReadOnly {
					fmt.Fprintf(a.stdio.Err, "read-only: %s\n", p)
				}
				for _, p := range res.Writable {
					fmt.Fprintf(a.stdio.Err, "writable: %s\n", p)
				}
			})
			if errors.Is(err, lockops.ErrReadOnlyOff) {
				fmt.Fprintf(a.stdio.Err, "lockgate: %v\n", err)
				return nil
			}
			return err
		},
	}
}
