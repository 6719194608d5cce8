package hooks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
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

// commitAt commits everything with the given committer and author times
// and message.
func commitAt(r *gittest.Repo, committer, author time.Time, msg string) {
	r.Git("add", "-A")
	env := r.Env
	r.Env = append(append([]string(nil), env...), "GIT_COMMITTER_DATE="+committer.Format(time.RFC3339), "GIT_AUTHOR_DATE="+author.Format(time.RFC3339))
	r.Git("commit", "-q", "--no-verify", "--allow-empty", "-m", msg)
	r.Env = env
}

// verifyCommits verifies the commits after init against evs, at now.
func verifyCommits(t *testing.T, r *gittest.Repo, me locks.Owner, now time.Time, evs ...journal.Event) *Report {
	t.Helper()
	h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, Checker: &Checker{Me: me, Now: now}}
	rep := &Report{Hook: "verify"}
	if err := h.Verify(context.Background(), []string{"init..HEAD"}, "", func() ([]journal.Event, error) { return evs, nil }, rep); err != nil {
		t.Fatal(err)
	}
	rep.Finish()
	return rep
}

func newVerifyRepo(t *testing.T) *gittest.Repo {
	r := gittest.New(t)
	r.Write("a.go", "0\n")
	r.Write("b.go", "0\n")
	r.Commit("init")
	r.Git("tag", "init")
	return r
}

var (
	aliceW = locks.Owner{Holder: "alice", HolderType: "agent", Session: "alice"}
	bobW   = locks.Owner{Holder: "bob", HolderType: "agent", Session: "bob"}
)

// A commit dated later than now cannot be judged: no log tells who will
// hold its paths then.
func TestVerifyFutureCommit(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	r.Write("a.go", "1\n")
	commitAt(r, committed.Add(2*time.Hour), committed.Add(2*time.Hour), "from the future")
	rep := verifyCommits(t, r, bobW, committed.Add(time.Minute),
		lockEvent(committed.Add(-time.Hour), "alice", journal.ActionAcquire, "a.go", 1, committed.Add(time.Hour)))
	if len(rep.Undecided) != 1 || !strings.Contains(rep.Undecided[0].Reason, "later than now") || rep.OK {
		t.Fatalf("report %+v, want the commit undecided", rep)
	}
}

// A commit dated before its parent is judged at its parent's time.
func TestVerifyBackdatedCommit(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	r.Write("b.go", "1\n")
	commitAt(r, committed, committed, "b now")
	r.Write("a.go", "1\n")
	commitAt(r, committed.Add(-time.Hour), committed.Add(-time.Hour), "a back-dated")
	rep := verifyCommits(t, r, bobW, committed.Add(time.Minute),
		lockEvent(committed.Add(-2*time.Hour), "setup", journal.ActionStoreUse, "", 0, time.Time{}),
		lockEvent(committed.Add(-10*time.Minute), "alice", journal.ActionAcquire, "a.go", 1, committed.Add(time.Hour)))
	if len(rep.Violations) != 1 || rep.Violations[0].Rule != RuleLocked || rep.Violations[0].Holder != "alice" {
		t.Fatalf("violations %+v, want a.go locked by alice", rep.Violations)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "before its parent") {
		t.Fatalf("warnings %q", rep.Warnings)
	}
}

// Rebasing dates a commit anew and keeps its trailers: the lock they name
// covered it when it was written, and that is enough.
func TestVerifyRebasedTrailers(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	r.Write("a.go", "1\n")
	msg := "a by alice\n\nLockgate-Worker: alice\nLockgate-Worker-Type: agent\nLockgate-Session: alice\nLockgate-Lock: a.go fence=1\n"
	commitAt(r, committed.Add(30*time.Minute), committed, msg)
	evs := []journal.Event{
		lockEvent(committed.Add(-time.Hour), "alice", journal.ActionAcquire, "a.go", 1, committed.Add(time.Hour)),
		lockEvent(committed.Add(10*time.Minute), "alice", journal.ActionRelease, "a.go", 1, time.Time{}),
	}
	if rep := verifyCommits(t, r, bobW, committed.Add(time.Hour), evs...); !rep.OK || len(rep.Undecided) > 0 {
		t.Fatalf("report %+v, want proven", rep)
	}
	// Written after the release too: the trailer attests a lock that had
	// ended.
	r.Git("reset", "-q", "--hard", "init")
	r.Write("a.go", "1\n")
	commitAt(r, committed.Add(30*time.Minute), committed.Add(20*time.Minute), msg)
	rep := verifyCommits(t, r, bobW, committed.Add(time.Hour), evs...)
	if len(rep.Violations) != 1 || rep.Violations[0].Rule != RuleAttestation || rep.Violations[0].Path != "a.go" {
		t.Fatalf("violations %+v, want one attestation on a.go", rep.Violations)
	}
}

