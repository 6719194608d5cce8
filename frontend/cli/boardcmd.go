package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/board"
	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
)

// boardEvents is how many of the last events the board shows.
const boardEvents = 10

func boardCommand() *command {
	var once bool
	return &command{
		usage: "board [--once]",
		short: "a live view of the locks: paused features, every live lock and its time left, the work queue, the last events; keys to filter, sort and clear",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&once, "once", false, "print one frame and exit (what the board shows when output is not a terminal, once a second)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("board takes no arguments")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			src := &boardSource{e: e}
			out, _ := a.stdio.Out.(*os.File)
			in, _ := a.stdio.In.(*os.File)
			if !once && termstyle.IsTerminal(out) && termstyle.IsTerminal(in) {
				return board.Run(ctx, src, in, out)
			}
			for {
				s, err := src.Snapshot(ctx)
				if err != nil {
					return err
				}
				fmt.Fprint(a.stdio.Out, board.Frame(s, board.View{Sort: board.Sorts[0], Selected: -1}))
				if once {
					return nil
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(board.Refresh):
				}
				fmt.Fprintln(a.stdio.Out)
			}
		},
	}
}

// boardSource reads the board's snapshots from the workspace.
type boardSource struct {
	e *service.Workspace
	// The work packages file as last read, and the queue it parsed to (or
	// why it did not): it is parsed again only when its bytes change.
	pkgData []byte
	pkgs    *service.PackageQueue
	pkgErr  error
}

func (b *boardSource) Snapshot(ctx context.Context) (board.Snapshot, error) {
	entries, err := b.e.Store.List(ctx)
	if err != nil {
		return board.Snapshot{}, err
	}
	now := b.e.Now()
	evs, _, err := b.e.JournalFile().ReadSkipping(now.Add(-24 * time.Hour))
	if err != nil {
		return board.Snapshot{}, err
	}
	evs = evs[max(len(evs)-boardEvents, 0):]
	s := board.Snapshot{Store: b.e.StoreLabel(), Now: now, Locks: entries, Events: evs, StaleAfter: b.e.Cfg.StaleAfter()}
	b.queue(&s, entries)
	return s, nil
}

// queue adds the work queue to s, computed from the store's entries the
// frame read already. A work packages file that cannot be read or is not
// valid is named in the section, never an error: the locks stay in view.
func (b *boardSource) queue(s *board.Snapshot, entries []locks.Entry) {
	path := b.e.PackagesFile("")
	name := path
	if rel, err := filepath.Rel(b.e.Repo.Toplevel, path); err == nil && b.e.Repo.Toplevel != "" && filepath.IsLocal(rel) {
		name = rel
	}
	data, err := config.ReadFile(path, config.MaxWorkPackagesBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	s.QueueFile = name
	if err != nil {
		s.QueueProblem = problemLine(err)
		return
	}
	if b.pkgs == nil && b.pkgErr == nil || !bytes.Equal(data, b.pkgData) {
		b.pkgData, b.pkgs = data, nil
		var wps *config.WorkPackages
		if wps, b.pkgErr = b.e.ParsePackages(name, data); b.pkgErr == nil {
			b.pkgs = b.e.PackageQueue(wps)
		}
	}
	if b.pkgErr != nil {
		s.QueueProblem = problemLine(b.pkgErr)
		return
	}
	q, err := b.pkgs.Of(entries)
	if err != nil {
		s.QueueProblem = problemLine(err)
		return
	}
	s.Queue = q
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

func (b *boardSource) Clear(ctx context.Context, key string) error {
	_, err := b.e.Mgr.Clear(ctx, key, b.e.Me)
	return err
}
