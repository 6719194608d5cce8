package cli

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/service"
)

// LogOptions are `log`'s filters.
type LogOptions struct {
	Since  time.Duration
	Worker string
	Action string
	Key    string
}

// AddFlags registers the options on fs.
func (o *LogOptions) AddFlags(fs *pflag.FlagSet) {
	durationVar(fs, &o.Since, "since", "only events of the last `D`")
	fs.StringVar(&o.Worker, "worker", "", "only events of worker `W`")
	fs.StringVar(&o.Action, "action", "", "only events with action `A` (lock_acquire, lock_clear, …)")
	fs.StringVar(&o.Key, "key", "", "only events on lock key `K`")
}

func logCommand() *command {
	o := &LogOptions{}
	return &command{
		usage: "log [--since D] [--worker W] [--action A] [--key K] [--json]",
		short: "lock events, newest last",
		flags: o.AddFlags,
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("log takes no arguments")
			}
			if o.Since < 0 {
				return service.Usagef("--since must not be negative")
			}
			// Loaded, not opened: the log needs no lock store (which may be down).
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			evs, err := e.Log(ctx, service.LogRequest{Since: o.Since, Worker: o.Worker, Action: o.Action, Key: o.Key})
			if err != nil {
				return err
			}
			if a.globals.JSON {
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
