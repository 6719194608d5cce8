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
