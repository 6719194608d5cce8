package hooks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/journal"
)

// The gittest repositories commit at this time.
var committed = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func lockEvent(at time.Time, who, action, key string, fence uint64, exp time.Time) journal.Event {
	ev := journal.Event{ID: journal.NewID(), Timestamp: at, Worker: who, WorkerType: "agent", Session: who,
		Action: action, Key: key, Fence: fence}
	if !exp.IsZero() {
		ev.ExpiresAt = &exp
	}
	return ev
}

func verifyRepo(t *testing.T, me locks.Owner, evs ...journal.Event) *Report {
	t.Helper()
	r := gittest.New(t)
	r.Write("a.go", "0\n")
	r.Commit("init")
	r.Write("a.go", "1\n")
	r.Commit("change a")
	h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, Checker: &Checker{Me: me}}
	rep := &Report{Hook: "verify"}
	if err := h.Verify(context.Background(), []string{"HEAD~1..HEAD"}, "", func() ([]journal.Event, error) { return evs, nil }, rep); err != nil {
		t.Fatal(err)
	}
	rep.Finish()
	return rep
}

// Clones with stores of their own may both grant a key: a commit of one
// holder made while the other held it too is refused, naming the other.
func TestVerifyNamesTheOtherHolder(t *testing.T) {
	t.Parallel()
	alice := locks.Owner{Holder: "alice", HolderType: "agent", Session: "alice"}
	start, end := committed.Add(-time.Hour), committed.Add(time.Hour)
	rep := verifyRepo(t, alice,
		lockEvent(start, "alice", journal.ActionAcquire, "a.go", 1, end),
		lockEvent(start, "bob", journal.ActionAcquire, "a.go", 1, end))
	if len(rep.Violations) != 1 {
		t.Fatalf("violations %+v, want one", rep.Violations)
	}
	v := rep.Violations[0]
	if v.Rule != RuleLocked || v.Holder != "bob" || !strings.Contains(v.Reason, "while bob (agent) held a.go") || !strings.Contains(v.Hint, "have bob review") {
		t.Errorf("violation %+v, want a.go locked by bob", v)
	}
}

// A commit is judged at its time: a lock taken after it, or released
// before it, does not refuse it; one released just after it (within the
// margin) neither, with a warning.
func TestVerifyJudgesAtCommitTime(t *testing.T) {
	t.Parallel()
	me := locks.Owner{Holder: "alice", HolderType: "agent", Session: "alice"}
	cases := []struct {
		name     string
		from, to time.Duration // the grant's span around the commit
		refused  bool
		warned   bool
	}{
		{"held throughout", -time.Hour, time.Hour, true, false},
		{"taken after", 10 * time.Second, time.Hour, false, false},
		{"released before", -time.Hour, -10 * time.Second, false, false},
		{"released within the margin", -time.Hour, 2 * time.Second, false, true},
		{"taken within the margin", -time.Second, time.Hour, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := verifyRepo(t, me,
				lockEvent(committed.Add(-2*time.Hour), "setup", journal.ActionStoreUse, "", 0, time.Time{}),
				lockEvent(committed.Add(c.from), "bob", journal.ActionAcquire, "a.go", 1, committed.Add(2*time.Hour)),
				lockEvent(committed.Add(c.to), "bob", journal.ActionRelease, "a.go", 1, time.Time{}))
			if got := len(rep.Violations) > 0; got != c.refused {
				t.Errorf("refused = %v, want %v: %+v", got, c.refused, rep.Violations)
			}
			if got := len(rep.Warnings) > 0; got != c.warned {
				t.Errorf("warned = %v, want %v: %q", got, c.warned, rep.Warnings)
			}
			if len(rep.Undecided) > 0 {
				t.Errorf("undecided: %+v", rep.Undecided)
			}
		})
	}
}
