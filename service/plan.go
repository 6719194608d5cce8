package service

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/planner"
	"github.com/lockgate/lockgate/scope"
	"github.com/lockgate/lockgate/service/session"
)

// stateTTL is the lifetime of the planner's state records (see
// session.CooldownNS).
const stateTTL = 90 * 24 * time.Hour

// plannerOwner owns the planner's state records.
var plannerOwner = locks.Owner{Holder: "lockgate-planner", HolderType: scope.WorkerAgent, Session: "lockgate-planner"}

// recordRejections stores scope rejections with the cycle they happened
// in, for the planner's cooldown.
func (e *Workspace) recordRejections(ctx context.Context, rs map[planner.Rejection]bool, cycle int) error {
	keys := make([]string, 0, len(rs))
	for r := range rs {
		keys = append(keys, cooldownKey(r))
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := e.setState(ctx, k, "cycle "+strconv.Itoa(cycle)); err != nil {
			return fmt.Errorf("recording %s: %w", k, err)
		}
	}
	return nil
}

// cooldownKey is the store key of a rejection: cooldown:<type>:<path>
// (see planner.Rejection.Key).
func cooldownKey(r planner.Rejection) string {
	return session.CooldownNS + ":" + r.Key()
}

// parseCooldownKey reads a cooldown record's key.
func parseCooldownKey(key string) (planner.Rejection, bool) {
	v, ok := strings.CutPrefix(key, session.CooldownNS+":")
	if !ok {
		return planner.Rejection{}, false
	}
	return planner.ParseRejection(v)
}

// setState writes one planner state record (no journal event: it is not a
// lock anyone holds).
func (e *Workspace) setState(ctx context.Context, key, reason string) error {
	m := &locks.Manager{Store: e.Store, Host: e.Mgr.Host, PID: e.Mgr.PID, Now: e.Mgr.Now}
	_, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: plannerOwner, TTL: stateTTL, Action: "plan", Reason: reason})
	var held *locks.HeldError
	if errors.As(err, &held) {
		return fmt.Errorf("planner state %s is held by %s", key, held.Lock.Holder)
	}
	return err
}

