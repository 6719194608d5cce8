package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/frontend/board"
	"github.com/lockgate/lockgate/frontend/termstyle"
	"github.com/lockgate/lockgate/frontend/webboard"
)

func boardCommand() *command {
	var once bool
	return &command{
		usage: "board [--once] [--json]",
		short: "a live view of the locks: paused features, every live lock and its time left, the work queue, the last events; keys to filter, sort and clear",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&once, "once", false, "print one frame and exit (what the board shows when output is not a terminal, once a second); with --json, one snapshot as JSON")
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
			if !once && !a.globals.JSON && termstyle.IsTerminal(out) && termstyle.IsTerminal(in) {
				return board.Run(ctx, src, in, out)
			}
			for {
				s, err := src.Snapshot(ctx)
				if err != nil {
					return err
				}
				switch {
				case a.globals.JSON && once:
					// One document, indented like every other command's.
					return writeJSON(a.stdio.Out, webboard.NewView(s))
				case a.globals.JSON:
					// A document a frame, each on one line: a reader of the
					// stream splits it at newlines (newline-delimited JSON).
					if err := writeJSONLine(a.stdio.Out, webboard.NewView(s)); err != nil {
						return err
					}
				default:
					fmt.Fprint(a.stdio.Out, board.Frame(s, board.View{Sort: board.Sorts[0], Selected: -1}))
					if once {
						return nil
					}
				}
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(board.Refresh):
				}
				if !a.globals.JSON {
					fmt.Fprintln(a.stdio.Out)
				}
			}
		},
	}
}
