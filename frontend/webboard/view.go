package webboard

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/session"
)

// View is the JSON of one snapshot (GET /board.json, and each event of
// the stream): what the page renders. Its shape is stable: fields are
// added, never renamed or removed. Times are RFC 3339 in UTC; a number of
// seconds left is counted from Now, so a client can count down without
// trusting its own clock.
type View struct {
	Store             string      `json:"store"`
	Now               time.Time   `json:"now"`
	StaleAfterSeconds int64       `json:"stale_after_seconds"`
	Pauses            []PauseView `json:"pauses"`
	Locks             []LockView  `json:"locks"`
	Queue             *QueueView  `json:"queue"` // null: no work packages file
	Events            []EventView `json:"events"`
	// NextCursor is, on a page (?limit=&cursor=), the cursor of the next
	// page of locks; "" after the last, and on the whole board.
	NextCursor string `json:"next_cursor"`
}

// PauseView is a paused feature (a live feature:<id>:pause lock).
type PauseView struct {
	Feature     string    `json:"feature"`
	Key         string    `json:"key"`
	Holder      string    `json:"holder"`
	HolderType  string    `json:"holder_type"`
	Reason      string    `json:"reason"`
	ExpiresAt   time.Time `json:"expires_at"`
	SecondsLeft int64     `json:"seconds_left"`
}

// LockView is one live lock, or a record that could not be read
// (Corrupt: then only Key and Error say anything).
type LockView struct {
	Key string `json:"key"`
	// Branch is the branch a branch lock holds on, "" on every branch.
	Branch      string     `json:"branch"`
	Holder      string     `json:"holder"`
	HolderType  string     `json:"holder_type"`
	Reason      string     `json:"reason"`
	CreatedAt   *time.Time `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at"`
	SecondsLeft int64      `json:"seconds_left"`
	Stale       bool       `json:"stale"`
	Corrupt     bool       `json:"corrupt"`
	Error       string     `json:"error"`
}

// QueueView is the work-package queue: its file, its packages and their
// counts by state, or the problem that keeps it from being shown.
type QueueView struct {
	File     string         `json:"file"`
	Problem  string         `json:"problem"`
	Counts   map[string]int `json:"counts"`
	Packages []PackageView  `json:"packages"`
}

// PackageView is one work package of the queue.
type PackageView struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	State    string   `json:"state"`
	Priority int      `json:"priority"`
	Holder   string   `json:"holder"`
	WaitsFor []string `json:"waits_for"`
	// HeldBy are the live locks of others on a ready package's files
	// and keys: why it waits, as the terminal board says ("held by").
	HeldBy []HoldView `json:"held_by"`
}

// HoldView is a lock in a package's way: its key and holder.
type HoldView struct {
	Key    string `json:"key"`
	Holder string `json:"holder"`
}

// EventView is one of the last events of the journal, oldest first.
type EventView struct {
	Timestamp time.Time `json:"timestamp"`
	Worker    string    `json:"worker"`
	Action    string    `json:"action"`
	Key       string    `json:"key"`
}

// NewView is the JSON of snapshot s. It keeps what `lockgate board` keeps:
// expired locks and finished work packages' records are left out (a
// finished package is a state of the queue, not a lock anyone works
// under), and pauses are listed apart. Locks are in order of expiry.
func NewView(s service.BoardView) View {
	v := View{Store: s.Store, Now: s.Now.UTC(), StaleAfterSeconds: int64(s.StaleAfter / time.Second),
		Pauses: []PauseView{}, Locks: []LockView{}, Events: []EventView{}, NextCursor: s.NextCursor}
	for _, e := range s.Locks {
		if e.Err != nil {
			v.Locks = append(v.Locks, LockView{Key: cmp.Or(e.Key, e.Name), Corrupt: true, Error: e.Err.Error()})
			continue
		}
		if e.Expired(s.Now) || session.IsQueueState(e.Lock) {
			continue
		}
		if lockkey.IsPause(e.Key) {
			v.Pauses = append(v.Pauses, PauseView{Feature: strings.TrimSuffix(strings.TrimPrefix(e.Key, "feature:"), ":pause"),
				Key: e.Key, Holder: e.Holder, HolderType: e.HolderType, Reason: e.Reason,
				ExpiresAt: e.ExpiresAt.UTC(), SecondsLeft: secondsLeft(e.ExpiresAt, s.Now)})
			continue
		}
		v.Locks = append(v.Locks, lockView(e.Lock, s))
	}
	slices.SortStableFunc(v.Locks, func(a, b LockView) int {
		// Corrupt records have no expiry: they come last, by key.
		if a.ExpiresAt == nil || b.ExpiresAt == nil {
			return cmp.Or(cmp.Compare(boolRank(a.ExpiresAt == nil), boolRank(b.ExpiresAt == nil)), strings.Compare(a.Key, b.Key))
		}
		return cmp.Or(a.ExpiresAt.Compare(*b.ExpiresAt), strings.Compare(a.Key, b.Key))
	})
	if s.QueueFile != "" {
		v.Queue = queueView(s)
	}
	for _, ev := range s.Events {
		v.Events = append(v.Events, EventView{Timestamp: ev.Timestamp.UTC(), Worker: ev.Worker, Action: ev.Action, Key: ev.Key})
	}
	return v
}

// boolRank orders false before true.
func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// lockView is the JSON of the live lock l.
func lockView(l locks.Lock, s service.BoardView) LockView {
	created, expires := l.CreatedAt.UTC(), l.ExpiresAt.UTC()
	branch, _, _ := lockkey.SplitBranch(l.Key)
	return LockView{Key: l.Key, Branch: branch, Holder: l.Holder, HolderType: l.HolderType, Reason: l.Reason,
		CreatedAt: &created, ExpiresAt: &expires, SecondsLeft: secondsLeft(l.ExpiresAt, s.Now),
		Stale: l.Stale(s.Now, s.StaleAfter)}
}

// queueView is the JSON of the queue of s, which has a work packages file.
func queueView(s service.BoardView) *QueueView {
	q := &QueueView{File: s.QueueFile, Problem: s.QueueProblem, Counts: map[string]int{}, Packages: []PackageView{}}
	if s.Queue == nil {
		return q
	}
	for state, n := range s.Queue.Counts {
		q.Counts[string(state)] = n
	}
	for _, p := range s.Queue.Packages {
		waits := p.WaitsFor
		if waits == nil {
			// An array in the JSON either way: the page need not test for null.
			waits = []string{}
		}
		held := make([]HoldView, 0, len(p.HeldBy))
		for _, l := range p.HeldBy {
			held = append(held, HoldView{Key: l.Key, Holder: l.Holder})
		}
		q.Packages = append(q.Packages, PackageView{ID: p.ID, Title: p.Title, State: string(p.State), Priority: p.Priority,
			Holder: p.Holder, WaitsFor: waits, HeldBy: held})
	}
	return q
}

// secondsLeft is the whole seconds from now to t, never below zero.
func secondsLeft(t, now time.Time) int64 {
	return max(int64(t.Sub(now)/time.Second), 0)
}
