package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lockgate/lockgate/workflow"
	"github.com/lockgate/lockgate/workflow/branch"
)

func mcpCommand() *command {
	return &command{
		usage: "mcp",
		short: "serve the lock API to coding agents as MCP tools over stdio",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return usagef("mcp takes no arguments")
			}
			s, err := a.newMCPService(ctx)
			if err != nil {
				return err
			}
			defer s.stop()
			t := &mcp.IOTransport{Reader: io.NopCloser(a.stdio.In), Writer: nopWriteCloser{a.stdio.Out}}
			if err := s.server().Run(ctx, t); err != nil && ctx.Err() == nil {
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
// the caller's identity and a request id of its own, so calls may run
// concurrently.
type mcpService struct {
	a      *app
	e      *env
	syncer *branchSyncer
}

func (a *app) newMCPService(ctx context.Context) (*mcpService, error) {
	e, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	s := &mcpService{a: a, e: e}
	if sink, ok := e.mgr.Events.(*auditSink); ok && sink.branch != nil {
		// A commit on the workflow branch per tool call would cost more than
		// the call itself: events go to the journal at once and reach the
		// branch in batches, in the background, and when the server stops.
		s.syncer = newBranchSyncer(e, sink.branch, a.stdio.Err)
		sink.branch = nil
		sink.written = s.syncer.kick
	}
	return s, nil
}

func (s *mcpService) stop() {
	if s.syncer != nil {
		s.syncer.close()
	}
}

// call is the env one tool call works on: the server's identity, or the
// one the arguments name when mcp.identity_from_arguments allows it.
func (s *mcpService) call(id identityArgs) (*env, error) {
	me := s.e.me
	if id != (identityArgs{}) {
		if !s.e.cfg.MCP.IdentityFromArguments && (id.Worker != "" && id.Worker != me.Holder ||
			id.WorkerType != "" && id.WorkerType != me.HolderType || id.Session != "" && id.Session != me.Session) {
			return nil, &identityError{me: me}
		}
		me.Holder = firstNonEmpty(id.Worker, me.Holder)
		me.HolderType = firstNonEmpty(id.WorkerType, me.HolderType)
		if id.Session != "" {
			me.Session = sanitizeSession(id.Session)
		}
		if me.HolderType != workflow.HolderHuman && me.HolderType != workflow.HolderAgent {
			return nil, usagef("worker_type %q: want human or agent", me.HolderType)
		}
	}
	ce := *s.e
	m := *s.e.mgr
	m.RequestID = workflow.NewToken()[:16]
	m.EmitErr = nil
	ce.mgr, ce.me, ce.closers = &m, me, nil
	return &ce, nil
}

// identityError refuses a per-call identity the config does not allow.
type identityError struct{ me workflow.Owner }

func (e *identityError) Error() string {
	return fmt.Sprintf("this server acts as %s (%s, session %s); other identities per call need mcp.identity_from_arguments: true in .lockgate.yaml",
		e.me.Holder, e.me.HolderType, e.me.Session)
}

// branchSyncer commits journal events to the workflow branch in the
// background: kicked after each event, it waits a moment so that a burst
// of calls makes one commit.
type branchSyncer struct {
	e     *env
	warn  io.Writer
	kicks chan struct{}
	done  chan struct{}
}

// branchOpener opens the workflow branch once and returns it after.
type branchOpener = func() (*branch.Writer, error)

const syncDelay = 200 * time.Millisecond

func newBranchSyncer(e *env, open branchOpener, warn io.Writer) *branchSyncer {
	s := &branchSyncer{e: e, warn: warn, kicks: make(chan struct{}, 1), done: make(chan struct{})}
	go s.loop(open)
	return s
}

func (s *branchSyncer) kick() {
	select {
	case s.kicks <- struct{}{}:
	default:
	}
}

func (s *branchSyncer) loop(open branchOpener) {
	defer close(s.done)
	stopping := false
	for !stopping {
		_, ok := <-s.kicks
		if !ok {
			stopping = true
		} else {
			time.Sleep(syncDelay)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		s.sync(ctx, open)
		cancel()
	}
}

func (s *branchSyncer) sync(ctx context.Context, open branchOpener) {
	w, err := open()
	if err == nil {
		_, err = w.Sync(ctx, s.e.journal)
	}
	if err != nil {
		fmt.Fprintf(s.warn, "lockgate: warning: events kept in the journal, not yet on the workflow branch: %v\nhint: `lockgate workflow sync` commits them\n", err)
		return
	}
	if s.e.cfg.Workflow.AutoPush {
		if err := w.Push(ctx); err != nil {
			fmt.Fprintf(s.warn, "lockgate: warning: %v\n", err)
		}
	}
}

// close makes the last sync and waits for it.
func (s *branchSyncer) close() {
	close(s.kicks)
	<-s.done
}
