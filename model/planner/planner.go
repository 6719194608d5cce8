package planner

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/pathmatch"
	"github.com/lockgate/lockgate/scope"
)

// Task statuses of a TaskPlan.
const (
	StatusReady    = "ready"    // scheduled now
	StatusWaiting  = "waiting"  // a lock overlaps a ready task's or a held lock
	StatusRejected = "rejected" // backfill task out of scope; never scheduled
	StatusCooldown = "cooldown" // backfill task touching a recently rejected path
)

// Backfill scope profiles (docs/config.md).
const (
	ProfileBackfill       = "backfill"
	ProfileBackfillBridge = "backfill-bridge"
)

// DefaultCooldownCycles is planner.cooldown_cycles when unset.
const DefaultCooldownCycles = 5

// RulePattern is the rule of a rejection for a touched pattern in a
// backfill task: backfill scope is checked file by file.
const RulePattern = "pattern"

// Config is what the planner needs besides the tasks.
type Config struct {
	// HotFiles is scope.hot_files: basenames ("api.py") or doublestar path
	// patterns (any entry with '/' or a glob metacharacter).
	HotFiles []string
	// Policy is the compiled scope policy for backfill tasks; nil skips the
	// scope check.
	Policy *scope.Compiled
	// AllowBridge selects profile "backfill-bridge" instead of "backfill"
	// (--backfill-allow-bridge).
	AllowBridge bool
	// Cycle is the current cycle (plan --cycle N).
	Cycle int
	// CooldownCycles is planner.cooldown_cycles; 0 means
	// DefaultCooldownCycles, a negative value disables the cooldown.
	CooldownCycles int
	// Cooldown maps a scope rejection to the cycle it was recorded in.
	Cooldown map[Rejection]int
	// Held are the locks already held in the store; a task with a lock
	// overlapping one of them waits.
	Held []HeldLock
}

// Rejection is a path that a backfill scope check rejected, with the type
// of the backfill task whose change touched it. Type "" stands for a
// rejection whose task type is unknown: it cools down backfill tasks of
// every type.
type Rejection struct {
	Path string `json:"path"`
	Type string `json:"type,omitempty"`
}

// String renders r for messages: "src/a.py (lint backfills)" or
// "src/a.py (backfills of any type)".
func (r Rejection) String() string {
	if r.Type == "" {
		return r.Path + " (backfills of any type)"
	}
	return r.Path + " (" + r.Type + " backfills)"
}

// Key encodes r as "<type>:<path>", with an empty <type> when it is
// unknown; ParseRejection reads it back. A task type has no ':', so the
// encoding is unambiguous whatever the path.
func (r Rejection) Key() string { return r.Type + ":" + r.Path }

// ParseRejection reads a Rejection encoded by Key. A value whose first
// field is neither empty nor a task type, such as a bare path, is a
// rejection of unknown type for that path. ok is false for an empty value
// or path.
func ParseRejection(v string) (r Rejection, ok bool) {
	if typ, p, found := strings.Cut(v, ":"); found && (typ == "" || lockkey.IsWord(typ)) {
		return Rejection{Path: p, Type: typ}, p != ""
	}
	return Rejection{Path: v}, v != ""
}

// Cooldown is a rejection that still skips backfill tasks at the current
// cycle: rejected at cycle Since, skipped until cycle Until (exclusive).
type Cooldown struct {
	Rejection
	Since int `json:"since"`
	Until int `json:"until"`
}

// HeldLock is a lock already held in the store.
type HeldLock struct {
	Key    string // canonical key
	Holder string // worker holding it, for messages
}

// TaskPlan is the plan of one task.
type TaskPlan struct {
	ID string `json:"id"`
	// Locks are all the keys the task must hold: its touched paths, its
	// keys and the injected keys, sorted and deduplicated.
	Locks []string `json:"locks"`
	// Injected are the hot:, file: and backfill:type: keys the planner
	// added, sorted.
	Injected []string `json:"injected"`
	// Status is one of the Status* constants.
	Status string `json:"status"`
	// Reason explains a status other than ready.
	Reason string `json:"reason,omitempty"`
	// Rejected are the out-of-scope paths of a rejected task, sorted; the
	// caller records them (see Rejections) with the current cycle.
	Rejected []string `json:"rejected,omitempty"`
}

// Plan is the result of Make: one TaskPlan per task, in input order, the
// ids of the ready tasks in input order, and the cooldowns still running
// at the current cycle, sorted by path and type.
type Plan struct {
	Tasks     []TaskPlan `json:"tasks"`
	Ready     []string   `json:"ready"`
	Cooldowns []Cooldown `json:"cooldowns"`
}

// Rejections returns the paths that made backfill tasks of plan rejected,
// each with the type of the rejected task; a caller that keeps them with
// the current cycle passes them as Config.Cooldown of the next plans.
func Rejections(in *Input, plan *Plan) map[Rejection]bool {
	out := map[Rejection]bool{}
	if in == nil || plan == nil {
		return out
	}
	for i, t := range plan.Tasks {
		typ := ""
		if i < len(in.Tasks) && in.Tasks[i].ID == t.ID {
			typ = in.Tasks[i].Type
		}
		for _, p := range t.Rejected {
			out[Rejection{Path: p, Type: typ}] = true
		}
	}
	return out
}

