package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// auditSink records events in the journal and, with workflow.auto_commit,
// commits them to the workflow branch (and pushes with auto_push). The
// journal is the record of truth: a branch that cannot be written is a
// warning, and `lockgate workflow sync` commits what it missed.
type auditSink struct {
	ctx      context.Context
	journal  *journal.Journal
	branch   func() (Branch, error)
	autoPush bool
	notify   func(level, msg string, hints ...string)
	// later, when set, takes the events to the branch instead of branch
	// (the MCP server commits them in the background).
	later func(evs []journal.Event)
	// flushLater, when set, is told that events were written to the
	// journal unflushed, and flushes it (the MCP server, off the call's
	// path).
	flushLater func()
	// quietPush: a push that fails is not warned of here; the command's
	// SettleEvents tries it again and says what is left.
	quietPush bool

	mu sync.Mutex
	// tried: the command pushed (or tried to); unsettled: it did since
	// its last SettleEvents; missed: a commit to the branch failed, its
	// events are in the journal alone.
	tried, unsettled, missed bool
}

// state reports tried, unsettled and missed.
func (s *auditSink) state() (tried, unsettled, missed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tried, s.unsettled, s.missed
}

// Settled notes that SettleEvents took care of what was left.
func (s *auditSink) Settled() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tried, s.unsettled, s.missed = true, false, false
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
		s.mu.Lock()
		s.missed, s.unsettled = true, true
		s.mu.Unlock()
		s.notify("warning", "event kept in the journal, not yet on the workflow branch: "+err.Error(), syncHint(err)...)
		return nil
	}
	catchUp(s.ctx, w, s.journal, s.notify)
	if s.autoPush {
		s.mu.Lock()
		s.tried, s.unsettled = true, true
		s.mu.Unlock()
		if err := w.Push(s.ctx); err != nil && !s.quietPush {
			s.notify("warning", err.Error())
		}
	}
	return nil
}

// catchUp commits the journal's events that did not reach the branch
// when they were recorded — a hook skipped with LOCKGATE_SKIP, a commit
// that failed — so that they go with the next push.
func catchUp(ctx context.Context, w Branch, j *journal.Journal, notify func(level, msg string, hints ...string)) {
	if _, err := w.CatchUp(ctx, j); err != nil {
		notify("warning", "events kept in the journal, not yet on the workflow branch: "+err.Error(), syncHint(err)...)
	}
}

// syncHint is the hint of a commit to the branch that failed with err:
// `workflow sync` commits what is kept, unless err names the command
// that must run first (a branch of an earlier format: sync would fail
// the same way).
func syncHint(err error) []string {
	var named interface{ Resolves() string }
	if errors.As(err, &named) {
		return nil
	}
	return []string{hint.Line(hint.WorkflowSync)}
}

// BranchWriterAction marks the `workflow` lock records of branch writers.
const BranchWriterAction = "workflow"

// BranchWriter opens the workflow branch once per run. Its writes take the
// reserved `workflow` lock, in a session of its own so that they never renew
// or release a `workflow` lock the user holds. The lock only spares
// lockgate's writers from losing compare-and-swaps to each other: the ref
// moves by compare-and-swap whatever happens, so a writer that cannot get
// the lock within a second (someone holds it, or the store is down) writes
// without it rather than wait.
//
// The opener is shared by the copies of a workspace that a server's
// requests work on, at once: it opens the branch once, whichever asks
// first, and every caller gets that writer.
func (e *Workspace) BranchWriter(ctx context.Context) func() (Branch, error) {
	// The writer is closed with the workspace: registered here, by the
	// goroutine that opens the workspace, not by whichever request opens
	// the branch while others copy the workspace.
	var opened atomic.Pointer[Branch]
	e.Closers = append(e.Closers, func() error {
		if w := opened.Load(); w != nil {
			return (*w).Close()
		}
		return nil
	})
	return sync.OnceValues(func() (Branch, error) {
		if e.OpenBranch == nil {
			return nil, ErrNoBranch
		}
		// One owner per process: two commands of one session must not
		// renew (and then release) each other's workflow lock.
		writer := locks.Owner{Holder: e.Me.Holder, HolderType: e.Me.HolderType,
			Session: fmt.Sprintf("%s:workflow-writer:%d", e.Me.Session, e.Mgr.PID)}
		locker := &locks.Manager{Store: e.Store, Host: e.Mgr.Host, PID: e.Mgr.PID, Now: e.Mgr.Now}
		lock := func(ctx context.Context) (func(), error) {
			_, err := locker.Acquire(ctx, locks.Request{Keys: []string{"workflow"}, Owner: writer,
				TTL: 30 * time.Second, Action: BranchWriterAction, Reason: "writing the workflow branch", Wait: time.Second})
			if err != nil {
				return func() {}, nil
			}
			return func() {
				_, _ = locker.Release(context.WithoutCancel(ctx), []string{"workflow"}, writer, false)
			}, nil
		}
		if _, remote := e.Store.(locks.Transactor); remote {
			// The git store's writers are on other machines, whose
			// workflow branches meet only on the remote, where pushes
			// merge them; a lock there would cost two pushes a command
			// and order nothing. The clone's own writers still queue on
			// the branch's file lock.
			lock = nil
		}
		sign, err := e.Signer(ctx)
		if err != nil {
			return nil, err
		}
		w, err := e.OpenBranch(BranchSetup{Lock: lock, Sign: sign, Vouches: e.signsFor(sign)})
		if err != nil {
			return nil, err
		}
		opened.Store(&w)
		return w, nil
	})
}

// Branch is the workflow branch as the audit trail writes it (the
// workflow package's Writer).
type Branch interface {
	// Commit commits events to the branch, each once.
	Commit(ctx context.Context, evs []journal.Event) (int, error)
	// CatchUp commits the journal's events the branch does not have.
	CatchUp(ctx context.Context, j *journal.Journal) (int, error)
	// Push pushes the branch to workflow.remote.
	Push(ctx context.Context) error
	// PushPending pushes when the remote may lack commits of the branch,
	// in up to rounds rounds, and reports whether it pushed.
	PushPending(ctx context.Context, rounds int) (bool, error)
	Close() error
}

// BranchSetup is what the session hands the opener of the workflow branch
// (Workspace.OpenBranch) besides the repository and config: the
// `workflow` lock its writes take (nil: none), the signer of its commits
// (workflow.signed) and which workers' events that signer vouches for.
type BranchSetup struct {
	Lock    func(context.Context) (func(), error)
	Sign    func(ctx context.Context, payload []byte) (string, error)
	Vouches func(worker string) bool
}

// ErrNoBranch says that this binary does not write the workflow branch (the hook
// binary). Events stay in the journal, the record of truth, and the next
// lockgate command that writes the branch commits them.
var ErrNoBranch = errors.New("this lockgate binary does not write the workflow branch: the events stay in the journal until the next `lockgate` command (or `lockgate workflow sync`) commits them")

// PushRounds bounds the rounds of a push of pending events: each is a
// whole push (push, fetch, merge), and a round that fails waits longer
// before the next (the workflow package's PushRounds).
const PushRounds = 5
