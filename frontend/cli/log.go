package cli

import (
	"context"
	"time"

	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/model/locks/journal"
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

func (o *LogOptions) keep(ev journal.Event) bool {
	return (o.Worker == "" || ev.Worker == o.Worker) &&
		(o.Action == "" || ev.Action == o.Action) &&
		(o.Key == "" || ev.Key == o.Key)
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
			since := o.Since
			if since < 0 {
				return service.Usagef("--since must not be negative")
			}
			// The journal and the branch are files of the clone: reading
			// them needs no lock store (which may be down).
			e, err := a.load(ctx)
			if err != nil {
				return err
			}
			e.Recover(ctx)
			var from time.Time
			if since > 0 {
				from = e.Now().Add(-since)
			}
			all, err := e.AllEvents(ctx, from)
			if err != nil {
				return err
			}
			var evs []journal.Event
			for _, ev := range all {
				if o.keep(ev) {
					evs = append(evs, ev)
				}
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