// ValidType reports whether s can be a backfill task type: it matches
// [a-z0-9_-]+, as backfill:type:<type> requires.
func ValidType(s string) bool { return lockkey.IsWord(s) }

// Make plans the tasks of in. It fails on an invalid task (as Parse would),
// an invalid hot_files entry, or a backfill task when cfg.Policy does not
// define the backfill profile in use. in is not modified.
func Make(in *Input, cfg Config) (*Plan, error) {
	if in == nil {
		in = &Input{}
	}
	tasks, err := normalizeTasks(in.Tasks)
	if err != nil {
		return nil, err
	}
	hot, err := newHotIndex(cfg.HotFiles)
	if err != nil {
		return nil, err
	}
	profile := ProfileBackfill
	if cfg.AllowBridge {
		profile = ProfileBackfillBridge
	}
	cooldown := cfg.CooldownCycles
	if cooldown == 0 {
		cooldown = DefaultCooldownCycles
	}
	cool := activeCooldowns(cfg.Cooldown, cfg.Cycle, cooldown)

	plan := &Plan{Tasks: make([]TaskPlan, len(tasks)), Ready: []string{}, Cooldowns: []Cooldown{}}
	for _, c := range cool {
		plan.Cooldowns = append(plan.Cooldowns, c)
	}
	slices.SortFunc(plan.Cooldowns, func(a, b Cooldown) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Type, b.Type))
	})
	// Pass 1: status of backfill tasks (cooldown, scope) and hot/backfill keys.
	for i, t := range tasks {
		tp := &plan.Tasks[i]
		tp.ID = t.ID
		if t.Backfill {
			tp.Injected = append(tp.Injected, "backfill:type:"+t.Type)
			coolCheck(tp, t, cool)
			if tp.Status == "" {
				if err := scopeCheck(tp, t, cfg.Policy, profile); err != nil {
					return nil, err
				}
			}
		}
		tp.Injected = hot.appendKeys(tp.Injected, t.TouchedPaths)
	}
	// Pass 2: file: keys for files and patterns shared by schedulable tasks.
	if err := injectShared(tasks, plan.Tasks); err != nil {
		return nil, err
	}
	for i, t := range tasks {
		tp := &plan.Tasks[i]
		slices.Sort(tp.Injected)
		tp.Injected = slices.Compact(tp.Injected)
		if tp.Injected == nil {
			tp.Injected = []string{}
		}
		locks := make([]string, 0, len(t.TouchedPaths)+len(t.Keys)+len(tp.Injected))
		locks = append(locks, t.TouchedPaths...)
		locks = append(locks, t.Keys...)
		locks = append(locks, tp.Injected...)
		slices.Sort(locks)
		tp.Locks = slices.Compact(locks)
	}
	// Pass 3: greedy schedule in input order.
	schedule(plan, cfg.Held)
	return plan, nil
}

// normalizeTasks returns copies of tasks, normalized; a task id given twice
// is an error.
func normalizeTasks(in []Task) ([]Task, error) {
	tasks := make([]Task, len(in))
	ids := make(map[string]bool, len(tasks))
	for i, t := range in {
		t.TouchedPaths = slices.Clone(t.TouchedPaths)
		t.Keys = slices.Clone(t.Keys)
		if err := normalizeTask(&t); err != nil {
			return nil, err
		}
		if ids[t.ID] {
			return nil, fmt.Errorf("duplicate task id %q", t.ID)
		}
		ids[t.ID] = true
		tasks[i] = t
	}
	return tasks, nil
}

// schedule makes ready, greedily in input order, every task with no status
// yet whose locks overlap neither a held lock nor a lock of a task made
// ready before it; the others wait, naming the lock in the way.
func schedule(plan *Plan, held []HeldLock) {
	idx := newIndex()
	for _, h := range held {
		idx.add(h.Key, owner{held: true, name: h.Holder})
	}
	for i := range plan.Tasks {
		tp := &plan.Tasks[i]
		if tp.Status != "" {
			continue
		}
		conflict := false
		for _, l := range tp.Locks {
			if other, o, ok := idx.find(l); ok {
				tp.Status = StatusWaiting
				tp.Reason = fmt.Sprintf("lock %s overlaps %s %s", l, other, o)
				conflict = true
				break
			}
		}
		if conflict {
			continue
		}
		tp.Status = StatusReady
		plan.Ready = append(plan.Ready, tp.ID)
		for _, l := range tp.Locks {
			idx.add(l, owner{name: tp.ID})
		}
	}
}

