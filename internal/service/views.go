package service

import (
	"time"

	"github.com/lockgate/lockgate/locks"
)

// LockView is a lock as tools show it: without the owner token.
type LockView struct {
	Key        string     `json:"key"`
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

func ViewOf(l locks.Lock) LockView {
	return LockView{Key: l.Key, Holder: l.Holder, HolderType: l.HolderType, Session: l.Session, Reason: l.Reason,
		TaskID: l.TaskID, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt, TaskExpire: l.TaskExpires, Fence: l.Fence}
}

func ViewsOf(ls []locks.Lock) []LockView {
	out := make([]LockView, 0, len(ls))
	for _, l := range ls {
		out = append(out, ViewOf(l))
	}
	return out
}
