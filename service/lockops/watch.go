package lockops

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/service/session"
)

// WatchReadOnly keeps the worktree's read-only files current
// (SyncReadOnly) until ctx ends: a sync at once, then one after each
// change of the file store's records, which it follows with the file
// system's notifications, and one every interval whatever the store (the
// only trigger for the git store and Redis). each is told what every
// sync changed, or why it failed; a failed sync is tried again at the
// next trigger.
func (e *Handler) WatchReadOnly(ctx context.Context, interval time.Duration, each func(*ReadOnlySync, error)) error {
	if err := e.CanWatchReadOnly(interval); err != nil {
		return err
	}
	if err := e.Open(ctx, session.Purpose{}); err != nil {
		return err
	}
	changes := make(chan struct{}, 1)
	if e.Setup.Use.Kind == session.KindFile {
		w, err := fsnotify.NewWatcher()
		if err == nil {
			defer w.Close()
			watchTree(w, filepath.Join(e.StateDir(), "locks"), 3)
			go forward(ctx, w, changes)
		}
		// Without notifications the interval still keeps the modes.
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if !e.readOnlyStillOn() {
			// Turned off while watching: give every mode back, and stop.
			e.Cfg.Locks.ReadOnly = false
			res, err := e.SyncReadOnly(ctx)
			each(res, err)
			return ErrReadOnlyOff
		}
		res, err := e.SyncReadOnly(ctx)
		if ctx.Err() != nil {
			return nil
		}
		each(res, err)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-changes:
			// A lock write is a few file operations: let them settle.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// ErrReadOnlyOff ends a watch whose locks.read_only was turned off.
var ErrReadOnlyOff = errors.New("locks.read_only was turned off: the modes lockgate changed are given back")

// CanWatchReadOnly refuses a watch that has nothing to do: no working
// tree, locks.read_only off, or an interval that is not positive.
func (e *Handler) CanWatchReadOnly(interval time.Duration) error {
	switch {
	case e.WorkTree() == "":
		return session.Usagef("guard watch: needs a working tree")
	case !e.Cfg.Locks.ReadOnly:
		return session.Usagef("guard watch: locks.read_only is off in %s: nothing to keep read-only", cmp.Or(e.Cfg.Path, "the built-in defaults"))
	case interval <= 0:
		return session.Usagef("guard watch: --interval must be positive")
	}
	return nil
}

// readOnlyStillOn reads the policy file again (through the decoded-config
// cache): a watch started with read_only on follows it being turned off.
// A file that cannot be read now keeps the watch as it was.
func (e *Handler) readOnlyStillOn() bool {
	if e.Cfg.Path == "" {
		return e.Cfg.Locks.ReadOnly
	}
	cfg, err := config.LoadCached(e.Cfg.Path, filepath.Join(e.CommonDir(), "lockgate", "cache"))
	if err != nil {
		return true
	}
	return cfg.Locks.ReadOnly
}

// watchTree adds dir and its directories, depth levels down, to w.
func watchTree(w *fsnotify.Watcher, dir string, depth int) {
	if err := w.Add(dir); err != nil || depth == 0 {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, en := range entries {
		if en.IsDir() {
			watchTree(w, filepath.Join(dir, en.Name()), depth-1)
		}
	}
}

// forward signals changes for every event of w, at most one pending;
// a directory created under a watched one is watched too.
func forward(ctx context.Context, w *fsnotify.Watcher, changes chan<- struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					watchTree(w, ev.Name, 2)
				}
			}
			select {
			case changes <- struct{}{}:
			default:
			}
		case err, ok := <-w.Errors:
			if !ok || errors.Is(err, fsnotify.ErrEventOverflow) {
				select {
				case changes <- struct{}{}:
				default:
				}
			}
			if !ok {
				return
			}
		}
	}
}
