package service

import (
	"context"
	"io"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/session"
)

// The session's names, under which the front ends know them.
type (
	Options             = session.Options
	Purpose             = session.Purpose
	UsageError          = session.UsageError
	HookError           = session.HookError
	Report              = session.Report
	Violation           = session.Violation
	HookInput           = session.HookInput
	RefTransaction      = session.RefTransaction
	Bypass              = session.Bypass
	ServeUser           = session.ServeUser
	EventsState         = session.EventsState
	NotPushedError      = session.NotPushedError
	UnknownProfileError = session.UnknownProfileError
	StoreMismatchError  = session.StoreMismatchError
	StoreView           = session.StoreView
	StoreReport         = session.StoreReport
	ReplicasView        = session.ReplicasView
	GitStoreView        = session.GitStoreView
	UseResult           = session.UseResult
	UseRequest          = session.UseRequest
	IdentityError       = session.IdentityError
)

const (
	BranchWriterAction = session.BranchWriterAction
	SignersFile        = session.SignersFile
	CloneStoreKey      = session.CloneStoreKey
	CloneGitRemoteKey  = session.CloneGitRemoteKey
	CloneGitRefKey     = session.CloneGitRefKey
	ClonePrefixKey     = session.ClonePrefixKey
	FromFlag           = session.FromFlag
	FromEnv            = session.FromEnv
	FromClone          = session.FromClone
	FromPolicy         = session.FromPolicy
	FromDefault        = session.FromDefault
	KindFile           = session.KindFile
	KindGit            = session.KindGit
	KindRedis          = session.KindRedis
)

// Usagef is session.Usagef: a *UsageError (exit 2) with a formatted message.
func Usagef(format string, args ...any) error { return session.Usagef(format, args...) }

// HookArgs is session.HookArgs.
func HookArgs(hook string, args []string) error { return session.HookArgs(hook, args) }

// TraceID is session.TraceID.
func TraceID(tp string) string { return session.TraceID(tp) }

// ReadRefTransaction is session.ReadRefTransaction.
func ReadRefTransaction(ctx context.Context, dir string, args []string, stdin io.Reader) (*RefTransaction, error) {
	return session.ReadRefTransaction(ctx, dir, args, stdin)
}

// BypassHook is session.BypassHook; e is nil when the workspace could
// not be loaded.
func BypassHook(ctx context.Context, e *Workspace, opts Options, hook string) Bypass {
	var s *session.Workspace
	if e != nil {
		s = e.Workspace
	}
	return session.BypassHook(ctx, s, opts, hook)
}

// LockView is a lock as tools show it: without the owner token.
type LockView = session.LockView

// ViewOf is l as tools show it.
func ViewOf(l locks.Lock) LockView { return session.ViewOf(l) }
