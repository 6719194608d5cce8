package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/journal"
	"github.com/lockgate/lockgate/workflow"
)

// auditSink records events in the journal and, with workflow.auto_commit,
// commits them to the workflow branch (and pushes with auto_push). The
// journal is the record of truth: a branch that cannot be written is a
// warning, and `lockgate workflow sync` commits what it missed.
type auditSink struct {
	ctx      context.Context
	journal  *journal.Journal
	branch   func() (*workflow.Writer, error)
	autoPush bool
	warn     io.Writer
	// syncHint is the WorkflowSync hint, with this command's options.
	syncHint string
	// later, when set, takes the events to the branch instead of branch
	// (the MCP server commits them in the background).
	later func(evs []journal.Event)
	// flushLater, when set, is told that events were written to the
	// journal unflushed, and flushes it (the MCP server, off the call's
	// path).
	flushLater func()
}

// Intend writes a change down before it is made (see locks.EventSink),
// flushed to disk unless the journal is flushed later.
func (s *auditSink) Intend(data []byte) (*journal.Intent, error) {
	if s.flushLater != nil {
		return s.journal.IntendWritten(data)
	}
	return s.journal.Intend(data)
}

// Recover records what interrupted commands did but did not record.
func (s *auditSink) Recover(settle func(data []byte) ([]journal.Event, error)) error {
	return s.journal.Recover(settle)
}

func (s *auditSink) Append(evs ...journal.Event) error {
	if s.flushLater != nil {
		if err := s.journal.AppendWritten(evs...); err != nil {
			return err
		}
		s.flushLater()
	} else if err := s.journal.Append(evs...); err != nil {
		return err
	}
	if s.later != nil {
		s.later(evs)
	}
	if s.branch == nil {
		return nil
	}
	w, err := s.branch()
	if err == nil {
		_, err = w.Commit(s.ctx, evs)
	}
	if err != nil {
		fmt.Fprintf(s.warn, "lockgate: warning: event kept in the journal, not yet on the workflow branch: %s\n", safetext.Text(err.Error()))
		hint.Print(s.warn, s.syncHint)
		return nil
	}
	if s.autoPush {
		if err := w.Push(s.ctx); err != nil {
			fmt.Fprintf(s.warn, "lockgate: warning: %v\n", err)
		}
	}
	return nil
}

// branchWriterAction marks the `workflow` lock records of branch writers.
const branchWriterAction = "workflow"

// branchWriter opens the workflow branch once per run. Its writes take the
// reserved `workflow` lock, in a session of its own so that they never renew
// or release a `workflow` lock the user holds. The lock only spares
// lockgate's writers from losing compare-and-swaps to each other: the ref
// moves by compare-and-swap whatever happens, so a writer that cannot get
// the lock within a second (someone holds it, or the store is down) writes
// without it rather than wait.
func (a *app) branchWriter(ctx context.Context, e *env) func() (*workflow.Writer, error) {
	var w *workflow.Writer
	var openErr error
	opened := false
	return func() (*workflow.Writer, error) {
		if opened {
			return w, openErr
		}
		opened = true
		// One owner per process: two commands of one session must not
		// renew (and then release) each other's workflow lock.
		writer := locks.Owner{Holder: e.me.Holder, HolderType: e.me.HolderType,
			Session: fmt.Sprintf("%s:workflow-writer:%d", e.me.Session, e.mgr.PID)}
		locker := &locks.Manager{Store: e.store, Host: e.mgr.Host, PID: e.mgr.PID}
		w, openErr = workflow.Open(workflow.Config{
			GitDir: e.repo.GitDir, CommonDir: e.repo.CommonDir, WorkTree: e.repo.Toplevel, Branch: e.cfg.Workflow.Branch, Remote: e.cfg.Workflow.Remote,
			Lock: func(ctx context.Context) (func(), error) {
				_, err := locker.Acquire(ctx, locks.Request{Keys: []string{"workflow"}, Owner: writer,
					TTL: 30 * time.Second, Action: branchWriterAction, Reason: "writing the workflow branch", Wait: time.Second})
				if err != nil {
					return func() {}, nil
				}
				return func() {
					_, _ = locker.Release(context.WithoutCancel(ctx), []string{"workflow"}, writer, false)
				}, nil
			},
		})
		if openErr == nil {
			e.closers = append(e.closers, w.Close)
		}
		return w, openErr
	}
}

