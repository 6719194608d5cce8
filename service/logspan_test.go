package service

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/workflow"
)

// wholeJournalReading is how log and the board read the lock log before
// they trusted the sync mark: every line of the journal (dated lines
// before since passed over), then the workflow branch's events of the
// span that the journal lacks, by time; with the warnings said.
func wholeJournalReading(ctx context.Context, t *testing.T, e *Workspace, said *[]string, since, until time.Time) []journal.Event {
	t.Helper()
	evs, bad, _, err := e.JournalFile().ReadRecent(since)
	if err != nil {
		t.Fatal(err)
	}
	e.WarnSkippedLines(bad)
	kept := []journal.Event{}
	for _, ev := range evs {
		if until.IsZero() || ev.Timestamp.Before(until) {
			kept = append(kept, ev)
		}
	}
	cfg := workflow.Config{GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree()}
	lr, err := workflow.ReadEventsBetween(ctx, cfg, []string{"refs/heads/" + e.Cfg.Workflow.Branch}, since, until)
	if err != nil {
		*said = append(*said, "warning: workflow branch not read: "+err.Error())
		return kept
	}
	seen := map[string]bool{}
	for _, ev := range kept {
		seen[ev.ID] = true
	}
	for _, ev := range lr.Events {
		if !seen[ev.ID] {
			seen[ev.ID] = true
			kept = append(kept, ev)
		}
	}
	slices.SortStableFunc(kept, func(x, y journal.Event) int {
		if c := x.Timestamp.Compare(y.Timestamp); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return kept
}

// appendLines appends raw lines to the journal, as a crash or a hand edit
// leaves them.
func appendLines(t *testing.T, e *Workspace, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(e.JournalFile().Path(), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "")); err != nil {
		t.Fatal(err)
	}
}

// catchUpRotating is record with the journal rotated once past rotate
// bytes, as a command with journal.rotate_bytes does.
func catchUpRotating(t *testing.T, e *Workspace, rotate int64, evs []journal.Event) {
	t.Helper()
	if err := e.JournalFile().Append(evs...); err != nil {
		t.Fatal(err)
	}
	w, err := workflow.Open(workflow.Config{GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree(),
		Branch: e.Cfg.Workflow.Branch, RotateJournal: rotate})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.CatchUp(context.Background(), e.JournalFile()); err != nil {
		t.Fatal(err)
	}
}

// spanEvents is n lock events of worker at an hour's spacing, the last at
// end.
func spanEvents(worker string, n int, end time.Time) []journal.Event {
	evs := make([]journal.Event, n)
	for i := range evs {
		evs[i] = lockEv(journal.ActionAcquire, worker, fmt.Sprintf("src/%s/%d.go", worker, i), uint64(i+1),
			end.Add(-time.Duration(n-1-i)*time.Hour), time.Hour)
	}
	return evs
}

// log and the board read only the journal after the sync mark when the
// workflow branch still holds the mark's tip, and what they show (events
// and warnings) is what reading the whole journal shows: with and without
// a mark, with the journal rotated, with a mark of another segment, with
// the branch rewound past the mark or not readable, with events not on
// the branch, with lines that are not events, torn or not, and with lines
// written by hand.
func TestLogAndBoardReadTheJournalAfterTheSyncMark(t *testing.T) {
	t.Parallel()
	now := commitDay.Add(time.Hour)
	branch := "refs/heads/lockgate/workflow"
	cases := []struct {
		name      string
		afterSync bool // the journal is read from the mark
		setup     func(t *testing.T, r *gittest.Repo, e *Workspace)
	}{
		{"no mark", false, func(t *testing.T, _ *gittest.Repo, e *Workspace) {
			evs := spanEvents("a", 40, now.Add(-time.Minute))
			if err := e.JournalFile().Append(evs...); err != nil {
				t.Fatal(err)
			}
			seedBranch(t, e, evs[:30])
		}},
		{"mark, then events not on the branch", true, func(t *testing.T, _ *gittest.Repo, e *Workspace) {
			record(t, e, spanEvents("a", 40, now.Add(-3*time.Hour)))
			seedBranch(t, e, spanEvents("b", 20, now.Add(-90*time.Minute))) // another clone's
			if err := e.JournalFile().Append(spanEvents("c", 5, now.Add(-2*time.Minute))...); err != nil {
				t.Fatal(err)
			}
		}},
		{"rotated journal", true, func(t *testing.T, _ *gittest.Repo, e *Workspace) {
			catchUpRotating(t, e, 4096, spanEvents("a", 40, now.Add(-10*time.Hour)))
			if _, err := os.Stat(e.JournalFile().PreviousPath()); err != nil {
				t.Fatalf("the journal was not rotated: %v", err)
			}
			catchUpRotating(t, e, 1<<20, spanEvents("b", 6, now.Add(-2*time.Hour)))
			if err := e.JournalFile().Append(spanEvents("c", 3, now.Add(-time.Minute))...); err != nil {
				t.Fatal(err)
			}
		}},
		{"mark of another segment", false, func(t *testing.T, _ *gittest.Repo, e *Workspace) {
			record(t, e, spanEvents("a", 40, now.Add(-3*time.Hour)))
			// Rotated behind the writer's back: the mark names the
			// previous segment now.
			if ok, err := e.JournalFile().Rotate(1, func([]journal.Event) (bool, error) { return true, nil }); err != nil || !ok {
				t.Fatalf("rotate: %v, %v", ok, err)
			}
			if err := e.JournalFile().Append(spanEvents("c", 5, now.Add(-2*time.Minute))...); err != nil {
				t.Fatal(err)
			}
		}},
		{"branch rewound past the mark", false, func(t *testing.T, r *gittest.Repo, e *Workspace) {
			record(t, e, spanEvents("a", 10, now.Add(-20*time.Hour)))
			first := strings.TrimSpace(r.Git("rev-parse", branch))
			record(t, e, spanEvents("b", 30, now.Add(-time.Hour)))
			r.Git("update-ref", branch, first)
		}},
		{"branch not readable", true, func(t *testing.T, r *gittest.Repo, e *Workspace) {
			record(t, e, spanEvents("a", 40, now.Add(-time.Hour)))
			// A commit on top whose events/ holds a file that is not an
			// event: the branch holds the mark's tip, and cannot be read.
			blob := strings.TrimSpace(r.Git("hash-object", "-w", "--stdin"))
			index := r.Dir + "/.git/logspan-index"
			env := "GIT_INDEX_FILE=" + index
			gitEnv(t, r, env, "read-tree", branch)
			gitEnv(t, r, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+",events/zz/zz/not-an-event.txt")
			tree := strings.TrimSpace(gitEnv(t, r, env, "write-tree"))
			commit := strings.TrimSpace(r.Git("commit-tree", "-p", branch, "-m", "damage", tree))
			r.Git("update-ref", branch, commit)
		}},
		{"lines that are not events", true, func(t *testing.T, _ *gittest.Repo, e *Workspace) {
			record(t, e, spanEvents("a", 20, now.Add(-5*time.Hour)))
			// Not events: the mark stops before the first, where
			// CatchUp leaves it however much follows.
			appendLines(t, e, "not json\n",
				fmt.Sprintf(`{"id":"old-broken","timestamp":"%s","action":`+"\n", now.Add(-40*time.Hour).Format(time.RFC3339Nano)),
				fmt.Sprintf(`{"id":"new-broken","timestamp":"%s","action":`+"\n", now.Add(-time.Minute).Format(time.RFC3339Nano)))
			record(t, e, spanEvents("b", 20, now.Add(-3*time.Hour)))
			appendLines(t, e, `{"id":"torn","timestamp":"`)
		}},
		{"lines written by hand", true, func(t *testing.T, _ *gittest.Repo, e *Workspace) {
			record(t, e, spanEvents("a", 20, now.Add(-5*time.Hour)))
			// Lines not as Append writes them whose events the branch
			// gives back the same: the mark passes them.
			appendLines(t, e,
				fmt.Sprintf(`{"timestamp":"%s","id":"reordered","worker":"hand","action":"lock_acquire","key":"src/r.go","newer":1}`+"\n", now.Add(-3*time.Hour).Format(time.RFC3339)),
				fmt.Sprintf(`{"id":"bytes","timestamp":"%s","worker":"hand","action":"lock_release","details":"\xff"}`+"\n", now.Add(-3*time.Hour).Format(time.RFC3339)))
			record(t, e, spanEvents("m", 2, now.Add(-150*time.Minute)))
			// Events, but not as Append writes them: the branch holds
			// them otherwise (an id derived, the time in UTC).
			appendLines(t, e,
				fmt.Sprintf(`{"timestamp":"%s","worker":"hand","action":"lock_acquire","key":"src/h.go"}`+"\n", now.Add(-2*time.Hour).Format(time.RFC3339)),
				fmt.Sprintf(`{"id":"zone","timestamp":"%s","worker":"hand","action":"lock_release","key":"src/h.go"}`+"\n",
					now.Add(-90*time.Minute).In(time.FixedZone("X", 3600)).Format(time.RFC3339)))
			record(t, e, spanEvents("b", 20, now.Add(-time.Hour)))
		}},
	}
	spans := []struct{ since, until time.Time }{
		{time.Time{}, time.Time{}},
		{now.Add(-24 * time.Hour), time.Time{}},
		{now.Add(-time.Hour), time.Time{}},
		{now.Add(-6 * time.Hour), now.Add(-2 * time.Hour)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			r, e := verifyRepo(t)
			var said []string
			e.Opts.Notify = func(level, msg string, _ ...string) { said = append(said, level+": "+msg) }
			tc.setup(t, r, e)
			for _, sp := range spans {
				said = nil
				want := wholeJournalReading(ctx, t, e, &said, sp.since, sp.until)
				wantSaid := said
				said = nil
				jr, err := e.recentJournal(ctx, sp.since, 0)
				if err != nil {
					t.Fatal(err)
				}
				if jr.afterSync != tc.afterSync {
					t.Fatalf("since %v: the journal read after the sync mark: %v, want %v", sp.since, jr.afterSync, tc.afterSync)
				}
				got, err := e.allEvents(ctx, sp.since, sp.until)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(got, want, eventsEqual) || !slices.Equal(said, wantSaid) {
					t.Fatalf("since %v until %v:\n got %d events %v\n%q\nwant %d events %v\n%q", sp.since, sp.until,
						len(got), eventIDs(got), said, len(want), eventIDs(want), wantSaid)
				}
			}
			// The board: the last events of the day, as the whole
			// journal and the branch give them.
			said = nil
			day := now.Add(-24 * time.Hour)
			all := wholeJournalReading(ctx, t, e, &said, day, time.Time{})
			wantSaid := said
			var want []EventView
			for _, ev := range all[max(len(all)-boardEvents, 0):] {
				want = append(want, EventView{Timestamp: ev.Timestamp, Worker: ev.Worker, Action: ev.Action, Key: ev.Key})
			}
			said = nil
			got, err := e.Board().lastEvents(ctx, day)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, func(a, b EventView) bool {
				return a.Timestamp.Equal(b.Timestamp) && a.Timestamp.Location().String() == b.Timestamp.Location().String() &&
					a.Worker == b.Worker && a.Action == b.Action && a.Key == b.Key
			}) || !slices.Equal(said, wantSaid) {
				t.Fatalf("board:\n got %+v %q\nwant %+v %q", got, said, want, wantSaid)
			}
		})
	}
}

// gitEnv runs git in r with one more variable in its environment.
func gitEnv(t *testing.T, r *gittest.Repo, env string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.Dir}, args...)...)
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}

// eventsEqual: a and b are the same event, as log shows it.
func eventsEqual(a, b journal.Event) bool {
	ja, err1 := jsonOf(a)
	jb, err2 := jsonOf(b)
	return err1 == nil && err2 == nil && ja == jb
}

// jsonOf is ev as `log --json` writes it.
func jsonOf(ev journal.Event) (string, error) {
	b, err := json.Marshal(ev)
	return string(b), err
}

// eventIDs is the ids of evs, to name them in a failure.
func eventIDs(evs []journal.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}
