package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockgate/lockgate/service/outcome"

	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/planner"
)

// PlanOptions are `plan`'s flags.
type PlanOptions struct {
	Cycle       int
	Acquire     string
	AllowBridge bool
	TTL         time.Duration
}

// AddFlags registers the options on fs.
func (o *PlanOptions) AddFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.Cycle, "cycle", 0, "current scheduling cycle `N` (scope-rejected paths cool down for planner.cooldown_cycles)")
	fs.StringVar(&o.Acquire, "acquire", "", "take every lock of `TASK` at once (all or nothing)")
	fs.BoolVar(&o.AllowBridge, "backfill-allow-bridge", false, "backfill tasks use the backfill-bridge profile (core files stay excluded)")
	durationVar(fs, &o.TTL, "ttl", "with --acquire: lock lifetime (default by worker type)")
}

func planCommand() *command {
	o := &PlanOptions{}
	return &command{
		usage: "plan TASKS.yaml [--cycle N] [--acquire TASK] [--backfill-allow-bridge]",
		short: "which tasks may run together now, and the locks each must hold (hot:, file:, backfill:type:)",
		flags: o.AddFlags,
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("plan: give the TASKS.yaml file")
			}
			if o.Cycle < 0 || o.TTL < 0 {
				return service.Usagef("plan: --cycle and --ttl must not be negative")
			}
			return a.plan(ctx, o, args[0])
		},
	}
}

func (a *app) plan(ctx context.Context, o *PlanOptions, file string) error {
	a.purpose.TakesLocks = o.Acquire != ""
	e, err := a.open(ctx)
	if err != nil {
		return err
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(e.Cwd, file)
	}
	plan, err := e.Plan(ctx, a.purpose, service.PlanRequest{File: file, Cycle: o.Cycle, AllowBridge: o.AllowBridge})
	if err != nil {
		return err
	}
	if o.Acquire != "" {
		return a.acquirePlanned(ctx, e, plan, o)
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, plan)
	}
	rows := [][]string{{"TASK", "STATUS", "INJECTED", "REASON"}}
	for _, t := range plan.Tasks {
		rows = append(rows, []string{t.ID, t.Status, dash(strings.Join(t.Injected, " ")), dash(t.Reason)})
	}
	table(a.stdio.Out, rows)
	for _, c := range plan.Cooldowns {
		fmt.Fprintf(a.stdio.Err, "cooling down: %s, rejected at cycle %d, until cycle %d\n", safetext.Field(c.Rejection.String()), c.Since, c.Until)
	}
	fmt.Fprintf(a.stdio.Err, "ready now: %s\n", safetext.Field(dash(strings.Join(plan.Ready, " "))))
	return nil
}

func (a *app) acquirePlanned(ctx context.Context, e *service.Workspace, plan *planner.Plan, o *PlanOptions) error {
	res, err := e.AcquireTask(ctx, plan, o.Acquire, o.TTL)
	var notReady *service.TaskNotReadyError
	if errors.As(err, &notReady) {
		t := notReady.Task
		fmt.Fprintf(a.stdio.Err, "lockgate: task %s is %s: %s\n", safetext.Field(t.ID), t.Status, safetext.Field(t.Reason))
		return &outcome.ExitError{Code: outcome.ExitPolicy}
	}
	if err != nil {
		return err
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, acquiredViews(res))
	}
	for _, r := range res {
		fmt.Fprintln(a.stdio.Out, safetext.Field(r.Lock.Key))
	}
	fmt.Fprintf(a.stdio.Err, "acquired %d locks for %s in %s until %s\n", len(res), safetext.Field(o.Acquire), e.StoreLabel(), stamp(res[0].Lock.ExpiresAt))
	return nil
}