// A trailer may name a lock on a path the commit itself does not show
// changing (a clean merge): its grant is in the log all the same.
func TestVerifyTrailerOfAnUntouchedPath(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	msg := "merge-like\n\nLockgate-Worker: alice\nLockgate-Worker-Type: agent\nLockgate-Session: alice\nLockgate-Lock: a.go fence=1\n"
	r.Write("b.go", "1\n")
	commitAt(r, committed, committed, msg)
	rep := verifyCommits(t, r, aliceW, committed.Add(time.Hour),
		lockEvent(committed.Add(-time.Hour), "alice", journal.ActionAcquire, "a.go", 1, committed.Add(time.Hour)))
	if !rep.OK || len(rep.Undecided) > 0 {
		t.Fatalf("report %+v, want proven", rep)
	}
}

// A trailer naming another's fence: on a shared store the fence names one
// grant, so it is a violation; each clone's file store counts fences of
// its own, so there the author's grant may be missing: undecided.
func TestVerifyForeignFence(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"git origin refs/lockgate/locks", "file"} {
		r := newVerifyRepo(t)
		r.Write("b.go", "1\n")
		msg := "b by bob\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\nLockgate-Session: bob\nLockgate-Lock: b.go fence=1\n"
		commitAt(r, committed, committed, msg)
		ev := lockEvent(committed.Add(-time.Hour), "alice", journal.ActionAcquire, "b.go", 1, committed.Add(-30*time.Minute))
		ev.Store = store
		rep := verifyCommits(t, r, bobW, committed.Add(time.Hour), ev)
		attested := len(rep.Violations) == 1 && rep.Violations[0].Rule == RuleAttestation
		undecided := len(rep.Undecided) == 1 && strings.Contains(rep.Undecided[0].Reason, "count fences apart")
		if store == "file" && (!undecided || len(rep.Violations) > 0) || store != "file" && (!attested || len(rep.Undecided) > 0) {
			t.Errorf("store %s: violations %+v, undecided %+v", store, rep.Violations, rep.Undecided)
		}
	}
}

// An event of an action this version does not know, about a key a commit
// touches, leaves the commit undecided: never read as free.
func TestVerifyUnknownAction(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	r.Write("a.go", "1\n")
	commitAt(r, committed, committed, "a")
	rep := verifyCommits(t, r, bobW, committed.Add(time.Hour),
		lockEvent(committed.Add(-2*time.Hour), "setup", journal.ActionStoreUse, "", 0, time.Time{}),
		lockEvent(committed.Add(-time.Hour), "alice", "lock_grab", "a.go", 1, committed.Add(time.Hour)))
	if len(rep.Undecided) != 1 || !strings.Contains(rep.Undecided[0].Reason, "an event lock_grab this version of lockgate does not know") {
		t.Fatalf("report %+v, want the commit undecided", rep)
	}
}

func verifyCommitsRequiringLock(t *testing.T, r *gittest.Repo, me locks.Owner, now time.Time, evs ...journal.Event) *Report {
	t.Helper()
	h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, Checker: &Checker{Me: me, Now: now, RequireLock: true}}
	rep := &Report{Hook: "verify"}
	if err := h.Verify(context.Background(), []string{"init..HEAD"}, "", func() ([]journal.Event, error) { return evs, nil }, rep); err != nil {
		t.Fatal(err)
	}
	rep.Finish()
	return rep
}

