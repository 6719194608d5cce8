package hooks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// A push to the lock table's ref is judged by the LockStates the runner
// was given, and without them it is an error, never a pass: the hook
// engine links no store, so a runner built without the git store's
// readers must not wave such a push through.
func TestLockRefPushAsksLockStates(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a", "1\n")
	r.Commit("one")
	from := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
	r.Write("a", "2\n")
	r.Commit("two")
	to := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
	const ref = "refs/lockgate/locks"
	line := "refs/heads/main " + to + " " + ref + " " + from + "\n"
	getenv := func(string) string { return "" }

	h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, LockRef: ref, Checker: &Checker{}}
	if rep, err := h.PrePush(context.Background(), "origin", strings.NewReader(line), getenv); err == nil || !strings.Contains(err.Error(), "no reader of its states") {
		t.Fatalf("pre-push of the lock table without LockStates: %+v, %v; want an error", rep, err)
	}

	var asked []string
	h.LockStates = LockStates{
		Follows: func(_ context.Context, _, a, b string) (bool, string, error) {
			asked = append(asked, "follows "+a+" "+b)
			return false, "an earlier stamp", nil
		},
		Unlogged: func(context.Context, string, string, string, time.Time) ([]string, error) {
			t.Error("Unlogged asked of a state that does not follow")
			return nil, nil
		},
	}
	rep, err := h.PrePush(context.Background(), "origin", strings.NewReader(line), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "follows "+from+" "+to {
		t.Fatalf("Follows was asked %v, want once of %s → %s", asked, from, to)
	}
	if len(rep.Violations) != 1 || rep.Violations[0].Rule != RuleLockRef || !strings.Contains(rep.Violations[0].Reason, "an earlier stamp") {
		t.Fatalf("report %+v, want the lock ref's rewind refused with Follows' reason", rep.Violations)
	}
}
