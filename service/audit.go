package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/workflow"
)

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
	return workflow.Config{GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree()}
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
	e.WarnSkippedLines(jr.bad)
	evs := jr.evs[:0:0]
	for _, ev := range jr.evs {
		if !ev.Timestamp.Before(from) && (until.IsZero() || ev.Timestamp.Before(until)) {
			evs = append(evs, ev)
		}
	}
	if err != nil {
		if !errors.Is(err, context.Canceled) {
			e.Warn("warning", fmt.Sprintf("workflow branch not read: %v", err))
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
	w, err := e.requestedBranch(ctx)
	if err != nil {
		return nil, err
	}
	res, err := w.Sync(ctx, e.Journal)
	if err != nil {
		return nil, fmt.Errorf("workflow sync: %w (the events stay in the journal)", err)
	}
	e.WarnSkippedLines(res.Corrupt)
	out := &Synced{Already: res.Present, Branch: w.Branch(), Commits: res.Commits, Committed: res.Committed,
		Journal: res.Journal, Others: res.Others, Remote: e.Cfg.Workflow.Remote}
	if out.Pushed, err = e.pushAsked(ctx, w, req); err != nil {
		return nil, err
	}
	return out, nil
}

// requestedBranch opens the workflow branch for a command that says
// itself whether to push (SyncRequest), not left to the push of pending
// events that ends other commands.
func (e *Workspace) requestedBranch(ctx context.Context) (*workflow.Writer, error) {
	w, err := e.branchWriter(ctx)
	if err != nil {
		return nil, err
	}
	if s, ok := e.PushingSink(); ok {
		s.Settled()
	}
	return w, nil
}

// pushAsked pushes w per workflow.auto_push unless req says otherwise,
// and reports whether it pushed.
func (e *Workspace) pushAsked(ctx context.Context, w *workflow.Writer, req SyncRequest) (bool, error) {
	if (!e.Cfg.Workflow.AutoPush && !req.Push) || req.NoPush {
		return false, nil
	}
	if err := w.Push(ctx); err != nil {
		return false, err
	}
	return true, nil
}

// Migrated says what `lockgate workflow migrate` did.
type Migrated struct {
	Branch string `json:"branch"`
	// Base is the format-1 tip the migration commit holds the events
	// of; "" when there was nothing to migrate.
	Base string `json:"base,omitempty"`
	// Merged is the remote's branch, moved to format 2 by another clone,
	// that the local one took instead of moving a second time; Merge is
	// the merge commit that joined the local branch's own commits to it
	// ("" for a fast-forward).
	Merged string `json:"merged,omitempty"`
	Merge  string `json:"merge,omitempty"`
	Pushed bool   `json:"pushed"`
	Remote string `json:"-"`
}

// MigrateWorkflow moves a workflow branch of format 1 to format 2 in
// place (one commit on its tip, nothing rewritten) and pushes it per
// workflow.auto_push unless the request says otherwise. A branch of
// format 2 is left as it is; the push still runs, so that a migration
// whose push failed is sent by running the command again.
func (e *Workspace) MigrateWorkflow(ctx context.Context, req SyncRequest) (*Migrated, error) {
	w, err := e.requestedBranch(ctx)
	if err != nil {
		return nil, err
	}
	done, err := w.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("workflow migrate: %w", err)
	}
	out := &Migrated{Branch: w.Branch(), Base: done.Base, Merged: done.Merged, Merge: done.MergeCommit, Remote: e.Cfg.Workflow.Remote}
	if out.Pushed, err = e.pushAsked(ctx, w, req); err != nil {
		return nil, err
	}
	return out, nil
}
