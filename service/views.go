package service

import (
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// ViewsOf is ls as tools show them.
func ViewsOf(ls []locks.Lock) []LockView {
	out := make([]LockView, 0, len(ls))
	for _, l := range ls {
		out = append(out, ViewOf(l))
	}
	return out
}

// AcquiredView is one lock a request took, as tools show it: the lock,
// whether it was the caller's already, and the expired record it replaced.
type AcquiredView struct {
	LockView
	Renewed  bool      `json:"renewed"`
	TookOver *LockView `json:"took_over,omitempty"`
}

// AcquiredViews are the locks of res as tools show them.
func AcquiredViews(res []locks.Result) []AcquiredView {
	out := make([]AcquiredView, 0, len(res))
	for _, r := range res {
		v := AcquiredView{LockView: ViewOf(r.Lock), Renewed: r.Renewed}
		if r.TookOver != nil {
			t := ViewOf(*r.TookOver)
			v.TookOver = &t
		}
		out = append(out, v)
	}
	return out
}

// The planner keeps its state in the lock store, so every worktree and
// machine sees it: `cooldown:<type>:<path>` records a scope rejection of a
// backfill change of task type <type> (empty when the type is unknown),
// with reason "cycle N", written by `check --record-cooldown`;
// `plan:cycle` records the last cycle planned. Neither namespace can be
// locked by hand. The records belong to lockgate-planner: `plan` removes
// a cooldown record once its cooldown is over, `lock list --all` shows
// them and `lock clear KEY --force` removes one.
const (
	CooldownNS   = "cooldown"
	PlanCycleKey = "plan:cycle"
)

// isBookkeeping reports records lockgate keeps for itself rather than
// locks anyone works under: the planner's state (plan:cycle and the
// cooldown: records of scope rejections) and the reserved `workflow` lock
// while a branch writer holds it for the milliseconds of a commit (a
// `workflow` lock a person took stays in view), and the task records that
// keep finished work packages' states. `lock list` shows them
// with --all; `lock clear KEY --force` removes them like any record.
func isBookkeeping(l locks.Lock) bool {
	ns := lockkey.Namespace(l.Key)
	return ns == CooldownNS || l.Key == PlanCycleKey || l.Key == lockkey.WorkflowKey && l.Action == BranchWriterAction || IsFinishedPackage(l)
}

// PackageLabel names a work package as messages show it: its id and, when
// it has one, its title in parentheses.
func PackageLabel(id, title string) string {
	if title == "" {
		return id
	}
	return id + " (" + title + ")"
}
