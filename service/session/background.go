package session

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/scope"
)

// Identity names who one request acts as; empty fields keep the
// workspace's.
type Identity struct{ Worker, WorkerType, Session string }

// ActAs is the workspace one request of a server works on: the server's
// identity, or the one the request names when mcp.identity_from_arguments
// allows it. The copy shares the server's store, journal and Manager.
func (e *Workspace) ActAs(id Identity) (*Workspace, error) {
	me := e.Me
	if id != (Identity{}) {
		if !e.Cfg.MCP.IdentityFromArguments && (id.Worker != "" && id.Worker != me.Holder ||
			id.WorkerType != "" && id.WorkerType != me.HolderType || id.Session != "" && id.Session != me.Session) {
			return nil, &IdentityError{Me: me}
		}
		// Another worker without a session acts in its own, named after
		// it, as on the command line.
		if id.Worker != "" && id.Worker != me.Holder {
			me.Holder, me.Session = id.Worker, id.Worker
		}
		me.HolderType = cmp.Or(id.WorkerType, me.HolderType)
		if me.HolderType != scope.WorkerHuman && me.HolderType != scope.WorkerAgent {
			return nil, Usagef("worker_type %q: want human or agent", me.HolderType)
		}
		var err error
		if me, err = NewOwner(cmp.Or(id.Worker, me.Holder), me.HolderType, cmp.Or(id.Session, me.Session)); err != nil {
			return nil, err
		}
	}
	ce := *e
	ce.Me, ce.Closers = me, nil
	return &ce, nil
}

// IdentityError refuses a per-request identity the config does not allow.
type IdentityError struct{ Me locks.Owner }

func (e *IdentityError) Error() string {
	return fmt.Sprintf("this server acts as %s (%s, session %s); other identities per call need mcp.identity_from_arguments: true in .lockgate.yaml",
		e.Me.Holder, e.Me.HolderType, e.Me.Session)
}

// wakeup wakes a goroutine that works in the background: a kick while
// it works makes one more round after it (kicks do not queue up), and
// close ends its loop and waits for its last round. Once closed, a call
// that outlived the loop does its work itself.
type wakeup struct {
	mu     sync.Mutex // guards closed, and what the owner keeps with it
	closed bool
	kicks  chan struct{}
	done   chan struct{} // closed when the loop has ended
}

func newWakeup() wakeup {
	return wakeup{kicks: make(chan struct{}, 1), done: make(chan struct{})}
}

// kickLocked wakes the loop, with mu held.
func (w *wakeup) kickLocked() {
	select {
	case w.kicks <- struct{}{}:
	default:
	}
}

// close ends the loop and waits for its last round.
func (w *wakeup) close() {
	w.mu.Lock()
	w.closed = true
	close(w.kicks)
	w.mu.Unlock()
	<-w.done
}

// branchSyncer commits the server's events to the workflow branch in the
// background: a burst of calls makes one commit, a moment after it.
type branchSyncer struct {
	wakeup
	e       *Workspace
	open    branchOpener
	notify  func(level, msg string, hints ...string)
	pending []journal.Event // guarded by mu
}

// branchOpener opens the workflow branch once and returns it after.
type branchOpener = func() (Branch, error)

const syncDelay = 200 * time.Millisecond

func newBranchSyncer(e *Workspace, open branchOpener) *branchSyncer {
	s := &branchSyncer{wakeup: newWakeup(), e: e, open: open, notify: e.Notify}
	go s.loop()
	return s
}

// add queues events that are already in the journal.
func (s *branchSyncer) add(evs []journal.Event) {
	s.mu.Lock()
	if s.closed { // a call that outlived the server's loop
		s.mu.Unlock()
		s.commit(evs)
		return
	}
	s.pending = append(s.pending, evs...)
	s.kickLocked()
	s.mu.Unlock()
}

func (s *branchSyncer) loop() {
	defer close(s.done)
	for {
		_, ok := <-s.kicks
		if ok {
			time.Sleep(syncDelay)
		}
		s.mu.Lock()
		batch := s.pending
		s.pending = nil
		s.mu.Unlock()
		if len(batch) > 0 {
			s.commit(batch)
		}
		if !ok {
			return
		}
	}
}

func (s *branchSyncer) commit(evs []journal.Event) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := s.open()
	if err == nil {
		_, err = w.Commit(ctx, evs)
	}
	if err != nil {
		s.notify("warning", fmt.Sprintf("%d events kept in the journal, not yet on the workflow branch: %s", len(evs), err), syncHint(err)...)
		return
	}
	catchUp(ctx, w, s.e.Journal, s.notify)
	if s.e.Cfg.Workflow.AutoPush {
		if err := w.Push(ctx); err != nil {
			s.notify("warning", err.Error())
		}
	}
}

// journalFlusher flushes the journal to disk whenever it is kicked; kicks
// that come while a flush runs make one more flush after it.
type journalFlusher struct {
	wakeup
	j      *journal.Journal
	notify func(level, msg string, hints ...string)
}

func newJournalFlusher(j *journal.Journal, notify func(level, msg string, hints ...string)) *journalFlusher {
	f := &journalFlusher{wakeup: newWakeup(), j: j, notify: notify}
	go func() {
		defer close(f.done)
		for range f.kicks {
			f.flush()
		}
		f.flush()
	}()
	return f
}

func (f *journalFlusher) flush() {
	if err := f.j.Sync(); err != nil {
		f.notify("warning", err.Error())
	}
}

func (f *journalFlusher) kick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed { // a call that outlived the server's loop
		f.flush()
		return
	}
	f.kickLocked()
}

// Background paces the workspace's audit trail for a server that answers
// many requests: a request is done once its events are written to the
// journal, where they survive the process; the flush to disk starts at
// once, beside the next request rather than in front of it; and events
// reach the workflow branch in batches (CommitInBackground). stop commits
// and flushes what is left and waits for it.
func (e *Workspace) Background() (stop func()) {
	sink := e.AuditSink()
	if sink == nil {
		return func() {}
	}
	flusher := newJournalFlusher(e.Journal, e.Notify)
	sink.flushLater = flusher.kick
	commits := e.CommitInBackground()
	return func() {
		commits()
		flusher.close()
	}
}

// CommitInBackground takes the workspace's events to the workflow branch
// in batches, a moment after a burst of requests, instead of a commit in
// each request (the commit costs more than the request: git processes).
// A request is done once its events are in the journal, flushed to disk
// as a command flushes them; what the branch has not got yet is in the
// journal, which the next commit catches up (as `lockgate workflow sync`
// does). stop commits what is left and waits for it.
func (e *Workspace) CommitInBackground() (stop func()) {
	sink := e.AuditSink()
	if sink == nil || sink.branch == nil {
		return func() {}
	}
	syncer := newBranchSyncer(e, sink.branch)
	sink.branch = nil
	sink.later = syncer.add
	return syncer.close
}

// AuditSink is the workspace's audit trail, nil when it keeps none (not
// opened).
func (e *Workspace) AuditSink() *auditSink {
	if e.Mgr == nil {
		return nil
	}
	sink, _ := e.Mgr.Events.(*auditSink)
	return sink
}