// A rebase under hooks.require_lock: alice commits under fence 2,
// releases, rebases (a new committer time) and takes the lock again to
// push. The trailer names her grant of when she wrote it: the commit was
// locked, and no longer judged not_locked at its committer time.
func TestVerifyRebasedRequireLock(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	r.Write("a.go", "1\n")
	msg := "a by alice\n\nLockgate-Worker: alice\nLockgate-Worker-Type: agent\nLockgate-Session: alice\nLockgate-Lock: a.go fence=2\n"
	commitAt(r, committed.Add(30*time.Minute), committed, msg)
	gitStore := "git origin refs/lockgate/locks"
	evs := []journal.Event{
		lockEvent(committed.Add(-time.Hour), "alice", journal.ActionAcquire, "a.go", 2, committed.Add(time.Hour)),
		lockEvent(committed.Add(10*time.Minute), "alice", journal.ActionRelease, "a.go", 2, time.Time{}),
		lockEvent(committed.Add(40*time.Minute), "alice", journal.ActionAcquire, "a.go", 3, committed.Add(2*time.Hour)),
	}
	for i := range evs {
		evs[i].Store = gitStore
	}
	if rep := verifyCommitsRequiringLock(t, r, bobW, committed.Add(3*time.Hour), evs...); !rep.OK || len(rep.Undecided) > 0 {
		t.Fatalf("report %+v, want proven", rep)
	}
	// Without the trailer the commit held no lock at its committer time.
	r.Git("reset", "-q", "--hard", "init")
	r.Write("a.go", "1\n")
	commitAt(r, committed.Add(30*time.Minute), committed, "a by alice\n\nLockgate-Worker: alice\nLockgate-Worker-Type: agent\nLockgate-Session: alice\n")
	rep := verifyCommitsRequiringLock(t, r, bobW, committed.Add(3*time.Hour), evs...)
	if len(rep.Violations) != 1 || rep.Violations[0].Rule != RuleNotLocked {
		t.Fatalf("violations %+v, want a.go not_locked", rep.Violations)
	}
}

// Fast hand-overs on a shared store are decided by the fences: a commit
// whose trailer names its author's grant met no other grant of that key,
// whatever the clocks say within the margin, and even when the log lacks
// the end of the grant before it. Without a trailer, the clock decides.
func TestVerifyFastHandOverByFence(t *testing.T) {
	t.Parallel()
	gitStore := "git origin refs/lockgate/locks"
	ms := func(d time.Duration) time.Time { return committed.Add(d) }
	cases := []struct {
		name string
		evs  []journal.Event
	}{
		{"alice released just before bob's grant", []journal.Event{
			lockEvent(ms(-time.Minute), "alice", journal.ActionAcquire, "a.go", 4, ms(time.Hour)),
			lockEvent(ms(-700*time.Millisecond), "alice", journal.ActionRelease, "a.go", 4, time.Time{}),
			lockEvent(ms(-600*time.Millisecond), "bob", journal.ActionAcquire, "a.go", 5, ms(time.Hour)),
			lockEvent(ms(1500*time.Millisecond), "bob", journal.ActionRelease, "a.go", 5, time.Time{}),
			lockEvent(ms(1600*time.Millisecond), "carol", journal.ActionAcquire, "a.go", 6, ms(time.Hour)),
		}},
		{"alice's release dated late by a fast clock", []journal.Event{
			lockEvent(ms(-time.Minute), "alice", journal.ActionAcquire, "a.go", 4, ms(time.Hour)),
			lockEvent(ms(-500*time.Millisecond), "bob", journal.ActionAcquire, "a.go", 5, ms(time.Hour)),
			lockEvent(ms(5*time.Second), "alice", journal.ActionRelease, "a.go", 4, time.Time{}),
		}},
		{"alice's grant without an end", []journal.Event{
			lockEvent(ms(-time.Minute), "alice", journal.ActionAcquire, "a.go", 4, time.Time{}),
			lockEvent(ms(-500*time.Millisecond), "bob", journal.ActionAcquire, "a.go", 5, ms(time.Hour)),
		}},
	}
	withTrailer := "a by bob\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\nLockgate-Session: bob\nLockgate-Lock: a.go fence=5\n"
	for _, c := range cases {
		for i := range c.evs {
			c.evs[i].Store = gitStore
		}
		r := newVerifyRepo(t)
		r.Write("a.go", "1\n")
		commitAt(r, committed, committed, withTrailer)
		rep := verifyCommits(t, r, aliceW, ms(time.Hour), c.evs...)
		if !rep.OK || len(rep.Undecided) > 0 || len(rep.Warnings) > 0 {
			t.Errorf("%s: violations %+v, undecided %+v, warnings %q; want proven without a word", c.name, rep.Violations, rep.Undecided, rep.Warnings)
		}
	}
	// The same hand-over, a commit by carol without trailers: the clock
	// decides, and bob's grant within the margin is not proven either way.
	r := newVerifyRepo(t)
	r.Write("a.go", "1\n")
	commitAt(r, committed, committed, "a by carol\n\nLockgate-Worker: carol\nLockgate-Worker-Type: agent\nLockgate-Session: carol\n")
	rep := verifyCommits(t, r, aliceW, ms(time.Hour), cases[0].evs...)
	if !rep.OK || len(rep.Warnings) == 0 {
		t.Errorf("carol without trailers: violations %+v, warnings %q; want proven with a warning", rep.Violations, rep.Warnings)
	}
}

