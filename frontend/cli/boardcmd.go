package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/board"
	"github.com/lockgate/lockgate/frontend/termstyle"
)

func boardCommand() *command {
	var once bool
	return &command{
		usage: "board [--once]",
		short: "a live view of the locks: paused features, every live lock and its time left, the work queue, the last events; keys to filter, sort and clear",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&once, "once", false, "print one frame and exit (what the board shows when output is not a terminal, once a second)")
		},
		noArgs: true,
		run: func(ctx context.Context, a *app, _ []string) error {
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			src := e.Board()
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
