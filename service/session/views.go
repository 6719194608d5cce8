package session

import (
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// LockView is a lock as tools show it: without the owner token.
type LockView struct {
	Key string `json:"key"`
	// Branch is the branch a branch lock holds on (locks.per_branch), ""
	// for a lock that holds on every branch.
	Branch     string     `json:"branch,omitempty"`
	Holder     string     `json:"holder"`
	HolderType string     `json:"holder_type"`
	Session    string     `json:"session"`
	Reason     string     `json:"reason,omitempty"`
	TaskID     string     `json:"task_id,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
	TaskExpire *time.Time `json:"task_expires,omitempty"`
	Fence      uint64     `json:"fence"`
	Expired    bool       `json:"expired,omitempty"`
	Stale      bool       `json:"stale,omitempty"`
}

// ViewOf is l as tools show it.
func ViewOf(l locks.Lock) LockView {
	branch, _, _ := lockkey.SplitBranch(l.Key)
	return LockView{Key: l.Key, Branch: branch, Holder: l.Holder, HolderType: l.HolderType, Session: l.Session, Reason: l.Reason,
		TaskID: l.TaskID, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt, TaskExpire: l.TaskExpires, Fence: l.Fence}
}

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

// QueueEpochKey is the record whose token names the store's queue epoch:
// a clone's claim index (see the queue) holds only while the epoch it was
// built in is the store's. Removing the record starts a new one; lockgate
// does so around every change that makes a finished package ready again.
// Like the planner's, the namespace cannot be locked by hand.
const QueueEpochKey = "queue:epoch"

// IsBookkeeping reports records lockgate keeps for itself rather than
// locks anyone works under: the planner's state (plan:cycle and the
// cooldown: records of scope rejections) and the reserved `workflow` lock
// while a branch writer holds it for the milliseconds of a commit (a
// `workflow` lock a person took stays in view), and the task records that
// keep finished work packages' states. `lock list` shows them
// with --all; `lock clear KEY --force` removes them like any record.
func IsBookkeeping(l locks.Lock) bool {
	ns := lockkey.Namespace(l.Key)
	return ns == CooldownNS || l.Key == PlanCycleKey || l.Key == lockkey.WorkflowKey && l.Action == BranchWriterAction || IsQueueState(l)
}

// PackageLabel names a work package as messages show it: its id and, when
// it has one, its title in parentheses.
func PackageLabel(id, title string) string {
	if title == "" {
		return id
	}
	return id + " (" + title + ")"
}

// The actions of task records that keep a package's state.
const (
	ClaimAction  = "claim"
	DoneAction   = "done"
	FailedAction = "failed"
)

// IsQueueState reports records that keep the queue's state, not locks
// anyone holds: a finished package's task record, and the queue epoch.
// Boards leave them out.
func IsQueueState(l locks.Lock) bool {
	return l.Key == QueueEpochKey || IsFinishedPackage(l)
}

// IsFinishedPackage reports whether l is a finished package's task record,
// which stays in the store as the package's state.
func IsFinishedPackage(l locks.Lock) bool {
	return lockkey.Namespace(l.Key) == "task" && (l.Action == DoneAction || l.Action == FailedAction)
}
