package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
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

// settled notes that SettleEvents took care of what was left.
func (s *auditSink) settled() {
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
		s.notify("warning", "event kept in the journal, not yet on the workflow branch: "+err.Error(), hint.Line(hint.WorkflowSync))
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
func catchUp(ctx context.Context, w *workflow.Writer, j *journal.Journal, notify func(level, msg string, hints ...string)) {
	if _, err := w.CatchUp(ctx, j); err != nil {
		notify("warning", "events kept in the journal, not yet on the workflow branch: "+err.Error(), hint.Line(hint.WorkflowSync))
	}
}

// BranchWriterAction marks the `workflow` lock records of branch writers.
const BranchWriterAction = "workflow"

// branchWriter opens the workflow branch once per run. Its writes take the
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
func (e *Workspace) branchWriter(ctx context.Context) func() (*workflow.Writer, error) {
	// The writer is closed with the workspace: registered here, by the
	// goroutine that opens the workspace, not by whichever request opens
	// the branch while others copy the workspace.
	var opened atomic.Pointer[workflow.Writer]
	e.Closers = append(e.Closers, func() error {
		if w := opened.Load(); w != nil {
			return w.Close()
		}
		return nil
	})
	return sync.OnceValues(func() (*workflow.Writer, error) {
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
		sign, err := e.signer(ctx)
		if err != nil {
			return nil, err
		}
		w, err := workflow.Open(workflow.Config{
			GitDir: e.Repo.GitDir, CommonDir: e.Repo.CommonDir, WorkTree: e.Repo.Toplevel, Branch: e.Cfg.Workflow.Branch, Remote: e.Cfg.Workflow.Remote,
			Lock: lock, RotateJournal: int64(e.Cfg.Journal.RotateBytes), Sign: sign, Vouches: e.signsFor(sign),
		})
		if err == nil {
			opened.Store(w)
		}
		return w, err
	})
}

// maxSkipWarnings bounds the journal lines named one by one in warnings.
const maxSkipWarnings = 5

// warnSkipped says which lines of the journal at path were skipped because
// they are not events: the first few by number, then how many more.
func (e *Workspace) warnSkipped(path string, lines []int) {
	for _, line := range lines[:min(len(lines), maxSkipWarnings)] {
		e.warn("warning", fmt.Sprintf("%s:%d is not an event; skipped", path, line))
	}
	if more := len(lines) - maxSkipWarnings; more > 0 {
		e.warn("warning", fmt.Sprintf("%s: … and %d more lines that are not events; skipped", path, more))
	}
}

// warnSkippedLines is warnSkipped for the lines bad names, segment by
// segment of the journal.
func (e *Workspace) warnSkippedLines(bad []*journal.CorruptLineError) {
	var paths []string
	lines := map[string][]int{}
	for _, ce := range bad {
		if _, ok := lines[ce.Path]; !ok {
			paths = append(paths, ce.Path)
		}
		lines[ce.Path] = append(lines[ce.Path], ce.Line)
	}
	for _, p := range paths {
		e.warnSkipped(p, lines[p])
	}
}

// allEvents is every event of the clone at or after since and before
// until (zero: no bound): the workflow branch's (when it can be read)
// and the journal's not on it yet, by time. The branch is read through
// its events cache, which skips the events outside the span unread.
func (e *Workspace) allEvents(ctx context.Context, since, until time.Time) ([]journal.Event, error) {
	evs, _, err := e.readAllEvents(ctx, since, until)
	return evs, err
}

// readAllEvents is allEvents, with the number of events it decoded: from
// the journal (its lines dated before since are not, nor those before the
// sync mark; see recentJournal) and from the branch and its cache.
func (e *Workspace) readAllEvents(ctx context.Context, since, until time.Time) ([]journal.Event, int, error) {
	jr, err := e.recentJournal(ctx, since, 0)
	if err != nil {
		return nil, 0, err
	}
	return e.withBranchEvents(ctx, jr, since, until, workflow.Match{})
}

// journalRead is what recentJournal read of the journal: its events at
// or after since, the lines that are not events, and how many lines were
// decoded. afterSync says that only the lines after the sync mark were
// read, whose earlier ones are on the workflow branch; last are then the
// events of the last lines before the mark.
type journalRead struct {
	since     time.Time
	evs       []journal.Event
	bad       []*journal.CorruptLineError
	decoded   int
	afterSync bool
	last      []journal.Event
}

// recentJournal reads the journal's events at or after since, as
// journal.ReadRecent reads them, for a reader who then reads the
// workflow branch's of that span: only the lines after the mark the last
// catch-up left (workflow.RecentJournalAfterSync), and the events of up
// to last lines before it, when the branch still holds the mark's tip,
// for the lines before the mark are events on the branch; the whole
// journal otherwise. Either way the journal's events and the branch's
// together are the same.
func (e *Workspace) recentJournal(ctx context.Context, since time.Time, last int) (journalRead, error) {
	jr := journalRead{since: since}
	as, ok, err := workflow.RecentJournalAfterSync(ctx, e.workflowReadConfig(), e.branchRef(), e.JournalFile(), since, last)
	if err == nil && ok {
		jr.evs, jr.bad, jr.decoded, jr.afterSync, jr.last = as.Events, as.Bad, as.Decoded, true, as.Last
		return jr, nil
	}
	// A mark that cannot be read from is no answer: the journal whole,
	// which says what is wrong with it, if anything.
	jr.evs, jr.bad, jr.decoded, err = e.JournalFile().ReadRecent(since)
	return jr, err
}

// branchRef is the local workflow branch's full name.
func (e *Workspace) branchRef() string { return "refs/heads/" + e.Cfg.Workflow.Branch }

// workflowReadConfig names the workflow branch's repository to its
// readers.
func (e *Workspace) workflowReadConfig() workflow.Config {
	return workflow.Config{GitDir: e.Repo.GitDir, CommonDir: e.Repo.CommonDir, WorkTree: e.Repo.Toplevel}
}

// withBranchEvents is jr's events at or after from (not before jr.since),
// before until, with the workflow branch's of that span that they lack,
// by time, and the number of events decoded; of the branch's, only
// those m may keep are read (the journal's are all kept). When the
// branch cannot be read and jr holds only the journal after the sync
// mark, the journal is read whole: the events before the mark are the branch's to give. The
// lines of the journal that are not events are warned of.
func (e *Workspace) withBranchEvents(ctx context.Context, jr journalRead, from, until time.Time, m workflow.Match) ([]journal.Event, int, error) {
	lr, err := workflow.ReadEventsMatching(ctx, e.workflowReadConfig(), []string{e.branchRef()}, from, until, m)
	if err != nil && jr.afterSync {
		whole := journalRead{since: jr.since}
		var rerr error
		if whole.evs, whole.bad, whole.decoded, rerr = e.JournalFile().ReadRecent(jr.since); rerr != nil {
			return nil, 0, rerr
		}
		jr = whole
	}
	e.warnSkippedLines(jr.bad)
	evs := jr.evs[:0:0]
	for _, ev := range jr.evs {
		if !ev.Timestamp.Before(from) && (until.IsZero() || ev.Timestamp.Before(until)) {
			evs = append(evs, ev)
		}
	}
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			e.warn("warning", fmt.Sprintf("workflow branch not read: %v", err))
		}
		return evs, jr.decoded + lr.Read, nil
	}
	seen := make(map[string]bool, len(evs))
	for _, ev := range evs {
		seen[ev.ID] = true
	}
	for _, ev := range lr.Events {
		if !seen[ev.ID] {
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
	return evs, jr.decoded + lr.Read, nil
}

// WithRequest makes ctx one request of its own: the lock records and
// events it writes carry a new request id and traceID, the trace of the
// caller ("" none; see TraceID).
func WithRequest(ctx context.Context, traceID string) context.Context {
	return locks.WithAudit(ctx, locks.Audit{RequestID: locks.NewToken()[:16], TraceID: traceID})
}

// SyncRequest is `workflow sync`: push the branch after the commit even
// when workflow.auto_push is off (Push), or not even when it is on
// (NoPush, which wins).
type SyncRequest struct{ Push, NoPush bool }

// Synced is what `workflow sync` did, as its --json shows it: the journal's
// distinct events, those already on the branch, those committed now and in
// how many commits, and whether the branch was pushed (to Remote).
type Synced struct {
	Already   int    `json:"already"`
	Branch    string `json:"branch"`
	Commits   int    `json:"commits"`
	Committed int    `json:"committed"`
	Journal   int    `json:"journal"`
	// Others: events of other workers, left in the journal for them to
	// commit under their own signature (workflow.signed: required).
	Others int    `json:"others,omitempty"`
	Pushed bool   `json:"pushed"`
	Remote string `json:"-"`
}

// SyncWorkflow commits the journal's events that are not on the workflow
// branch yet, and pushes it per workflow.auto_push unless the request says
// otherwise.
func (e *Workspace) SyncWorkflow(ctx context.Context, req SyncRequest) (*Synced, error) {
	w, err := e.branchWriter(ctx)()
	if err != nil {
		return nil, err
	}
	// Whether to push is the request's to say (NoPush), not left to the
	// push of pending events that ends other commands.
	if s, ok := e.pushingSink(); ok {
		s.settled()
	}
	res, err := w.Sync(ctx, e.Journal)
	if err != nil {
		return nil, fmt.Errorf("workflow sync: %w (the events stay in the journal)", err)
	}
	e.warnSkippedLines(res.Corrupt)
	out := &Synced{Already: res.Present, Branch: w.Branch(), Commits: res.Commits, Committed: res.Committed,
		Journal: res.Journal, Others: res.Others, Remote: e.Cfg.Workflow.Remote}
	if (e.Cfg.Workflow.AutoPush || req.Push) && !req.NoPush {
		if err := w.Push(ctx); err != nil {
			return nil, err
		}
		out.Pushed = true
	}
	return out, nil
}