// activeCooldowns returns the rejections of recorded that still cool down
// backfill tasks at cycle: recorded fewer than n cycles before it (n <= 0
// disables the cooldown). Paths are canonicalized; of two records of one
// path and type the later counts.
func activeCooldowns(recorded map[Rejection]int, cycle, n int) map[Rejection]Cooldown {
	out := map[Rejection]Cooldown{}
	if n <= 0 {
		return out
	}
	for r, c := range recorded {
		if k, err := lockkey.Canonical(r.Path, nil); err == nil {
			r.Path = k
		}
		if cycle-c >= n {
			continue
		}
		if old, ok := out[r]; ok && old.Since >= c {
			continue
		}
		out[r] = Cooldown{Rejection: r, Since: c, Until: c + n}
	}
	return out
}

// coolCheck marks tp as cooldown when backfill task t touches a path
// still cooling down for its type or for every type; the reason names
// the cooldown that lasts longest.
func coolCheck(tp *TaskPlan, t Task, cool map[Rejection]Cooldown) {
	if len(cool) == 0 {
		return
	}
	var hit Cooldown
	found := false
	for _, p := range t.TouchedPaths {
		for _, r := range [2]Rejection{{Path: p, Type: t.Type}, {Path: p}} {
			c, ok := cool[r]
			if ok && (!found || c.Until > hit.Until) {
				hit, found = c, true
			}
		}
	}
	if !found {
		return
	}
	tp.Status = StatusCooldown
	if hit.Type == "" {
		tp.Reason = fmt.Sprintf("path %s rejected at cycle %d (task type not recorded: every backfill type waits); skipped until cycle %d", hit.Path, hit.Since, hit.Until)
		return
	}
	tp.Reason = fmt.Sprintf("path %s rejected for a %s backfill at cycle %d; skipped until cycle %d", hit.Path, hit.Type, hit.Since, hit.Until)
}

// scopeCheck rejects backfill task t when a touched path is out of the
// backfill profile's scope.
func scopeCheck(tp *TaskPlan, t Task, pol *scope.Compiled, profile string) error {
	var reasons []string
	for _, p := range t.TouchedPaths {
		if lockkey.IsPattern(p) {
			tp.Rejected = append(tp.Rejected, p)
			reasons = append(reasons, fmt.Sprintf("%s: rule %s: a backfill task must list files, not patterns", p, RulePattern))
		}
	}
	if pol != nil && len(t.TouchedPaths) > 0 {
		if !pol.HasProfile(profile) {
			return fmt.Errorf("task %s: backfill needs profile %q in scope.profiles (defined: %s)", t.ID, profile, strings.Join(pol.Profiles(), ", "))
		}
		for _, v := range pol.Evaluate(t.TouchedPaths, scope.Subject{WorkerType: scope.WorkerAgent, Profile: profile}) {
			switch v.Rule {
			case scope.RuleCore, scope.RuleProfile, scope.RuleUserOwned:
			default:
				continue
			}
			if !lockkey.IsPattern(v.Path) {
				tp.Rejected = append(tp.Rejected, v.Path)
				reasons = append(reasons, fmt.Sprintf("%s: rule %s: %s", v.Path, v.Rule, v.Reason))
			}
		}
	}
	if len(reasons) > 0 {
		slices.Sort(tp.Rejected)
		tp.Rejected = slices.Compact(tp.Rejected)
		tp.Status = StatusRejected
		tp.Reason = strings.Join(reasons, "; ")
	}
	return nil
}

// uniq returns the distinct strings of s (a copy when it must drop some).
func uniq(s []string) []string {
	if len(s) < 2 {
		return s
	}
	c := slices.Clone(s)
	slices.Sort(c)
	return slices.Compact(c)
}

// hotIndex finds the hot: keys of touched paths.
type hotIndex struct {
	base map[string]bool    // basename entries
	m    *pathmatch.Matcher // pattern entries
	pats []string           // pattern entries, for touched patterns
}

func newHotIndex(entries []string) (*hotIndex, error) {
	h := &hotIndex{base: map[string]bool{}}
	for i, e := range entries {
		if e == "" {
			return nil, fmt.Errorf("scope.hot_files[%d]: empty entry", i)
		}
		if strings.ContainsAny(e, "/*?[{\\") {
			h.pats = append(h.pats, e)
		} else {
			h.base[e] = true
		}
	}
	m, err := pathmatch.NewMatcher(h.pats, false)
	if err != nil {
		return nil, fmt.Errorf("scope.hot_files: %w", err)
	}
	h.m = m
	return h, nil
}

// appendKeys appends the hot: keys of paths to dst.
func (h *hotIndex) appendKeys(dst []string, paths []string) []string {
	for _, p := range paths {
		if !lockkey.IsPattern(p) {
			b := path.Base(p)
			if h.base[b] {
				dst = append(dst, "hot:"+b)
			} else if _, ok := h.m.Match(p); ok {
				dst = append(dst, "hot:"+b)
			}
			continue
		}
		// A touched pattern: every hot entry with a literal basename it may cover.
		for b := range h.base {
			if lockkey.Overlap(p, "**/"+b) {
				dst = append(dst, "hot:"+b)
			}
		}
		for _, e := range h.pats {
			b := path.Base(e)
			if !strings.ContainsAny(b, "*?[{\\") && lockkey.Overlap(p, e) {
				dst = append(dst, "hot:"+b)
			}
		}
	}
	return dst
}