// lastCycle is the cycle of the last plan, 0 when none was made.
func (e *Workspace) lastCycle(ctx context.Context) int {
	l, err := e.Store.Get(ctx, session.PlanCycleKey)
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

// Plan is a plan of tasks: each task's status and locks, the tasks ready
// now, and the paths cooling down.
type Plan = planner.Plan

// TaskPlan is one task of a Plan.
type TaskPlan = planner.TaskPlan

// PlanRequest is what `plan` plans: the task file (relative to the
// working directory), the scheduling cycle, whether backfill tasks use the
// backfill-bridge profile and, with Acquire, the task whose locks to take
// at once, for TTL (0: by worker type, and a longer lock held before is
// never shortened).
type PlanRequest struct {
	File        string
	Cycle       int
	AllowBridge bool
	Acquire     string
	TTL         time.Duration
}

// Planned is what `plan` did: the plan, and the locks of the task it was
// asked to acquire.
type Planned struct {
	Plan     *Plan
	Acquired []locks.Result
}

// Plan reads the task file and plans it against the locks others hold now
// and the planner's cooldowns; it records the cycle, so that a backfill
// check that rejects a path records it with this cycle, and removes the
// cooldown records whose cooldown has ended. With req.Acquire it takes the
// task's locks.
func (e *Workspace) Plan(ctx context.Context, req PlanRequest) (*Planned, error) {
	if req.Cycle < 0 || req.TTL < 0 {
		return nil, Usagef("plan: the cycle and the lock lifetime must not be negative")
	}
	file := req.File
	if !filepath.IsAbs(file) {
		file = filepath.Join(e.Cwd, file)
	}
	data, err := config.ReadFile(file, planner.MaxInputBytes)
	var ce *config.Error
	if errors.As(err, &ce) {
		return nil, err
	}
	if err != nil {
		return nil, Usagef("plan: %v", err)
	}
	in, err := planner.Parse(file, data)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	// A path through a symbolic link is planned where it leads, as
	// acquireTask locks it.
	for i := range in.Tasks {
		for j, p := range in.Tasks[i].TouchedPaths {
			if session.IsPathArg(p) {
				if in.Tasks[i].TouchedPaths[j], err = e.KeyPath(p); err != nil {
					return nil, err
				}
			}
		}
	}
	h, err := e.Runner(ctx, e.Purpose, "")
	if err != nil {
		return nil, err
	}
	entries, err := e.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	now := e.Now()
	cooldown := e.Cfg.Planner.CooldownCycles
	if cooldown == 0 {
		cooldown = -1 // planner.cooldown_cycles: 0 turns the cooldown off
	}
	cfg := planner.Config{
		HotFiles: e.Cfg.Scope.HotFiles, Policy: h.Checker.Policy, AllowBridge: req.AllowBridge,
		Cycle: req.Cycle, CooldownCycles: cooldown, Cooldown: map[planner.Rejection]int{},
	}
	var over []string // cooldown records whose cooldown has ended
	for _, en := range entries {
		switch {
		case en.Err != nil, en.Expired(now):
		case strings.HasPrefix(en.Key, session.CooldownNS+":"):
			r, rok := parseCooldownKey(en.Key)
			if c, ok := cycleOf(en.Reason); ok && rok {
				cfg.Cooldown[r] = c
				if cooldown > 0 && c+cooldown <= req.Cycle && en.OwnedBy(plannerOwner) {
					over = append(over, en.Key)
				}
			}
		case en.Key == session.PlanCycleKey, en.OwnedBy(e.Me):
		default:
			cfg.Held = append(cfg.Held, planner.HeldLock{Key: en.Key, Holder: en.Holder})
		}
	}
	plan, err := planner.Make(in, cfg)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	if err := e.setState(ctx, session.PlanCycleKey, "cycle "+strconv.Itoa(req.Cycle)); err != nil {
		return nil, err
	}
	for _, k := range over {
		if _, err := e.Store.Remove(ctx, k); err != nil && !errors.Is(err, locks.ErrNotFound) {
			return nil, fmt.Errorf("remove the ended cooldown %s: %w", k, err)
		}
	}
	out := &Planned{Plan: plan}
	if req.Acquire != "" {
		if out.Acquired, err = e.acquireTask(ctx, plan, req.Acquire, req.TTL); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// TaskNotReadyError is a task the plan rejected or cools down: its locks
// are not taken.
type TaskNotReadyError struct{ Task TaskPlan }

func (e *TaskNotReadyError) Error() string {
	return fmt.Sprintf("task %s is %s: %s", e.Task.ID, e.Task.Status, e.Task.Reason)
}

// acquireTask takes every lock of task id of plan at once, for ttl (0: by
// worker type, and a longer lock held before is never shortened).
func (e *Workspace) acquireTask(ctx context.Context, plan *Plan, id string, ttl time.Duration) ([]locks.Result, error) {
	for _, t := range plan.Tasks {
		if t.ID != id {
			continue
		}
		if t.Status == planner.StatusRejected || t.Status == planner.StatusCooldown {
			return nil, &TaskNotReadyError{Task: t}
		}
		// A task file's paths are repo-root relative, wherever plan runs.
		keys, err := e.FileKeys(t.Locks)
		if err != nil {
			return nil, fmt.Errorf("task %s: %w", t.ID, err)
		}
		exact := ttl > 0
		if ttl == 0 {
			if ttl, err = e.Locks().DefaultTTL(keys); err != nil {
				return nil, err
			}
		}
		return e.Mgr.Acquire(ctx, locks.Request{Keys: session.Canonicals(keys), Owner: e.Me, TTL: ttl,
			Action: "plan", TaskID: t.ID, Reason: "task " + t.ID, ExactTTL: exact})
	}
	return nil, Usagef("plan --acquire: no task %q in the plan", id)
}

// noteRejections records, for the planner's cooldown, the paths a backfill
// check refused (rule profile or core), with the task type of the checked
// change ("" when unknown) and the cycle of the last plan. It returns the
// cycle and the rejections recorded.
func (e *Workspace) noteRejections(ctx context.Context, taskType string, r *hooks.Report) (int, []string, error) {
	if e.Store == nil {
		return 0, nil, nil
	}
	rs := map[planner.Rejection]bool{}
	for _, v := range r.Violations {
		if v.Path != "" && (v.Rule == scope.RuleProfile || v.Rule == scope.RuleCore) {
			rs[planner.Rejection{Path: v.Path, Type: taskType}] = true
		}
	}
	if len(rs) == 0 {
		return 0, nil, nil
	}
	cycle := e.lastCycle(ctx)
	if err := e.recordRejections(ctx, rs, cycle); err != nil {
		return cycle, nil, err
	}
	list := make([]string, 0, len(rs))
	for r := range rs {
		list = append(list, r.String())
	}
	slices.Sort(list)
	return cycle, list, nil
}
