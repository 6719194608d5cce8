package service

import (
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/session"
)

// The session's names, under which the front ends know them.
type (
	Options       = session.Options
	Purpose       = session.Purpose
	UsageError    = session.UsageError
	HookError     = session.HookError
	Report        = session.Report
	Violation     = session.Violation
	HookInput     = session.HookInput
	ServeUser     = session.ServeUser
	StoreReport   = session.StoreReport
	UseResult     = session.UseResult
	UseRequest    = session.UseRequest
	IdentityError = session.IdentityError
)

const (
	BranchWriterAction = session.BranchWriterAction
	SignersFile        = session.SignersFile
	CloneStoreKey      = session.CloneStoreKey
	ClonePrefixKey     = session.ClonePrefixKey
	FromFlag           = session.FromFlag
	FromClone          = session.FromClone
	FromPolicy         = session.FromPolicy
	FromDefault        = session.FromDefault
	KindFile           = session.KindFile
	KindRedis          = session.KindRedis
)

// Usagef is session.Usagef: a *UsageError (exit 2) with a formatted message.
func Usagef(format string, args ...any) error { return session.Usagef(format, args...) }

// HookArgs is session.HookArgs.
func HookArgs(hook string, args []string) error { return session.HookArgs(hook, args) }

// TraceID is session.TraceID.
func TraceID(tp string) string { return session.TraceID(tp) }

// LockView is a lock as tools show it: without the owner token.
type LockView = session.LockView

// ViewOf is l as tools show it.
func ViewOf(l locks.Lock) LockView { return session.ViewOf(l) }
