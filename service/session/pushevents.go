package session

import (
	"context"
	"errors"
	"fmt"
)

// A clone's lock events reach other clones (and `lockgate verify`, CI and
// the server's pre-receive) only once its workflow branch is pushed. With
// workflow.auto_push every event is pushed when it is committed; a push
// that loses its race and gives up, a remote that is down, a process
// killed before its push leave commits on the local branch that no push
// sent. They are found by comparing the branch with its remote-tracking
// ref (workflow.Writer.Unpushed: two local refs, no round trip) and
// pushed again:
//
//   - by claim, done, release-package, lock release and work before they
//     exit (SettleEvents): a lost push is tried again in rounds, and what
//     is still not pushed is said;
//   - by the next command that opens the lock store (PushPendingEvents),
//     when it pushed nothing itself;
//   - by pre-push, before the commits it lets out need them
//     (pushBeforeJudging).
//
// Hooks that run on every commit and the guards that run on every edit
// never push.

// EventsState says whether the clone's events are on the remote once a
// request is done.
type EventsState struct {
	// Pushes: the clone pushes its events (workflow.auto_push with
	// auto_commit); when false, the rest says nothing.
	Pushes bool
	// Err, when not nil, is why events of the workflow branch (or of the
	// journal) are not on the remote yet.
	Err error
}

// Pushed reports whether the clone pushes its events and all of them are
// on the remote.
func (s EventsState) Pushed() bool { return s.Pushes && s.Err == nil }

// NotPushedError says that a request's events are not on the remote yet.
type NotPushedError struct {
	Remote, Branch string
	Err            error
}

func (e *NotPushedError) Error() string {
	why := e.Err
	var pe interface{ PushFailure() error } // the workflow branch's PushError
	if errors.As(why, &pe) {
		why = pe.PushFailure() // its own text says what this one says
	}
	return fmt.Sprintf("events not on %s yet (they stay on the local branch %s): %v; `lockgate workflow sync --push` sends them, and so does the next lockgate command here",
		e.Remote, e.Branch, why)
}

func (e *NotPushedError) Unwrap() error { return e.Err }

// PushingSink is the workspace's audit sink when it commits and pushes
// its events itself (not in the background, as a server does).
func (e *Workspace) PushingSink() (*auditSink, bool) {
	if e.Mgr == nil {
		return nil, false
	}
	s, ok := e.Mgr.Events.(*auditSink)
	if !ok || s.branch == nil || !s.autoPush {
		return nil, false
	}
	return s, true
}

// SettleEvents makes sure the events of the request are on the remote
// before it returns: it commits the journal's events a failed commit
// left behind and pushes the workflow branch when it holds commits the
// remote lacks, trying a lost push again (PushRounds rounds,
// each fetching and merging what other clones pushed). Nothing pending
// costs two local ref reads. What it could not push is in the state's
// Err, for the front end to say: the events stay on the branch, and the
// next push sends them.
func (e *Workspace) SettleEvents(ctx context.Context) EventsState {
	s, ok := e.PushingSink()
	if !ok {
		return EventsState{}
	}
	// What is left is the caller's to say, once.
	defer s.Settled()
	st := EventsState{Pushes: true}
	w, err := s.branch()
	if err != nil {
		st.Err = e.notPushed(err)
		return st
	}
	if _, _, missed := s.state(); missed {
		if _, err := w.CatchUp(ctx, s.journal); err != nil {
			st.Err = e.notPushed(err)
			return st
		}
	}
	if _, err := w.PushPending(ctx, PushRounds); err != nil {
		st.Err = e.notPushed(err)
	}
	return st
}

func (e *Workspace) notPushed(err error) error {
	return &NotPushedError{Remote: e.Cfg.Workflow.Remote, Branch: e.Cfg.Workflow.Branch, Err: err}
}

// PushPendingEvents is what a command that opened the lock store does
// last: events of this clone that no push sent (an earlier command's, or
// this one's) go now. A command that settles its events
// (Purpose.Settles) settles what it recorded since it last did, or, when
// it pushed nothing (a claim that found nothing to take), what earlier
// commands left. Any other command pushes what earlier commands left,
// in one round, when it pushed nothing itself: a push of its own sent
// them, or warned. What is left is a warning. Hooks, guards and checks
// (which judge) leave it to the commands that take locks and to
// pre-push: they run on every commit and edit.
func (e *Workspace) PushPendingEvents(ctx context.Context) {
	s, ok := e.PushingSink()
	if !ok || e.Opts.Hook != "" || e.Purpose.Judges || e.Purpose.Cached || e.Purpose.Gate {
		return
	}
	tried, unsettled, missed := s.state()
	if e.Purpose.Settles {
		if unsettled || !tried {
			if st := e.SettleEvents(ctx); st.Err != nil {
				e.Notify("warning", st.Err.Error())
			}
		}
		return
	}
	if tried || missed {
		return
	}
	w, err := s.branch()
	if err != nil {
		return // said when the branch was needed
	}
	if _, err := w.PushPending(ctx, 1); err != nil {
		e.Notify("warning", e.notPushed(err).Error())
	}
}

// pushBeforeJudging is pre-push's: the commits it lets out are verified
// (by CI, by the server's pre-receive) against the events of the remote,
// so events of this clone that no push sent go first, retried as
// SettleEvents retries them. A failure is a warning: the push itself is
// judged as ever.
func (e *Workspace) pushBeforeJudging(ctx context.Context) error {
	if e.OpenBranch == nil && e.Cfg.Workflow.AutoCommit && e.Cfg.Workflow.AutoPush {
		return &NotLinkedError{What: "the push of the workflow branch"}
	}
	s, ok := e.PushingSink()
	if !ok {
		return nil
	}
	w, err := s.branch()
	if f, ok := w.(formatted); err == nil && ok {
		// A branch of format 1 is not written any more: its events
		// would stay in the journal, unpushed. Refuse until it is
		// migrated, rather than push what the lock log lacks.
		if err := f.CheckFormat(ctx); err != nil {
			return err
		}
	}
	if err == nil {
		_, err = w.PushPending(ctx, PushRounds)
	}
	if err != nil {
		e.Notify("warning", e.notPushed(err).Error())
	}
	return nil
}

// formatted is a workflow branch that knows its format (the workflow
// package's Writer).
type formatted interface {
	CheckFormat(ctx context.Context) error
}
