package service

import (
	"context"
	"time"

	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/workflow"
)

// LogEvent is one lock event as `log` shows it.
type LogEvent = journal.Event

// LogRequest is `log`'s filters: events of the last Since (0: all), at
// or after From and before Until (zero: no bound), before UntilAgo back
// from now (0: no bound), of worker Worker, with action Action, on key
// Key ("" any); of those the newest Limit (0: all).
type LogRequest struct {
	Since               time.Duration
	From, Until         time.Time
	UntilAgo            time.Duration
	Worker, Action, Key string
	Limit               int
}

func (r LogRequest) keep(ev LogEvent) bool {
	return (r.Until.IsZero() || ev.Timestamp.Before(r.Until)) &&
		(r.Worker == "" || ev.Worker == r.Worker) &&
		(r.Action == "" || ev.Action == r.Action) &&
		(r.Key == "" || ev.Key == r.Key)
}

// Log is the clone's lock events r asks for, oldest first: the workflow
// branch's and the journal's. The journal and the branch are files of
// the clone: reading them needs no lock store, which may be down; one is
// opened only to record first what an interrupted command left
// unrecorded.
func (e *Workspace) Log(ctx context.Context, r LogRequest) ([]LogEvent, error) {
	e.RecoverInterrupted(ctx)
	if r.Limit < 0 {
		return nil, Usagef("log: the limit must not be negative")
	}
	if r.Since < 0 || r.UntilAgo < 0 {
		return nil, Usagef("log: --since and --until must not be negative")
	}
	if err := checkLogAction(r.Action); err != nil {
		return nil, err
	}
	from := r.From
	if r.Since > 0 {
		from = maxTime(from, e.Now().Add(-r.Since))
	}
	if r.UntilAgo > 0 {
		if ago := e.Now().Add(-r.UntilAgo); r.Until.IsZero() || ago.Before(r.Until) {
			r.Until = ago
		}
	}
	all, _, err := e.logEvents(ctx, from, r.Until, workflow.Match{Key: r.Key, Worker: r.Worker})
	if err != nil {
		return nil, err
	}
	out := []LogEvent{}
	for _, ev := range all {
		if r.keep(ev) {
			out = append(out, ev)
		}
	}
	if r.Limit > 0 && len(out) > r.Limit {
		out = out[len(out)-r.Limit:]
	}
	return out, nil
}

// maxTime is the later of a and b.
func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// logEvents is readAllEvents for `log`, the branch read narrowed to the
// events of m's key and worker: the blocks of its events cache that name
// neither are not decoded. The answer holds every event of the span m
// keeps, as readAllEvents does, and others besides (the journal's).
func (e *Workspace) logEvents(ctx context.Context, since, until time.Time, m workflow.Match) ([]journal.Event, int, error) {
	jr, err := e.recentJournal(ctx, since, 0)
	if err != nil {
		return nil, 0, err
	}
	return e.withBranchEvents(ctx, jr, since, until, m)
}
