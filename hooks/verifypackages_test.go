package hooks

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks/journal"
)

// verify lists the packages the range's commits finished — by the event's
// commit field, or by the details of an event of an earlier version, a
// commit that changes no file too — and notes a package marked done,
// while the range's commits were made, at a commit outside the range's
// history: on another branch, or one the clone does not have. A done at
// an older commit of the history, or at another time, is neither.
func TestVerifyPackagesDone(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	initSHA := r.Git("rev-parse", "HEAD")
	r.Git("checkout", "-q", "-b", "side")
	r.Write("b.go", "side\n")
	commitAt(r, committed, committed, "side")
	side := r.Git("rev-parse", "HEAD")
	r.Git("checkout", "-q", "-")
	r.Write("a.go", "1\n")
	commitAt(r, committed, committed, "a")
	a := r.Git("rev-parse", "HEAD")
	commitAt(r, committed.Add(time.Hour), committed.Add(time.Hour), "empty")
	empty := r.Git("rev-parse", "HEAD")
	missing := strings.Repeat("0123456789", 4)
	done := func(at time.Time, id, commit, details string) journal.Event {
		ev := lockEvent(at, "alice", journal.ActionDone, "task:"+id, 1, time.Time{})
		ev.TaskID, ev.Commit, ev.Details = id, commit, details
		return ev
	}
	rep := verifyCommits(t, r, aliceW, committed.Add(2*time.Hour),
		lockEvent(committed.Add(-2*time.Hour), "setup", journal.ActionStoreUse, "", 0, time.Time{}),
		done(committed.Add(90*time.Minute), "WP-2", "", "commit "+empty+": the second"),
		done(committed.Add(time.Minute), "WP-1", a, "commit "+a+": the first"),
		done(committed.Add(30*time.Minute), "WP-3", side, "commit "+side+": on a side branch"),
		done(committed.Add(31*time.Minute), "WP-4", initSHA, "commit "+initSHA+": older"),
		done(committed.Add(3*time.Hour), "WP-5", side, "commit "+side+": later"),
		done(committed.Add(40*time.Minute), "WP-6", missing, "commit "+missing+": elsewhere"),
		done(committed.Add(41*time.Minute), "WP-7", "", "no commit"))
	if !rep.OK {
		t.Fatalf("report %+v, want OK: notes decide nothing", rep)
	}
	var got []string
	for _, d := range rep.PackagesDone {
		got = append(got, d.Package+"@"+d.Commit)
	}
	if want := []string{"WP-1@" + a, "WP-2@" + empty}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("packages done %q, want %q", got, want)
	}
	got = nil
	for _, d := range rep.PackagesDoneOutside {
		got = append(got, d.Package+"@"+d.Commit)
	}
	if want := []string{"WP-3@" + side, "WP-6@" + missing}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("packages done outside %q, want %q", got, want)
	}
	var text bytes.Buffer
	rep.WriteText(&text, "verify")
	for _, want := range []string{
		"lockgate: verify: 2 work packages finished by a commit of the range:\n",
		"  WP-1 at commit " + a[:12] + " by alice (agent) at " + stamp(committed.Add(time.Minute)) + "\n",
		"lockgate: note: package WP-3 was marked done at " + stamp(committed.Add(30*time.Minute)) + " by alice naming commit " + side[:12] + ", which is not in the history of the verified range\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"packages_done":[{"package":"WP-1","commit":"`+a+`","worker":"alice","worker_type":"agent","at":`)) ||
		!bytes.Contains(data, []byte(`"packages_done_outside":[{"package":"WP-3"`)) {
		t.Errorf("--json: %s", data)
	}
	var gh bytes.Buffer
	rep.WriteGitHub(&gh)
	if !strings.Contains(gh.String(), "::notice title=lockgate::package WP-3 was marked done") {
		t.Errorf("github: %s", gh.String())
	}
}

// pre-receive verifies a push, not the packages it finishes: its report
// lists none.
func TestPreReceiveListsNoPackages(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	r.Write("a.go", "1\n")
	commitAt(r, committed, committed, "a")
	a := r.Git("rev-parse", "HEAD")
	ev := lockEvent(committed.Add(time.Minute), "alice", journal.ActionDone, "task:WP-1", 1, time.Time{})
	ev.TaskID, ev.Commit = "WP-1", a
	h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, Checker: &Checker{Me: aliceW, Now: committed.Add(time.Hour)}}
	rep := &Report{Hook: "pre-receive"}
	evs := []journal.Event{lockEvent(committed.Add(-time.Hour), "setup", journal.ActionStoreUse, "", 0, time.Time{}), ev}
	if err := h.Verify(t.Context(), []string{"init..HEAD"}, "", func() ([]journal.Event, error) { return evs, nil }, rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.PackagesDone) != 0 {
		t.Fatalf("pre-receive listed packages: %+v", rep.PackagesDone)
	}
}
