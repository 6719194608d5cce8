package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/pathmatch"
	"github.com/lockgate/lockgate/scope"
	"github.com/lockgate/lockgate/workflow/lockkey"
)

// Task statuses of a TaskPlan.
const (
	StatusReady    = "ready"    // scheduled now
	StatusWaiting  = "waiting"  // a lock overlaps a ready task's or a held lock
	StatusRejected = "rejected" // backfill task out of scope; never scheduled
	StatusCooldown = "cooldown" // backfill task touching a recently rejected path
)

// Backfill scope profiles (SPEC §6).
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
	// Cooldown maps a rejected path to the cycle it was rejected in.
	Cooldown map[string]int
	// Held are the locks already held in the store; a task with a lock
	// overlapping one of them waits.
	Held []HeldLock
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

// Plan is the result of Make: one TaskPlan per task, in input order, and
// the ids of the ready tasks in input order.
type Plan struct {
	Tasks []TaskPlan `json:"tasks"`
	Ready []string   `json:"ready"`
}

// Rejections returns the paths that made tasks of plan rejected; the
// caller stores them with the current cycle as Config.Cooldown of the next
// plans.
func Rejections(plan *Plan) map[string]bool {
	out := map[string]bool{}
	if plan == nil {
		return out
	}
	for _, t := range plan.Tasks {
		for _, p := range t.Rejected {
			out[p] = true
		}
	}
	return out
}

// Make plans the tasks of in. It fails on an invalid task (as Parse would),
// an invalid hot_files entry, or a backfill task when cfg.Policy does not
// define the backfill profile in use. in is not modified.
func Make(in *Input, cfg Config) (*Plan, error) {
	if in == nil {
		in = &Input{}
	}
	tasks := make([]Task, len(in.Tasks))
	ids := make(map[string]bool, len(tasks))
	for i, t := range in.Tasks {
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
	coolPaths := make(map[string]int, len(cfg.Cooldown))
	for p, c := range cfg.Cooldown {
		if k, err := lockkey.Canonical(p, nil); err == nil {
			p = k
		}
		if old, ok := coolPaths[p]; !ok || c > old {
			coolPaths[p] = c
		}
	}

	plan := &Plan{Tasks: make([]TaskPlan, len(tasks)), Ready: []string{}}
	// Pass 1: status of backfill tasks (cooldown, scope) and hot/backfill keys.
	for i, t := range tasks {
		tp := &plan.Tasks[i]
		tp.ID = t.ID
		if t.Backfill {
			tp.Injected = append(tp.Injected, "backfill:type:"+t.Type)
			if cooldown > 0 {
				coolCheck(tp, t, coolPaths, cfg.Cycle, cooldown)
			}
			if tp.Status == "" {
				if err := scopeCheck(tp, t, cfg.Policy, profile); err != nil {
					return nil, err
				}
			}
		}
		tp.Injected = hot.appendKeys(tp.Injected, t.TouchedPaths)
	}
	// Pass 2: file: keys for files shared by schedulable tasks.
	count := map[string]int{}
	for i, t := range tasks {
		if plan.Tasks[i].Status != "" {
			continue
		}
		for _, p := range uniq(t.TouchedPaths) {
			if !lockkey.IsPattern(p) {
				count[p]++
			}
		}
	}
	for i, t := range tasks {
		tp := &plan.Tasks[i]
		if tp.Status == "" {
			for _, p := range t.TouchedPaths {
				if count[p] >= 2 {
					tp.Injected = append(tp.Injected, FileKey(p))
				}
			}
		}
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
	idx := newIndex()
	for _, h := range cfg.Held {
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
	return plan, nil
}

// FileKey returns the file:<basename>:<hash> key of a canonical path: hash
// is the first 12 hex digits of the SHA-256 of the path.
func FileKey(p string) string {
	sum := sha256.Sum256([]byte(p))
	return "file:" + path.Base(p) + ":" + hex.EncodeToString(sum[:6])
}

// coolCheck marks tp as cooldown when t touches a path rejected fewer than
// n cycles before cycle.
func coolCheck(tp *TaskPlan, t Task, cool map[string]int, cycle, n int) {
	if len(cool) == 0 {
		return
	}
	for _, p := range t.TouchedPaths {
		c, ok := cool[p]
		if ok && cycle-c < n {
			tp.Status = StatusCooldown
			tp.Reason = fmt.Sprintf("path %s rejected at cycle %d; skipped until cycle %d", p, c, c+n)
			return
		}
	}
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
