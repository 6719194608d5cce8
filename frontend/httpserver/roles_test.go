package httpserver

import (
	"strings"
	"testing"
)

// TestForceNeedsAnAdmin: through the server only an admin user forces
// another user's lock away (git lfs unlock --force, DELETE ?force=true),
// and an agent, admin or not, never a person's unless the policy lets
// agents: each refusal is 403 naming the rule and what meets it. A user
// forces its own lock as it likes.
func TestForceNeedsAnAdmin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id := lockID(t, f.srv, f.alice, "a.bin")
	for _, tc := range []struct {
		name, token, has string
	}{
		{"no admin", f.bob, "only an admin may clear another user's lock"},
		{"an agent admin", f.bot, "locks.agents_clear_human"},
	} {
		status, body := sendAs(t, f.srv, "POST", "/lfs/locks/"+id+"/unlock", tc.token, lfsType, `{"force":true}`, nil)
		if status != 403 || !strings.Contains(body, tc.has) || !strings.Contains(body, "git lfs unlock a.bin") {
			t.Errorf("%s: git lfs unlock --force = %d %s, want 403 naming %q and the unlock", tc.name, status, body, tc.has)
		}
		status, body = sendAs(t, f.srv, "DELETE", "/api/v1/locks/a.bin?force=true", tc.token, "", "", nil)
		if status != 403 || !strings.Contains(body, tc.has) || !strings.Contains(body, `"code":6`) {
			t.Errorf("%s: DELETE ?force=true = %d %s, want 403 naming %q", tc.name, status, body, tc.has)
		}
	}
	if !locked(t, f.srv, f.bob, "a.bin") {
		t.Fatal("a refused force removed the lock")
	}
	own := lockID(t, f.srv, f.bob, "b.bin")
	if status, body := sendAs(t, f.srv, "POST", "/lfs/locks/"+own+"/unlock", f.bob, lfsType, `{"force":true}`, nil); status != 200 {
		t.Errorf("bob forcing his own lock: %d %s", status, body)
	}
	if status, body := sendAs(t, f.srv, "POST", "/lfs/locks/"+id+"/unlock", f.root, lfsType, `{"force":true}`, nil); status != 200 {
		t.Errorf("the admin's git lfs unlock --force: %d %s", status, body)
	}
	if locked(t, f.srv, f.bob, "a.bin") {
		t.Fatal("the admin's force left the lock")
	}
}
