package journal

import "slices"

// actions are the actions this package defines: those lockgate writes and
// those it defines for other tools writing the same journal
// (docs/formats.md, the journal).
var actions = []string{
	ActionAcquire, ActionRelease, ActionRefresh, ActionClear, ActionTakeover,
	ActionClaimedActivity, ActionCompletedTask, ActionCompletedActivity,
	ActionBlocked, ActionUnblocked, ActionPivotStarted, ActionPivotCompleted,
	ActionRecoveredActivity, ActionHookBypass, ActionClaim, ActionDone,
	ActionPackageFailed, ActionPackageReleased, ActionPackageTakeover,
	ActionPackageRetried, ActionPackageReset, ActionPause, ActionUnpause,
	ActionStoreUse,
}

// Actions lists every action this package defines, in one order.
func Actions() []string { return slices.Clone(actions) }

// holdsNoGrant are the actions of events about a key that neither take
// nor end a grant of it.
var holdsNoGrant = map[string]bool{
	ActionClaimedActivity: true, ActionCompletedTask: true, ActionCompletedActivity: true,
	ActionBlocked: true, ActionUnblocked: true, ActionPivotStarted: true,
	ActionPivotCompleted: true, ActionRecoveredActivity: true, ActionHookBypass: true,
	ActionClaim: true, ActionDone: true, ActionUnpause: true, ActionStoreUse: true,
	ActionPackageFailed: true, ActionPackageReleased: true, ActionPackageTakeover: true,
	ActionPackageRetried: true, ActionPackageReset: true,
}

// HoldsNoGrant reports whether an event of action, though it names a
// key, neither takes nor ends a grant of it. The lock history and the
// workflow branch's log cache both read events so: one list, so that
// `lockgate verify` and `lockgate log` never disagree about an action.
func HoldsNoGrant(action string) bool { return holdsNoGrant[action] }
