package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/session"
)

func planCommand() *command {
	var req service.PlanRequest
	return &command{
		usage: "plan TASKS.yaml [--cycle N] [--acquire TASK] [--backfill-allow-bridge]",
		short: "which tasks may run together now, and the locks each must hold (hot:, file:, backfill:type:)",
		flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&req.Cycle, "cycle", 0, "current scheduling cycle `N` (scope-rejected paths cool down for planner.cooldown_cycles)")
			fs.StringVar(&req.Acquire, "acquire", "", "take every lock of `TASK` at once (all or nothing)")
			fs.BoolVar(&req.AllowBridge, "backfill-allow-bridge", false, "backfill tasks use the backfill-bridge profile (core files stay excluded)")
			durationVar(fs, &req.TTL, "ttl", "with --acquire: lock lifetime (default by worker type)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("plan: give the TASKS.yaml file")
			}
			if req.Cycle < 0 || req.TTL < 0 {
				return service.Usagef("plan: --cycle and --ttl must not be negative")
			}
			req.File = args[0]
			a.purpose.TakesLocks = req.Acquire != ""
			err := run(ctx, a, func(e *service.Workspace) (*service.Planned, error) { return e.Plan(ctx, req) },
				func(e *service.Workspace, p *service.Planned) error { return a.showPlan(e, req, p) })
			var notReady *service.TaskNotReadyError
			if errors.As(err, &notReady) {
				t := notReady.Task
				fmt.Fprintf(a.stdio.Err, "lockgate: task %s is %s: %s\n", safetext.Field(t.ID), t.Status, safetext.Field(t.Reason))
				return &outcome.ExitError{Code: outcome.ExitPolicy}
			}
			return err
		},
	}
}

// showPlan prints the plan, or the locks of the task it acquired.
func (a *app) showPlan(e *service.Workspace, req service.PlanRequest, p *service.Planned) error {
	if req.Acquire != "" {
		res := p.Acquired
		return a.reply(session.AcquiredViews(res), func() {
			for _, r := range res {
				fmt.Fprintln(a.stdio.Out, safetext.Field(r.Lock.Key))
			}
			fmt.Fprintf(a.stdio.Err, "acquired %d locks for %s in %s until %s\n", len(res), safetext.Field(req.Acquire), e.StoreLabel(), stamp(res[0].Lock.ExpiresAt))
		})
	}
	return a.reply(p.Plan, func() {
		rows := [][]string{{"TASK", "STATUS", "INJECTED", "REASON"}}
		for _, t := range p.Plan.Tasks {
			rows = append(rows, []string{t.ID, t.Status, cmp.Or(strings.Join(t.Injected, " "), "-"), cmp.Or(t.Reason, "-")})
		}
		table(a.stdio.Out, rows)
		for _, c := range p.Plan.Cooldowns {
			fmt.Fprintf(a.stdio.Err, "cooling down: %s, rejected at cycle %d, until cycle %d\n", safetext.Field(c.Rejection.String()), c.Since, c.Until)
		}
		fmt.Fprintf(a.stdio.Err, "ready now: %s\n", safetext.Field(cmp.Or(strings.Join(p.Plan.Ready, " "), "-")))
	})
}
