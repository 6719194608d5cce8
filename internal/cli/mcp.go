package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/journal"
	"github.com/lockgate/lockgate/scope"
	"github.com/lockgate/lockgate/workflow"
)

func mcpCommand() *command {
	return &command{
		takesLocks: true,
		usage:      "mcp",
		short:      "serve the lock API to coding agents as MCP tools over stdio",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return usagef("mcp takes no arguments")
			}
			if getenv("GOGC") == "" {
				// A long-lived server with a few MB of live heap would collect
				// every few calls at the default; a larger step costs little
				// memory and a good part of each call's time.
				debug.SetGCPercent(400)
			}
			a.server = true
			s, err := a.newMCPService(ctx)
			if err != nil {
				return err
			}
			defer s.stop()
			t := &mcp.IOTransport{Reader: io.NopCloser(a.stdio.In), Writer: nopWriteCloser{a.stdio.Out},
				MaxLineLength: maxMCPMessage}
			if err := s.server(ctx).Run(ctx, t); err != nil && ctx.Err() == nil {
				return fmt.Errorf("mcp: %w", err)
			}
			return nil
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpService answers the MCP tools of one server process. Its env (config,
// store, journal) is opened once; each call works on a copy that carries
// the caller's identity (its request id is in the call's context), so
// calls may run concurrently.
type mcpService struct {
	a       *app
	e       *env
	syncer  *branchSyncer
	flusher *journalFlusher
}

func (a *app) newMCPService(ctx context.Context) (*mcpService, error) {
	e, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	s := &mcpService{a: a, e: e}
	sink, ok := e.mgr.Events.(*auditSink)
	if !ok {
		return s, nil
	}
	// A call answers once its events are written to the journal, where
	// they survive this process; the flush to disk starts at once, beside
	// the next call rather than in front of it.
	s.flusher = newJournalFlusher(e.journal, a.stdio.Err)
	sink.flushLater = s.flusher.kick
	if sink.branch != nil {
		// A commit on the workflow branch per tool call would cost more than
		// the call itself: events go to the journal at once and reach the
		// branch in batches, in the background, and when the server stops.
		s.syncer = newBranchSyncer(e, sink.branch, a.stdio.Err)
		sink.branch = nil
		sink.later = s.syncer.add
	}
	return s, nil
}

func (s *mcpService) stop() {
	if s.syncer != nil {
		s.syncer.close()
	}
	if s.flusher != nil {
		s.flusher.close()
	}
}

// maxMCPMessage bounds one message from the client (a tool call and its
// arguments); a longer one ends the session with an error.
const maxMCPMessage = 16 << 20

// call is the env one tool call works on: the server's identity, or the
// one the arguments name when mcp.identity_from_arguments allows it.
func (s *mcpService) call(id identityArgs) (*env, error) {
	me := s.e.me
	if id != (identityArgs{}) {
		if !s.e.cfg.MCP.IdentityFromArguments && (id.Worker != "" && id.Worker != me.Holder ||
			id.WorkerType != "" && id.WorkerType != me.HolderType || id.Session != "" && id.Session != me.Session) {
			return nil, &identityError{me: me}
		}
		// Another worker without a session acts in its own, named after
		// it, as on the command line.
		if id.Worker != "" && id.Worker != me.Holder {
			me.Holder, me.Session = id.Worker, id.Worker
		}
		me.HolderType = firstNonEmpty(id.WorkerType, me.HolderType)
		if me.HolderType != scope.WorkerHuman && me.HolderType != scope.WorkerAgent {
			return nil, usagef("worker_type %q: want human or agent", me.HolderType)
		}
		var err error
		if me, err = newOwner(firstNonEmpty(id.Worker, me.Holder), me.HolderType, firstNonEmpty(id.Session, me.Session)); err != nil {
			return nil, err
		}
	}
	ce := *s.e
	ce.me, ce.closers = me, nil
	return &ce, nil
}

// identityError refuses a per-call identity the config does not allow.
type identityError struct{ me locks.Owner }

func (e *identityError) Error() string {
	return fmt.Sprintf("this server acts as %s (%s, session %s); other identities per call need mcp.identity_from_arguments: true in .lockgate.yaml",
		e.me.Holder, e.me.HolderType, e.me.Session)
}

// branchSyncer commits the server's events to the workflow branch in the
// background: a burst of calls makes one commit, a moment after it.
type branchSyncer struct {
	e       *env
	open    branchOpener
	warn    io.Writer
	mu      sync.Mutex
	pending []journal.Event
	closed  bool
	kicks   chan struct{}
	done    chan struct{}
}

// branchOpener opens the workflow branch once and returns it after.
type branchOpener = func() (*workflow.Writer, error)

const syncDelay = 200 * time.Millisecond

func newBranchSyncer(e *env, open branchOpener, warn io.Writer) *branchSyncer {
	s := &branchSyncer{e: e, open: open, warn: warn, kicks: make(chan struct{}, 1), done: make(chan struct{})}
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
	select {
	case s.kicks <- struct{}{}:
	default:
	}
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
		fmt.Fprintf(s.warn, "lockgate: warning: %d events kept in the journal, not yet on the workflow branch: %s\n", len(evs), safetext.Text(err.Error()))
		hint.Print(s.warn, hint.Line(hint.WorkflowSync))
		return
	}
	if s.e.cfg.Workflow.AutoPush {
		if err := w.Push(ctx); err != nil {
			fmt.Fprintf(s.warn, "lockgate: warning: %v\n", err)
		}
	}
}

// close commits what is left and waits for it.
func (s *branchSyncer) close() {
	s.mu.Lock()
	s.closed = true
	close(s.kicks)
	s.mu.Unlock()
	<-s.done
}

// journalFlusher flushes the journal to disk whenever it is kicked; kicks
// that come while a flush runs make one more flush after it.
type journalFlusher struct {
	j      *journal.Journal
	warn   io.Writer
	mu     sync.Mutex
	closed bool
	kicks  chan struct{}
	done   chan struct{}
}

func newJournalFlusher(j *journal.Journal, warn io.Writer) *journalFlusher {
	f := &journalFlusher{j: j, warn: warn, kicks: make(chan struct{}, 1), done: make(chan struct{})}
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
		fmt.Fprintf(f.warn, "lockgate: warning: %v\n", err)
	}
}

func (f *journalFlusher) kick() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed { // a call that outlived the server's loop
		f.flush()
		return
	}
	select {
	case f.kicks <- struct{}{}:
	default:
	}
}

// close makes the last flush and waits for it.
func (f *journalFlusher) close() {
	f.mu.Lock()
	f.closed = true
	close(f.kicks)
	f.mu.Unlock()
	<-f.done
}
