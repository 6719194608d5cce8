package service

import (
	"context"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// PauseKey maps FEATURE (an id, or a whole feature:<id>:pause key) to its
// pause lock.
func (e *Workspace) PauseKey(feature string) (string, error) {
	s := feature
	if !strings.HasPrefix(s, "feature:") {
		s = lockkey.PauseKey(feature)
	}
	k, err := lockkey.Parse(s, e.KeyOptions())
	if err != nil {
		return "", err
	}
	if !lockkey.IsPause(k.Canonical) {
		return "", Usagef("%s is not a pause lock: want FEATURE or feature:<id>:pause", feature)
	}
	return k.Canonical, nil
}

// PauseState is a feature's pause, as `pause status --json` shows it.
type PauseState struct {
	Feature string    `json:"feature"`
	Key     string    `json:"key"`
	Paused  bool      `json:"paused"`
	Mine    bool      `json:"mine"`
	Lock    *LockView `json:"lock,omitempty"`
}

// PauseStatus is whether feature is paused, and by whom.
func (e *Workspace) PauseStatus(ctx context.Context, feature string) (PauseState, error) {
	key, err := e.PauseKey(feature)
	if err != nil {
		return PauseState{}, err
	}
	sts, err := e.Mgr.Check(ctx, []string{key}, e.Me)
	if err != nil {
		return PauseState{}, err
	}
	st := PauseState{Feature: feature, Key: key}
	if s := sts[0]; s.State != locks.StateFree {
		l := ViewOf(s.Locks[0])
		st.Paused, st.Mine, st.Lock = true, s.State == locks.StateMine, &l
	}
	return st, nil
}

// Pause stops the line for feature: it takes feature:<id>:pause for ttl
// (0: by worker type; pausing again never shortens a pause, unless ttl
// says so), with the reason every worker is shown.
func (e *Workspace) Pause(ctx context.Context, feature, reason string, ttl time.Duration) ([]locks.Result, error) {
	key, err := e.PauseKey(feature)
	if err != nil {
		return nil, err
	}
	exact := ttl > 0
	if ttl <= 0 {
		ttl = e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask)
	}
	return e.Mgr.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: e.Me, TTL: ttl,
		Reason: reason, Action: "pause", EventAction: journal.ActionPause, ExactTTL: exact})
}

// Unpause releases feature's pause: the worker's own, or with force
// another's (logged).
func (e *Workspace) Unpause(ctx context.Context, feature string, force bool) (locks.ReleaseResult, error) {
	key, err := e.PauseKey(feature)
	if err != nil {
		return locks.ReleaseResult{}, err
	}
	return e.Mgr.Release(ctx, []string{key}, e.Me, force,
		journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
			Action: journal.ActionUnpause, Key: key})
}
