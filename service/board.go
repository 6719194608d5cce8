package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/workflow"
)

// boardEvents is how many of the last events the board shows.
const boardEvents = 10

// BoardView is what one frame of the board shows.
type BoardView struct {
	Store      string // the store, in words
	Now        time.Time
	Locks      []locks.Entry
	Events     []EventView // the last ones, oldest first
	StaleAfter time.Duration
	// The work queue, when the repository has a work packages file:
	// QueueFile names the file, Queue holds its packages' states, or
	// QueueProblem says why they cannot be shown (the locks are shown all
	// the same: the board is a viewer). No file: QueueFile is "".
	QueueFile    string
	Queue        *queue.Queue
	QueueProblem string
	// NextCursor is, for a page (SnapshotPage), the cursor of the next
	// one; "" after the last, and for a whole snapshot.
	NextCursor string
}

// EventView is an event of the lock log as the board shows it.
type EventView struct {
	Timestamp time.Time
	Worker    string
	Action    string
	Key       string
}

// Board reads the board's frames from the workspace, one listing of the
// store a frame, and clears a lock from it.
type Board struct {
	e *Workspace
	// The work packages file as last read, and the queue it parsed to (or
	// why it did not): it is parsed again only when its bytes change.
	pkgData []byte
	pkgs    *queue.Listing
	pkgErr  error
}

// Board returns the board of the opened workspace.
func (e *Workspace) Board() *Board { return &Board{e: e} }

// Snapshot reads one frame: the store listed, the last events of the
// day in the lock log (the journal and the workflow branch), and the work
// queue computed from the same listing.
func (b *Board) Snapshot(ctx context.Context) (BoardView, error) {
	entries, err := b.e.Store.List(ctx)
	if err != nil {
		return BoardView{}, err
	}
	now := b.e.Now()
	evs, err := b.lastEvents(ctx, now.Add(-24*time.Hour))
	if err != nil {
		return BoardView{}, err
	}
	s := BoardView{Store: b.e.StoreLabel(), Now: now, Locks: entries, StaleAfter: b.e.Cfg.StaleAfter(), Events: evs}
	s.QueueFile, s.Queue, s.QueueProblem = b.QueueOf(entries)
	return s, nil
}

// SnapshotPage is Snapshot with a page of the store's records in place
// of all of them: at most limit (0, or above lockops.MaxPage, is lockops.MaxPage) from
// cursor (PageCursor's), by key. The store reads only the
// page's records; a work packages file, whose queue names the locks in
// each package's way, still has the whole store read for the queue.
func (b *Board) SnapshotPage(ctx context.Context, cursor string, limit int) (BoardView, error) {
	entries, next, err := b.e.Locks().Page(ctx, cursor, limit)
	if err != nil {
		return BoardView{}, fmt.Errorf("the board: %w", err)
	}
	now := b.e.Now()
	evs, err := b.lastEvents(ctx, now.Add(-24*time.Hour))
	if err != nil {
		return BoardView{}, err
	}
	s := BoardView{Store: b.e.StoreLabel(), Now: now, Locks: entries, StaleAfter: b.e.Cfg.StaleAfter(), Events: evs, NextCursor: next}
	if _, err := os.Stat(b.e.Queue().PackagesFile("")); !errors.Is(err, fs.ErrNotExist) {
		all, err := b.e.Store.List(ctx)
		if err != nil {
			return BoardView{}, err
		}
		s.QueueFile, s.Queue, s.QueueProblem = b.QueueOf(all)
	}
	return s, nil
}

// lastEvents is the lock log's events since day, as `lockgate log`
// reads them (the journal and the workflow branch, so that other clones'
// events that reached the branch show too), of which the frame shows the
// last boardEvents. Only their span is read: the journal from the sync
// mark when the branch holds it (recentJournal); and when the journal's
// last lines (those before the mark included, whose events are on the
// branch) hold boardEvents events at or after some time, no older event
// can be among the last ones, so the branch is read from then on, its
// events cache leaving the blocks before it undecoded.
func (b *Board) lastEvents(ctx context.Context, day time.Time) ([]EventView, error) {
	jr, err := b.e.recentJournal(ctx, day, boardEvents)
	if err != nil {
		return nil, err
	}
	// The journal's last events of the day: those read, after those of
	// the lines before the sync mark, which are on the branch.
	tail := jr.evs
	if len(tail) < boardEvents {
		tail = nil
		for _, ev := range jr.last {
			if !ev.Timestamp.Before(day) {
				tail = append(tail, ev)
			}
		}
		tail = append(tail, jr.evs...)
	}
	from := day
	if n := len(tail); n >= boardEvents {
		// The journal is in the order events were written, which clocks
		// of processes may not keep: the earliest of its last lines.
		from = tail[n-1].Timestamp
		for _, ev := range tail[n-boardEvents:] {
			if ev.Timestamp.Before(from) {
				from = ev.Timestamp
			}
		}
	}
	evs, _, err := b.e.withBranchEvents(ctx, jr, from, time.Time{}, workflow.Match{})
	if err != nil {
		return nil, err
	}
	var out []EventView
	for _, ev := range evs[max(len(evs)-boardEvents, 0):] {
		out = append(out, EventView{Timestamp: ev.Timestamp, Worker: ev.Worker, Action: ev.Action, Key: ev.Key})
	}
	return out, nil
}

// QueueOf is the work queue computed from entries, a listing of the whole
// store the frame read already: the file's name ("" when there is none),
// the queue, or the problem that keeps it from being shown. A work
// packages file that cannot be read or is not valid is named as a
// problem, never an error: the locks stay in view.
func (b *Board) QueueOf(entries []locks.Entry) (file string, q *queue.Queue, problem string) {
	path := b.e.Queue().PackagesFile("")
	name := path
	if rel, err := filepath.Rel(b.e.WorkTree(), path); err == nil && b.e.WorkTree() != "" && filepath.IsLocal(rel) {
		name = rel
	}
	data, err := config.ReadFile(path, config.MaxWorkPackagesBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, ""
	}
	if err != nil {
		return name, nil, problemLine(err)
	}
	if b.pkgs == nil && b.pkgErr == nil || !bytes.Equal(data, b.pkgData) {
		b.pkgData, b.pkgs = data, nil
		var wps *config.WorkPackages
		if wps, b.pkgErr = b.e.Queue().ParsePackages(name, data); b.pkgErr == nil {
			b.pkgs = b.e.Queue().NewListing(wps)
		}
	}
	if b.pkgErr != nil {
		return name, nil, problemLine(b.pkgErr)
	}
	q, err = b.pkgs.Of(entries)
	if err != nil {
		return name, nil, problemLine(err)
	}
	return name, q, ""
}

// problemLine is the first problem of err on one line, with how many more.
func problemLine(err error) string {
	var ce *config.Error
	if errors.As(err, &ce) && len(ce.Problems) > 0 {
		line := ce.Problems[0].String()
		if more := len(ce.Problems) - 1 + ce.Omitted; more > 0 {
			line += fmt.Sprintf(" (and %d more problems)", more)
		}
		return line
	}
	return err.Error()
}

// Clear removes the lock on key, whoever holds it (logged), unless a
// rule of ForceCheck refuses it.
func (b *Board) Clear(ctx context.Context, key string) error {
	_, err := b.e.Mgr.ClearChecked(ctx, key, b.e.Me, b.e.Locks().ForceCheck(ctx))
	return err
}
