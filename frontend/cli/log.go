package cli

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

func logCommand() *command {
	var req service.LogRequest
	return &command{
		noArgs: true,
		// The log needs no lock store (which may be down).
		noStore: true,
		usage:   "log [--since D] [--worker W] [--action A] [--key K] [--json]",
		short:   "lock events, newest last",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &req.Since, "since", "only events of the last `D`")
			fs.StringVar(&req.Worker, "worker", "", "only events of worker `W`")
			fs.StringVar(&req.Action, "action", "", "only events with action `A` (lock_acquire, lock_clear, …)")
			fs.StringVar(&req.Key, "key", "", "only events on lock key `K`")
		},
		run: func(ctx context.Context, a *app, _ []string) error {
			if req.Since < 0 {
				return service.Usagef("--since must not be negative")
			}
			return run(ctx, a, func(e *service.Workspace) ([]service.LogEvent, error) { return e.Log(ctx, req) },
				func(_ *service.Workspace, evs []service.LogEvent) error {
					return a.reply(evs, func() {
						rows := [][]string{{"TIME", "WORKER", "TYPE", "ACTION", "KEY", "DETAILS"}}
						for _, ev := range evs {
							rows = append(rows, []string{stamp(ev.Timestamp), ev.Worker, ev.WorkerType, ev.Action, dash(ev.Key), dash(ev.Details)})
						}
						table(a.stdio.Out, rows)
					})
				})
		},
	}
}
