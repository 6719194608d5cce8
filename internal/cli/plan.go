package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/outcome"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/config"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/planner"
	"github.com/lockgate/lockgate/scope"
)

// stateTTL is the lifetime of the planner's state records (see
// service.CooldownNS).
const stateTTL = 90 * 24 * time.Hour

// plannerOwner owns the planner's state records.
var plannerOwner = locks.Owner{Holder: "lockgate-planner", HolderType: scope.WorkerAgent, Session: "lockgate-planner"}

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
	data, err := config.ReadFile(file, planner.MaxInputBytes)
	var ce *config.Error
	if errors.As(err, &ce) {
		return err
	}
	if err != nil {
		return service.Usagef("plan: %v", err)
	}
	in, err := planner.Parse(file, data)
	if err != nil {
		return service.Usagef("%v", err)
	}
	// A path through a symbolic link is planned where it leads, as
	// --acquire locks it.
	for i := range in.Tasks {
		for j, p := range in.Tasks[i].TouchedPaths {
			if service.IsPathArg(p) {
				if in.Tasks[i].TouchedPaths[j], err = e.KeyPath(p); err != nil {
					return err
				}
			}
		}
	}
	h, err := e.Runner(ctx, a.purpose, "")
	if err != nil {
		return err
	}
	entries, err := e.Store.List(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	cooldown := e.Cfg.Planner.CooldownCycles
	if cooldown == 0 {
		cooldown = -1 // planner.cooldown_cycles: 0 turns the cooldown off
	}
	cfg := planner.Config{
		HotFiles: e.Cfg.Scope.HotFiles, Policy: h.Checker.Policy, AllowBridge: o.AllowBridge,
		Cycle: o.Cycle, CooldownCycles: cooldown, Cooldown: map[planner.Rejection]int{},
	}
	var over []string // cooldown records whose cooldown has ended
	for _, en := range entries {
		switch {
		case en.Err != nil, en.Expired(now):
		case strings.HasPrefix(en.Key, service.CooldownNS+":"):
			r, rok := parseCooldownKey(en.Key)
			if c, ok := cycleOf(en.Reason); ok && rok {
				cfg.Cooldown[r] = c
				if cooldown > 0 && c+cooldown <= o.Cycle && en.OwnedBy(plannerOwner) {
					over = append(over, en.Key)
				}
			}
		case en.Key == service.PlanCycleKey, en.OwnedBy(e.Me):
		default:
			cfg.Held = append(cfg.Held, planner.HeldLock{Key: en.Key, Holder: en.Holder})
		}
	}
	plan, err := planner.Make(in, cfg)
	if err != nil {
		return service.Usagef("%v", err)
	}
	// Remember the cycle: a backfill check that rejects a path records it
	// with this cycle, and later plans skip that path while it cools down.
	if err := a.setState(ctx, e, service.PlanCycleKey, "cycle "+strconv.Itoa(o.Cycle)); err != nil {
		return err
	}
	for _, k := range over {
		if _, err := e.Store.Remove(ctx, k); err != nil && !errors.Is(err, locks.ErrNotFound) {
			return fmt.Errorf("remove the ended cooldown %s: %w", k, err)
		}
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
	for _, t := range plan.Tasks {
		if t.ID != o.Acquire {
			continue
		}
		if t.Status == planner.StatusRejected || t.Status == planner.StatusCooldown {
			fmt.Fprintf(a.stdio.Err, "lockgate: task %s is %s: %s\n", safetext.Field(t.ID), t.Status, safetext.Field(t.Reason))
			return &outcome.ExitError{Code: outcome.ExitPolicy}
		}
		// A task file's paths are repo-root relative, wherever plan runs.
		keys, err := e.FileKeys(t.Locks)
		if err != nil {
			return fmt.Errorf("task %s: %w", t.ID, err)
		}
		ttl := o.TTL
		if ttl == 0 {
			if ttl, err = e.DefaultTTL(keys); err != nil {
				return err
			}
		}
		res, err := e.Mgr.Acquire(ctx, locks.Request{Keys: service.Canonicals(keys), Owner: e.Me, TTL: ttl,
			Action: "plan", TaskID: t.ID, Reason: "task " + t.ID, ExactTTL: o.TTL > 0})
		if err != nil {
			return err
		}
		if a.globals.JSON {
			return writeJSON(a.stdio.Out, acquiredViews(res))
		}
		for _, r := range res {
			fmt.Fprintln(a.stdio.Out, safetext.Field(r.Lock.Key))
		}
		fmt.Fprintf(a.stdio.Err, "acquired %d locks for %s in %s until %s\n", len(res), safetext.Field(t.ID), e.StoreLabel(), stamp(res[0].Lock.ExpiresAt))
		return nil
	}
	return service.Usagef("plan --acquire: no task %q in the plan", o.Acquire)
}

// recordRejections stores scope rejections with the cycle they happened
// in, for the planner's cooldown.
func (a *app) recordRejections(ctx context.Context, e *service.Workspace, rs map[planner.Rejection]bool, cycle int) error {
	keys := make([]string, 0, len(rs))
	for r := range rs {
		keys = append(keys, cooldownKey(r))
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := a.setState(ctx, e, k, "cycle "+strconv.Itoa(cycle)); err != nil {
			return fmt.Errorf("recording %s: %w", k, err)
		}
	}
	return nil
}

// cooldownKey is the store key of a rejection: cooldown:<type>:<path>
// (see planner.Rejection.Key).
func cooldownKey(r planner.Rejection) string {
	return service.CooldownNS + ":" + r.Key()
}

// parseCooldownKey reads a cooldown record's key.
func parseCooldownKey(key string) (planner.Rejection, bool) {
	v, ok := strings.CutPrefix(key, service.CooldownNS+":")
	if !ok {
		return planner.Rejection{}, false
	}
	return planner.ParseRejection(v)
}

// setState writes one planner state record (no journal event: it is not a
// lock anyone holds).
func (a *app) setState(ctx context.Context, e *service.Workspace, key, reason string) error {
	m := &locks.Manager{Store: e.Store, Host: e.Mgr.Host, PID: e.Mgr.PID}
	_, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: plannerOwner, TTL: stateTTL, Action: "plan", Reason: reason})
	var held *locks.HeldError
	if errors.As(err, &held) {
		return fmt.Errorf("planner state %s is held by %s", key, held.Lock.Holder)
	}
	return err
}

// lastCycle is the cycle of the last plan, 0 when none was made.
func (a *app) lastCycle(ctx context.Context, e *service.Workspace) int {
	l, err := e.Store.Get(ctx, service.PlanCycleKey)
	if err != nil {
		return 0
	}
	c, _ := cycleOf(l.Reason)
	return c
}

func cycleOf(reason string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(reason, "cycle "))
	return n, err == nil && strings.HasPrefix(reason, "cycle ")
}
