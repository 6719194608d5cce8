package journal

import (
	"slices"
	"testing"
)

// Every action that holds no grant is one the package defines, and the
// lock actions (which take, renew or end grants) are not among them.
func TestHoldsNoGrantActionsAreDefined(t *testing.T) {
	t.Parallel()
	all := Actions()
	for a := range holdsNoGrant {
		if !slices.Contains(all, a) {
			t.Errorf("HoldsNoGrant(%q), an action Actions does not list", a)
		}
	}
	for _, a := range []string{ActionAcquire, ActionRelease, ActionRefresh, ActionClear, ActionTakeover, ActionPause} {
		if HoldsNoGrant(a) {
			t.Errorf("HoldsNoGrant(%q): a lock action", a)
		}
	}
	if !HoldsNoGrant(ActionHookBypass) || HoldsNoGrant("no_such_action") {
		t.Error("HoldsNoGrant answers wrongly for hook_bypass or an unknown action")
	}
	if len(slices.Compact(slices.Sorted(slices.Values(all)))) != len(all) {
		t.Errorf("Actions lists one twice: %v", all)
	}
}
