package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/board"
	"github.com/lockgate/lockgate/internal/service"
	"github.com/lockgate/lockgate/internal/termstyle"
)

// boardEvents is how many of the last events the board shows.
const boardEvents = 10

func boardCommand() *command {
	var once bool
	return &command{
		usage: "board [--once]",
		short: "a live view of the locks: paused features, every live lock and its time left, the last events; keys to filter, sort and clear",
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
			src := boardSource{e: e}
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
type boardSource struct{ e *service.Workspace }

func (b boardSource) Snapshot(ctx context.Context) (board.Snapshot, error) {
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
	return board.Snapshot{Store: b.e.StoreLabel(), Now: now, Locks: entries, Events: evs, StaleAfter: b.e.Cfg.StaleAfter()}, nil
}

func (b boardSource) Clear(ctx context.Context, key string) error {
	_, err := b.e.Mgr.Clear(ctx, key, b.e.Me)
	return err
}