// A fleet's first commits are made within seconds of the log's first
// event. A commit whose trailers name a grant whose acquisition the log
// has was made after the log began: it is judged. One without trailers
// may have been made before: undecided.
func TestVerifyCommitAtTheLogsBeginning(t *testing.T) {
	t.Parallel()
	acq := lockEvent(committed.Add(-500*time.Millisecond), "alice", journal.ActionAcquire, "a.go", 1, committed.Add(time.Hour))
	acq.Store = "git origin refs/lockgate/locks"
	r := newVerifyRepo(t)
	r.Write("a.go", "1\n")
	commitAt(r, committed, committed, "a by alice\n\nLockgate-Worker: alice\nLockgate-Worker-Type: agent\nLockgate-Session: alice\nLockgate-Lock: a.go fence=1\n")
	if rep := verifyCommits(t, r, bobW, committed.Add(time.Hour), acq); !rep.OK || len(rep.Undecided) > 0 {
		t.Fatalf("report %+v, want proven", rep)
	}
	r = newVerifyRepo(t)
	r.Write("a.go", "1\n")
	commitAt(r, committed, committed, "a by alice\n\nLockgate-Worker: alice\nLockgate-Worker-Type: agent\nLockgate-Session: alice\n")
	rep := verifyCommits(t, r, bobW, committed.Add(time.Hour), acq)
	if len(rep.Undecided) != 1 || !strings.Contains(rep.Undecided[0].Reason, "the lock log begins at") || len(rep.Violations) > 0 {
		t.Fatalf("report %+v, want undecided: made before the log began", rep)
	}
}

// verify --staged during a merge judges what the merge changes beyond its
// parents, as the hooks do: a file the other side brings in unchanged is
// not the merger's change, even while another holds it.
func TestVerifyStagedMerge(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	r.Git("checkout", "-q", "-b", "side")
	r.Write("a.go", "alice's\n")
	commitAt(r, committed, committed, "a by alice")
	r.Git("checkout", "-q", "-")
	r.Write("b.go", "bob's\n")
	commitAt(r, committed, committed, "b by bob")
	r.Git("merge", "-q", "--no-commit", "--no-ff", "side")
	now := committed.Add(time.Minute)
	evs := []journal.Event{lockEvent(committed.Add(-time.Hour), "alice", journal.ActionAcquire, "a.go", 1, committed.Add(time.Hour))}
	h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, Checker: &Checker{Me: bobW, Now: now}}
	rep := &Report{Hook: "verify"}
	if err := h.VerifyStaged(context.Background(), now, history.Build(evs), rep); err != nil {
		t.Fatal(err)
	}
	rep.Finish()
	if !rep.OK || len(rep.Undecided) > 0 {
		t.Fatalf("report %+v, want the merge proven", rep)
	}
	// A resolution that edits alice's file is bob's change.
	r.Write("a.go", "bob's edit\n")
	r.Git("add", "a.go")
	rep = &Report{Hook: "verify"}
	h.MergeParents = nil
	if err := h.VerifyStaged(context.Background(), now, history.Build(evs), rep); err != nil {
		t.Fatal(err)
	}
	rep.Finish()
	if len(rep.Violations) != 1 || rep.Violations[0].Rule != RuleLocked {
		t.Fatalf("violations %+v, want a.go locked by alice", rep.Violations)
	}
}

// A staged change made within the margin of the lock log's first event
// cannot be judged, and its paths still count: a report of no path would
// say nothing is staged.
func TestVerifyStagedAtTheLogsBeginning(t *testing.T) {
	t.Parallel()
	r := newVerifyRepo(t)
	r.Write("a.go", "1\n")
	r.Git("add", "a.go")
	now := committed.Add(time.Hour)
	evs := []journal.Event{lockEvent(now.Add(-time.Second), "alice", journal.ActionAcquire, "b.go", 1, now.Add(time.Hour))}
	h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, Checker: &Checker{Me: bobW, Now: now}}
	rep := &Report{Hook: "verify"}
	if err := h.VerifyStaged(context.Background(), now, history.Build(evs), rep); err != nil {
		t.Fatal(err)
	}
	rep.Finish()
	if rep.OK || len(rep.Undecided) != 1 || rep.Paths != 1 {
		t.Fatalf("report %+v, want a.go counted and undecided", rep)
	}
}
