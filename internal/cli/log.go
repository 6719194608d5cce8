package cli

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/workflow/journal"
)

func logCommand() *command {
	var since time.Duration
	return &command{
		usage: "log [--since D] [--json]",
		short: "lock events of this clone, newest last",
		flags: func(fs *pflag.FlagSet) {
			fs.DurationVar(&since, "since", 0, "only events of the last `D`")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return usagef("log takes no arguments")
			}
			if since < 0 {
				return usagef("--since must not be negative")
			}
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			var from time.Time
			if since > 0 {
				from = time.Now().Add(-since)
			}
			evs, err := journal.Open(e.stateDir() + "/events.jsonl").Read(from)
			if err != nil {
				return err
			}
			if a.globals.JSON {
				if evs == nil {
					evs = []journal.Event{}
				}
				return writeJSON(a.stdio.Out, evs)
			}
			rows := [][]string{{"TIME", "WORKER", "TYPE", "ACTION", "KEY", "DETAILS"}}
			for _, ev := range evs {
				rows = append(rows, []string{stamp(ev.Timestamp), ev.Worker, ev.WorkerType, ev.Action, dash(ev.Key), dash(ev.Details)})
			}
			table(a.stdio.Out, rows)
			return nil
		},
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
