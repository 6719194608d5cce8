package httpserver

import (
	"strings"
	"testing"
)

// TestAPIPauseIsJournaledAsPause: a pause key taken through POST
// /api/v1/locks is `lockgate pause`'s (journaled pause), released through
// DELETE it is `lockgate unpause`'s (journaled unpause); with other keys
// or a wait it is refused.
func TestAPIPauseIsJournaledAsPause(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	last := func() string {
		t.Helper()
		_, _, body := apiDo(t, f.srv, "GET", "/api/v1/events?limit=1", f.alice, "")
		return mustJSON(t, body)
	}
	if status, _, body := apiDo(t, f.srv, "POST", "/api/v1/locks", f.alice, `{"keys":["feature:f1:pause"],"reason":"hotfix"}`); status != 200 {
		t.Fatalf("pause: %d %v", status, body)
	}
	if got := last(); !strings.Contains(got, `"action":"pause"`) || !strings.Contains(got, `"key":"feature:f1:pause"`) {
		t.Errorf("the pause's event: %s; want action pause", got)
	}
	if status, _, body := apiDo(t, f.srv, "DELETE", "/api/v1/locks/feature:f1:pause", f.alice, ""); status != 200 || !strings.Contains(mustJSON(t, body), `"released":[{`) {
		t.Fatalf("unpause: %d %v", status, body)
	}
	if got := last(); !strings.Contains(got, `"action":"unpause"`) {
		t.Errorf("the unpause's event: %s; want action unpause", got)
	}
	for _, body := range []string{`{"keys":["feature:f1:pause","a.bin"]}`, `{"keys":["feature:f1:pause"],"wait":"5s"}`} {
		if status, _, got := apiDo(t, f.srv, "POST", "/api/v1/locks", f.alice, body); status != 400 || !strings.Contains(mustJSON(t, got), "lockgate pause F") {
			t.Errorf("%s: %d %v; want 400 naming lockgate pause", body, status, got)
		}
	}
}
