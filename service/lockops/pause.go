package lockops

import (
	"context"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// PauseKey maps FEATURE (an id, or a whole feature:<id>:pause key) to its
// pause lock.
func (e *Handler) PauseKey(feature string) (string, error) {
	s := feature
	if !strings.HasPrefix(s, "feature:") {
		s = lockkey.PauseKey(feature)
	}
	k, err := lockkey.Parse(s, e.KeyOptions())
	if err != nil {
		return "", err
	}
	if !lockkey.IsPause(k.Canonical) {
		return "", session.Usagef("%s is not a pause lock: want FEATURE or feature:<id>:pause", feature)
	}
	return k.Canonical, nil
}

// PauseState is a feature's pause, as `pause status --json` shows it.
type PauseState struct {
	Feature string            `json:"feature"`
	Key     string            `json:"key"`
	Paused  bool              `json:"paused"`
	Mine    bool              `json:"mine"`
	Lock    *session.LockView `json:"lock,omitempty"`
}

// Blocks reports whether the pause stops the worker: another holds it.
func (s PauseState) Blocks() bool { return s.Paused && !s.Mine }

// PauseStatusRequest names the feature whose pause is asked about: an id,
// or its whole feature:<id>:pause key.
type PauseStatusRequest struct{ Feature string }

// PauseStatus is whether a feature is paused, and by whom.
func (e *Handler) PauseStatus(ctx context.Context, req PauseStatusRequest) (PauseState, error) {
	key, err := e.PauseKey(req.Feature)
	if err != nil {
		return PauseState{}, err
	}
	sts, err := e.Mgr.Check(ctx, []string{key}, e.Me)
	if err != nil {
		return PauseState{}, err
	}
	st := PauseState{Feature: req.Feature, Key: key}
	if s := sts[0]; s.State != locks.StateFree {
		l := session.ViewOf(s.Locks[0])
		st.Paused, st.Mine, st.Lock = true, s.State == locks.StateMine, &l
	}
	return st, nil
}

// PauseWaitRequest is `pause wait`: the feature, how long to wait at most
// (0 or less: as long as it takes) and Waiting, told once, when the wait begins,
// what the worker waits for (nil: nobody is told).
type PauseWaitRequest struct {
	Feature string
	Timeout time.Duration
	Waiting func(PauseState)
}

// PauseWait is how a wait for a pause ended: the state seen last, and
// whether the timeout passed while another still held the pause.
type PauseWait struct {
	State    PauseState
	TimedOut bool
}

// Polling bounds of WaitPause: a pause lifted is seen within the first few
// polls, and a long one costs the store two reads a second.
const (
	firstPoll = 10 * time.Millisecond
	maxPoll   = 500 * time.Millisecond
)

// WaitPause waits until the feature is not paused by another (or the
// timeout passes), polling the store more slowly as the wait goes on.
func (e *Handler) WaitPause(ctx context.Context, req PauseWaitRequest) (PauseWait, error) {
	start := e.Now()
	poll := firstPoll
	for announced := false; ; announced = true {
		st, err := e.PauseStatus(ctx, PauseStatusRequest{Feature: req.Feature})
		if err != nil || !st.Blocks() {
			return PauseWait{State: st}, err
		}
		if !announced && req.Waiting != nil {
			req.Waiting(st)
		}
		waited := e.Now().Sub(start)
		if req.Timeout > 0 && waited >= req.Timeout {
			return PauseWait{State: st, TimedOut: true}, nil
		}
		sleep := poll
		if req.Timeout > 0 {
			sleep = min(sleep, req.Timeout-waited)
		}
		select {
		case <-ctx.Done():
			return PauseWait{State: st}, ctx.Err()
		case <-time.After(max(sleep, time.Millisecond)):
		}
		poll = min(poll*2, maxPoll)
	}
}

// PauseRequest is `pause FEATURE`: the feature, why the line stops (shown
// to every worker) and for how long (0: by worker type; pausing again
// never shortens a pause, unless TTL says so).
type PauseRequest struct {
	Feature, Reason string
	TTL             time.Duration
}

// Pause stops the line for a feature: it takes feature:<id>:pause.
func (e *Handler) Pause(ctx context.Context, req PauseRequest) ([]locks.Result, error) {
	key, err := e.PauseKey(req.Feature)
	if err != nil {
		return nil, err
	}
	ttl, exact := req.TTL, req.TTL > 0
	if !exact {
		ttl = e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask)
	}
	return e.Mgr.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: e.Me, TTL: ttl,
		Reason: req.Reason, Action: "pause", EventAction: journal.ActionPause, ExactTTL: exact})
}

// UnpauseRequest is `unpause FEATURE`: the feature, and whether another
// worker's pause is released too (Force, logged).
type UnpauseRequest struct {
	Feature string
	Force   bool
}

// Unpause releases a feature's pause.
func (e *Handler) Unpause(ctx context.Context, req UnpauseRequest) (locks.ReleaseResult, error) {
	key, err := e.PauseKey(req.Feature)
	if err != nil {
		return locks.ReleaseResult{}, err
	}
	ev := journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session, Action: journal.ActionUnpause, Key: key}
	if req.Force {
		return e.Mgr.ReleaseChecked(ctx, []string{key}, e.Me, e.ForceCheck(ctx), ev)
	}
	return e.Mgr.Release(ctx, []string{key}, e.Me, false, ev)
}