func workflowCommand() *command {
	return &command{usage: "workflow <command>", sub: map[string]*command{
		"sync": workflowSyncCommand(),
	}}
}

func workflowSyncCommand() *command {
	var push, noPush bool
	return &command{
		usage: "workflow sync [--push | --no-push]",
		short: "commit journal events not yet on the workflow branch (and push per workflow.auto_push)",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&push, "push", false, "push the branch even when workflow.auto_push is off")
			fs.BoolVar(&noPush, "no-push", false, "do not push, whatever workflow.auto_push says")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return usagef("workflow sync takes no arguments")
			}
			if push && noPush {
				return usagef("workflow sync: --push and --no-push contradict each other")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			w, err := a.branchWriter(ctx, e)()
			if err != nil {
				return err
			}
			res, err := w.Sync(ctx, e.journal)
			if err != nil {
				return fmt.Errorf("workflow sync: %w (the events stay in the journal)", err)
			}
			a.warnSkipped(e.journal.Path(), res.Corrupt)
			pushed := false
			if (e.cfg.Workflow.AutoPush || push) && !noPush {
				if err := w.Push(ctx); err != nil {
					return err
				}
				pushed = true
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, map[string]any{"branch": w.Branch(), "journal": res.Journal,
					"already": res.Present, "committed": res.Committed, "commits": res.Commits, "pushed": pushed})
			}
			fmt.Fprintf(a.stdio.Err, "%s: %d events committed (%d already there)", w.Branch(), res.Committed, res.Present)
			if pushed {
				fmt.Fprintf(a.stdio.Err, "; pushed to %s", e.cfg.Workflow.Remote)
			}
			fmt.Fprintln(a.stdio.Err)
			return nil
		},
	}
}

// maxSkipWarnings bounds the journal lines named one by one in warnings.
const maxSkipWarnings = 5

// warnSkipped says which lines of the journal at path were skipped because
// they are not events: the first few by number, then how many more.
func (a *app) warnSkipped(path string, lines []int) {
	for _, line := range lines[:min(len(lines), maxSkipWarnings)] {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s:%d is not an event; skipped\n", path, line)
	}
	if more := len(lines) - maxSkipWarnings; more > 0 {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: %s: … and %d more lines that are not events; skipped\n", path, more)
	}
}

// allEvents is every event of the clone: the workflow branch (when it can
// be read) and the journal events not on it yet, by time.
func (a *app) allEvents(ctx context.Context, e *env, since time.Time) ([]journal.Event, error) {
	evs, skipped, err := e.journalFile().ReadSkipping(since)
	if err != nil {
		return nil, err
	}
	lines := make([]int, len(skipped))
	for i, ce := range skipped {
		lines[i] = ce.Line
	}
	a.warnSkipped(e.journalFile().Path(), lines)
	w, err := workflow.Open(workflow.Config{GitDir: e.repo.GitDir, CommonDir: e.repo.CommonDir, WorkTree: e.repo.Toplevel, Branch: e.cfg.Workflow.Branch, Remote: e.cfg.Workflow.Remote})
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			fmt.Fprintf(a.stdio.Err, "lockgate: warning: workflow branch not read: %v\n", err)
		}
		return evs, nil
	}
	defer w.Close()
	onBranch, err := w.Events(ctx)
	if err != nil {
		fmt.Fprintf(a.stdio.Err, "lockgate: warning: workflow branch not read: %v\n", err)
		return evs, nil
	}
	seen := make(map[string]bool, len(evs))
	for _, ev := range evs {
		seen[ev.ID] = true
	}
	for _, ev := range onBranch {
		if !seen[ev.ID] && !ev.Timestamp.Before(since) {
			seen[ev.ID] = true
			evs = append(evs, ev)
		}
	}
	slices.SortStableFunc(evs, func(x, y journal.Event) int {
		if c := x.Timestamp.Compare(y.Timestamp); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return evs, nil
}
