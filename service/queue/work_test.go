package queue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/service/queue/queuetest"
	"github.com/lockgate/lockgate/service/session"
)

// fakeClock is the handlers' one clock in these tests.
type fakeClock = queuetest.Clock

const queuePackages = queuetest.Packages

// queueRepo is queuetest.Repo, its workers' sessions each a queue handler.
func queueRepo(t *testing.T, yaml string) (*gittest.Repo, *fakeClock, func(worker string) *Handler) {
	t.Helper()
	r, clock, open := queuetest.Repo(t, yaml)
	return r, clock, func(worker string) *Handler { return &Handler{Workspace: open(worker)} }
}

func pkgReq(id string) PackageRequest { return PackageRequest{ID: id} }

func claimed(t *testing.T, e *Handler, id string) Claimed {
	t.Helper()
	c, err := e.ClaimWork(context.Background(), ClaimRequest{PackageRequest: pkgReq(id), TTL: time.Hour})
	if err != nil {
		t.Fatalf("claim %q: %v", id, err)
	}
	return c
}

func finished(t *testing.T, e *Handler, id, failed string) {
	t.Helper()
	if _, err := e.FinishPackage(context.Background(), FinishRequest{PackageRequest: pkgReq(id), Finish: Finish{Failed: failed}}); err != nil {
		t.Fatalf("finish %s: %v", id, err)
	}
}

// take has e take keys (canonical paths) outside any claim, for an hour,
// as `lockgate lock acquire` does.
func take(t *testing.T, e *Handler, keys ...string) {
	t.Helper()
	if _, err := e.Mgr.Acquire(context.Background(), locks.Request{Keys: keys, Owner: e.Me, TTL: time.Hour, Action: "lock"}); err != nil {
		t.Fatal(err)
	}
}

// asType reports whether err is (or wraps) an error of T's type.
func asType[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

func TestClaimWork(t *testing.T) {
	tests := []struct {
		name string
		// setup runs as alice and bob before carol claims id.
		setup   func(t *testing.T, alice, bob *Handler)
		id      string
		want    string // the package claimed
		drained bool
		check   func(t *testing.T, err error)
	}{
		{name: "next: priority first", want: "WP-2"},
		{name: "named", id: "WP-4", want: "WP-4"},
		{name: "named, not in the file", id: "WP-9", check: func(t *testing.T, err error) {
			if !asType[*session.UsageError](err) || !strings.Contains(err.Error(), `no work package "WP-9"`) {
				t.Errorf("err = %v, want a usage error naming WP-9", err)
			}
		}},
		{name: "named, waits for a dependency", id: "WP-3", check: func(t *testing.T, err error) {
			var st *PackageStateError
			if !errors.As(err, &st) || st.Status.WaitsFor[0] != "WP-1" {
				t.Errorf("err = %v, want a PackageStateError waiting for WP-1", err)
			}
		}},
		{name: "named, done", id: "WP-2", setup: func(t *testing.T, alice, _ *Handler) {
			claimed(t, alice, "WP-2")
			finished(t, alice, "WP-2", "")
		}, check: func(t *testing.T, err error) {
			var st *PackageStateError
			if !errors.As(err, &st) || st.Status.State != PackageDone || st.Status.Holder != "alice" {
				t.Errorf("err = %v, want a PackageStateError: done by alice", err)
			}
		}},
		{name: "named, failed", id: "WP-2", setup: func(t *testing.T, alice, _ *Handler) {
			claimed(t, alice, "WP-2")
			finished(t, alice, "WP-2", "tests red")
		}, check: func(t *testing.T, err error) {
			var st *PackageStateError
			if !errors.As(err, &st) || st.Status.State != PackageFailed || st.Status.Reason != "tests red" {
				t.Errorf("err = %v, want a PackageStateError: failed", err)
			}
		}},
		{name: "next: skips claimed and blocked packages", setup: func(t *testing.T, alice, bob *Handler) {
			claimed(t, alice, "WP-2")
			claimed(t, bob, "WP-1")
		}, check: func(t *testing.T, err error) {
			var none *NoFreePackageError
			if !errors.As(err, &none) {
				t.Fatalf("err = %v, want a NoFreePackageError", err)
			}
			if none.Last != "WP-4" || len(none.Blocked) != 1 || len(none.Waiting) != 1 || none.Waiting[0].ID != "WP-3" || none.Claimed != 2 {
				t.Errorf("none = %+v, want WP-4 blocked (last), WP-3 waiting, 2 claimed", none)
			}
			if !asType[*locks.HeldError](err) {
				t.Errorf("err = %v does not wrap the lock in WP-4's way", err)
			}
		}},
		{name: "next: drained", drained: true, setup: func(t *testing.T, alice, _ *Handler) {
			for _, id := range []string{"WP-2", "WP-1", "WP-3", "WP-4"} {
				claimed(t, alice, id)
				finished(t, alice, id, "")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, open := queueRepo(t, queuePackages)
			if tc.setup != nil {
				tc.setup(t, open("alice"), open("bob"))
			}
			c, err := open("carol").ClaimWork(context.Background(), ClaimRequest{PackageRequest: pkgReq(tc.id), TTL: time.Hour})
			if tc.check != nil {
				tc.check(t, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.ID != tc.want || c.Drained != tc.drained {
				t.Fatalf("claimed %q (drained %v), want %q (drained %v)", c.ID, c.Drained, tc.want, tc.drained)
			}
			if tc.drained {
				if c.Queue.Counts[PackageDone] != 4 {
					t.Errorf("counts = %v, want 4 done", c.Queue.Counts)
				}
				return
			}
			if task := taskOf(c); len(c.Locks) < 2 || task.Lock.Key != "task:"+tc.want || task.Lock.Holder != "carol" {
				t.Errorf("locks = %+v, want the task record among them, held by carol", c.Locks)
			}
		})
	}
}

func TestClaimWorkTakesOverAnExpiredClaim(t *testing.T) {
	_, clock, open := queueRepo(t, queuePackages)
	alice, bob := open("alice"), open("bob")
	old := taskOf(claimed(t, alice, "WP-1"))
	clock.Add(2 * time.Hour)
	task := taskOf(claimed(t, bob, "WP-1"))
	if task.TookOver == nil || task.TookOver.Holder != "alice" || task.Lock.Fence <= old.Lock.Fence {
		t.Fatalf("took over %+v (fence %d after %d), want alice's claim under a higher fence", task.TookOver, task.Lock.Fence, old.Lock.Fence)
	}
}

// taskOf is the result of c's task record.
func taskOf(c Claimed) locks.Result {
	for _, r := range c.Locks {
		if r.Lock.Key == "task:"+c.ID {
			return r
		}
	}
	return locks.Result{}
}

func TestFinishPackage(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, clock *fakeClock, alice, bob *Handler)
		how   Finish
		check func(t *testing.T, f Finished, err error, head string)
	}{
		{name: "done at HEAD", setup: claimWP1, check: func(t *testing.T, f Finished, err error, head string) {
			if err != nil || f.Record.Action != session.DoneAction || f.Record.Commit != head || !f.Record.ExpiresAt.Equal(locks.Never) {
				t.Errorf("record %+v, err %v: want done at %s, never expiring", f.Record, err, head)
			}
			if len(f.Removed) != 1 || f.Removed[0].Key != "src/a.go" {
				t.Errorf("released %+v, want src/a.go", f.Removed)
			}
		}},
		{name: "failed", setup: claimWP1, how: Finish{Failed: "tests red"}, check: func(t *testing.T, f Finished, err error, _ string) {
			if err != nil || f.Record.Action != session.FailedAction || f.Record.Reason != "tests red" || f.Record.Commit != "" {
				t.Errorf("record %+v, err %v: want failed for tests red, no commit", f.Record, err)
			}
		}},
		{name: "a commit that is none", setup: claimWP1, how: Finish{Commit: "nosuchrev"}, check: wantUsage("names no commit")},
		{name: "not claimed", check: wantUsage("the package is not claimed")},
		{name: "done already", setup: func(t *testing.T, c *fakeClock, alice, bob *Handler) {
			claimWP1(t, c, alice, bob)
			finished(t, alice, "WP-1", "")
		}, check: func(t *testing.T, _ Finished, err error, _ string) {
			var st *PackageStateError
			if !errors.As(err, &st) || st.Op != "done" || st.Status.State != PackageDone {
				t.Errorf("err = %v, want a PackageStateError of done", err)
			}
		}},
		{name: "lost: taken over after it expired", setup: func(t *testing.T, clock *fakeClock, alice, bob *Handler) {
			claimWP1(t, clock, alice, bob)
			clock.Add(2 * time.Hour)
			claimed(t, bob, "WP-1")
		}, check: func(t *testing.T, _ Finished, err error, _ string) {
			var no *locks.NotOwnerError
			if !errors.As(err, &no) || no.Lock.Holder != "bob" {
				t.Errorf("err = %v, want a NotOwnerError naming bob", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, clock, open := queueRepo(t, queuePackages)
			alice, bob := open("alice"), open("bob")
			if tc.setup != nil {
				tc.setup(t, clock, alice, bob)
			}
			f, err := alice.FinishPackage(context.Background(), FinishRequest{PackageRequest: pkgReq("WP-1"), Finish: tc.how})
			tc.check(t, f, err, strings.TrimSpace(r.Git("rev-parse", "HEAD")))
		})
	}
}

func claimWP1(t *testing.T, _ *fakeClock, alice, _ *Handler) { claimed(t, alice, "WP-1") }

func wantUsage(part string) func(t *testing.T, _ Finished, err error, _ string) {
	return func(t *testing.T, _ Finished, err error, _ string) {
		t.Helper()
		if !asType[*session.UsageError](err) || !strings.Contains(err.Error(), part) {
			t.Errorf("err = %v, want a usage error saying %q", err, part)
		}
	}
}

func TestReleasePackage(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, alice *Handler)
		check func(t *testing.T, f Finished, err error)
	}{
		{name: "given back", setup: func(t *testing.T, alice *Handler) { claimed(t, alice, "WP-1") }, check: func(t *testing.T, f Finished, err error) {
			if err != nil || len(f.Removed) != 2 {
				t.Errorf("released %+v, err %v: want the task record and src/a.go", f.Removed, err)
			}
		}},
		{name: "not claimed", check: func(t *testing.T, _ Finished, err error) {
			if !asType[*session.UsageError](err) || !strings.Contains(err.Error(), "not claimed") {
				t.Errorf("err = %v, want a usage error", err)
			}
		}},
		{name: "done", setup: func(t *testing.T, alice *Handler) {
			claimed(t, alice, "WP-1")
			finished(t, alice, "WP-1", "")
		}, check: func(t *testing.T, _ Finished, err error) {
			var st *PackageStateError
			if !errors.As(err, &st) || st.Op != "release-package" {
				t.Errorf("err = %v, want a PackageStateError of release-package", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, open := queueRepo(t, queuePackages)
			alice := open("alice")
			if tc.setup != nil {
				tc.setup(t, alice)
			}
			f, err := alice.ReleasePackage(context.Background(), pkgReq("WP-1"))
			tc.check(t, f, err)
			if err == nil {
				if _, err := open("bob").ClaimWork(context.Background(), ClaimRequest{PackageRequest: pkgReq("WP-1")}); err != nil {
					t.Errorf("the package given back cannot be claimed: %v", err)
				}
			}
		})
	}
}

func TestRetryPackage(t *testing.T) {
	tests := []struct {
		name    string
		finish  string // "": claim only; "done"; else failed for it
		claim   bool
		force   bool
		want    Retried
		wantErr string
	}{
		{name: "failed", claim: true, finish: "tests red", want: Retried{Was: session.FailedAction, By: "alice"}},
		{name: "done, refused", claim: true, finish: "done", wantErr: "--force"},
		{name: "done, reset", claim: true, finish: "done", force: true, want: Retried{Was: session.DoneAction, By: "alice"}},
		{name: "claimed", claim: true, wantErr: "claimed by alice"},
		{name: "ready", wantErr: "ready already"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, open := queueRepo(t, queuePackages)
			alice := open("alice")
			if tc.claim {
				claimed(t, alice, "WP-1")
			}
			switch tc.finish {
			case "":
			case "done":
				finished(t, alice, "WP-1", "")
			default:
				finished(t, alice, "WP-1", tc.finish)
			}
			got, err := open("bob").RetryPackage(context.Background(), RetryRequest{PackageRequest: pkgReq("WP-1"), Force: tc.force})
			if tc.wantErr != "" {
				if !asType[*session.UsageError](err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want a usage error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("retried %+v, err %v; want %+v", got, err, tc.want)
			}
			l, err := alice.ListPackages(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := l.status("WP-1"); s.State != PackageReady {
				t.Errorf("WP-1 is %s after the retry, want ready", s.State)
			}
		})
	}
}

func TestListPackages(t *testing.T) {
	_, clock, open := queueRepo(t, queuePackages)
	alice, bob := open("alice"), open("bob")
	claimed(t, alice, "WP-2")
	claimed(t, bob, "WP-1")
	l, err := open("carol").ListPackages(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !l.Now.Equal(clock.Now()) {
		t.Errorf("Now = %v, want the workspace's clock %v", l.Now, clock.Now())
	}
	want := map[PackageState]int{PackageReady: 2, PackageClaimed: 2, PackageDone: 0, PackageFailed: 0}
	for s, n := range want {
		if l.Counts[s] != n {
			t.Errorf("counts = %v, want %v", l.Counts, want)
		}
	}
	if s, _ := l.status("WP-3"); len(s.WaitsFor) != 1 || s.WaitsFor[0] != "WP-1" {
		t.Errorf("WP-3 waits for %v, want WP-1", s.WaitsFor)
	}
	if s, _ := l.status("WP-4"); len(s.HeldBy) != 1 || s.HeldBy[0].Key != "src/a.go" || s.HeldBy[0].Holder != "bob" {
		t.Errorf("WP-4 held by %+v, want src/a.go by bob", s.HeldBy)
	}
	if s, _ := l.status("WP-2"); s.Holder != "alice" || s.Until == nil || !s.Until.Equal(clock.Now().Add(time.Hour)) {
		t.Errorf("WP-2: %+v, want claimed by alice for an hour", s)
	}
	if l.Drained() || len(l.Hints) != 0 {
		t.Errorf("drained %v, hints %v: want neither", l.Drained(), l.Hints)
	}
}

// workLoop starts a loop as worker with the lines it says.
func workLoop(e *Handler, req WorkRequest) (*WorkLoop, *[]string) {
	var said []string
	req.Command, req.TTL = "make", time.Hour
	prev := req.Say
	req.Say = func(line string) {
		said = append(said, line)
		if prev != nil {
			prev(line)
		}
	}
	return e.NewWorkLoop(req), &said
}

// runs runs the loop to its end, the command ending as exit says for
// each package (by id; 0 when not named).
func runs(t *testing.T, w *WorkLoop, exit map[string][]int) *WorkEnd {
	t.Helper()
	ctx := context.Background()
	for range 20 {
		j, end, err := w.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if end != nil {
			return end
		}
		status := 0
		if s := exit[j.ID]; len(s) > 0 {
			status, exit[j.ID] = s[0], s[1:]
		}
		if err := w.Conclude(ctx, j, CommandResult{Status: status}); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the loop did not end")
	return nil
}

func ids(rs []WorkRun) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Package)
	}
	return strings.Join(out, " ")
}

func TestWorkLoop(t *testing.T) {
	tests := []struct {
		name             string
		req              WorkRequest
		exit             map[string][]int
		status           WorkStatus
		failed           bool
		done, fail, back string
		unfinishable     string
		say              string
	}{
		{name: "every package done: drained", status: WorkDrained,
			done: "WP-2 WP-1 WP-3 WP-4", say: "the queue is drained: 4 done"},
		{name: "given back, then done", req: WorkRequest{Retries: 1}, exit: map[string][]int{"WP-2": {1}}, status: WorkDrained,
			done: "WP-2 WP-1 WP-3 WP-4", back: "WP-2", say: "gave WP-2 back after"},
		{name: "failed after the retries: what waits for it cannot finish", req: WorkRequest{Retries: 1}, exit: map[string][]int{"WP-1": {1, 2}},
			status: WorkFailed, failed: true, done: "WP-2 WP-4", fail: "WP-1", back: "WP-1", unfinishable: "WP-1 WP-3",
			say: "nothing left can be finished: failed: WP-1 (make exited 2); waiting for failed packages: WP-3 (after WP-1)"},
		{name: "--max", req: WorkRequest{Max: 2}, status: WorkMax, done: "WP-2 WP-1", say: "stopped after --max 2 packages"},
		{name: "--max with a failure", req: WorkRequest{Max: 1}, exit: map[string][]int{"WP-2": {3}}, status: WorkMax, failed: true,
			fail: "WP-2", say: "WP-2 failed after"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, open := queueRepo(t, queuePackages)
			w, said := workLoop(open("alice"), tc.req)
			end := runs(t, w, tc.exit)
			s := end.Summary
			if s.Status != tc.status || end.Failed != tc.failed {
				t.Errorf("ended %s (failed %v), want %s (failed %v)", s.Status, end.Failed, tc.status, tc.failed)
			}
			if ids(s.Done) != tc.done || ids(s.Failed) != tc.fail || ids(s.GivenBack) != tc.back {
				t.Errorf("done %q, failed %q, given back %q; want %q, %q, %q", ids(s.Done), ids(s.Failed), ids(s.GivenBack), tc.done, tc.fail, tc.back)
			}
			var un []string
			for _, p := range s.Unfinishable {
				un = append(un, p.ID)
			}
			if strings.Join(un, " ") != tc.unfinishable {
				t.Errorf("unfinishable %v, want %q", un, tc.unfinishable)
			}
			if all := strings.Join(*said, "\n"); !strings.Contains(all, tc.say) {
				t.Errorf("the loop said:\n%s\nwant %q", all, tc.say)
			}
			if s.Worker != "alice" || s.Session != "alice" || s.Store != "file" {
				t.Errorf("summary names %s, %s, %s", s.Worker, s.Session, s.Store)
			}
			// Every ending counts the queue as the loop left it.
			if n := s.Counts[PackageDone] + s.Counts[PackageFailed] + s.Counts[PackageReady] + s.Counts[PackageClaimed]; n != 4 {
				t.Errorf("counts %v, want the 4 packages counted", s.Counts)
			}
		})
	}
}

func TestWorkLoopJob(t *testing.T) {
	_, _, open := queueRepo(t, queuePackages)
	e := open("alice")
	w, _ := workLoop(e, WorkRequest{})
	j, end, err := w.Next(context.Background())
	if err != nil || end != nil {
		t.Fatalf("next: %v, %+v", err, end)
	}
	env := strings.Join(j.Env, "\n")
	for _, want := range []string{"LOCKGATE_PACKAGE=WP-2", "LOCKGATE_PACKAGE_TITLE=two", "LOCKGATE_PACKAGE_FILES=src/b.go", "LOCKGATE_WORKER=alice", "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SESSION=alice"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	if j.Every != 20*time.Minute || j.Dir != e.Cwd {
		t.Errorf("renewed every %v in %s, want 20m in %s", j.Every, j.Dir, e.Cwd)
	}
	if err := w.Keep(context.Background(), j); err != nil {
		t.Errorf("keep: %v", err)
	}
}

func TestWorkLoopInterrupted(t *testing.T) {
	_, _, open := queueRepo(t, queuePackages)
	ctx := context.Background()
	e := open("alice")
	w, said := workLoop(e, WorkRequest{})
	j, _, err := w.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A signal while the command runs: it is stopped, its package given back.
	w.Interrupt()
	if err := w.Conclude(ctx, j, CommandResult{Status: 143}); err != nil {
		t.Fatal(err)
	}
	_, end, err := w.Next(ctx)
	if err != nil || end == nil || end.Summary.Status != WorkInterrupted || ids(end.Summary.GivenBack) != "WP-2" || len(end.Summary.Done) != 0 {
		t.Fatalf("end %+v, err %v: want interrupted, WP-2 given back", end, err)
	}
	if !strings.Contains(strings.Join(*said, "\n"), "interrupted: stopped make after") {
		t.Errorf("said %q", *said)
	}
	if l, _ := e.ListPackages(ctx, ""); l.Counts[PackageClaimed] != 0 {
		t.Errorf("counts after the interrupt: %v, want nothing claimed", l.Counts)
	}
}

func TestWorkLoopWaits(t *testing.T) {
	_, _, open := queueRepo(t, `packages:
  - id: WP-1
    title: one
    locks:
      files: [src/a.go]
`)
	claimed(t, open("bob"), "WP-1")
	var w *WorkLoop
	var said *[]string
	// Interrupted as soon as it says it waits: the wait ends at once.
	w, said = workLoop(open("alice"), WorkRequest{Say: func(line string) {
		if strings.HasPrefix(line, "waiting: ") {
			w.Interrupt()
		}
	}})
	_, end, err := w.Next(context.Background())
	if err != nil || end == nil || end.Summary.Status != WorkInterrupted {
		t.Fatalf("end %+v, err %v: want interrupted", end, err)
	}
	if all := strings.Join(*said, "\n"); !strings.Contains(all, "waiting: no work package of") || !strings.Contains(all, "1 claimed") {
		t.Errorf("said:\n%s", all)
	}
}

func TestWorkLoopLostClaim(t *testing.T) {
	_, clock, open := queueRepo(t, queuePackages)
	ctx := context.Background()
	alice, bob := open("alice"), open("bob")
	w, said := workLoop(alice, WorkRequest{})
	j, _, err := w.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The claim lapses and bob takes it over: keeping it finds it lost, and
	// the package is not alice's to mark done.
	clock.Add(2 * time.Hour)
	claimed(t, bob, "WP-2")
	lost := w.Keep(ctx, j)
	if lost == nil {
		t.Fatal("keep: the claim taken over is not found lost")
	}
	if err := w.Conclude(ctx, j, CommandResult{Status: 143, Lost: lost}); err != nil {
		t.Fatal(err)
	}
	if s := w.Summary(); ids(s.Lost) != "WP-2" || len(s.Done) != 0 {
		t.Errorf("lost %q, done %q: want WP-2 lost", ids(s.Lost), ids(s.Done))
	}
	if !strings.Contains(strings.Join(*said, "\n"), "WP-2: lost the claim while make ran") {
		t.Errorf("said %q", *said)
	}
	l, err := bob.ListPackages(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := l.status("WP-2"); s.State != PackageClaimed || s.Holder != "bob" {
		t.Errorf("WP-2: %s by %s, want claimed by bob", s.State, s.Holder)
	}
}

func TestWorkLoopDoneByTheCommand(t *testing.T) {
	_, _, open := queueRepo(t, queuePackages)
	ctx := context.Background()
	alice := open("alice")
	w, _ := workLoop(alice, WorkRequest{})
	j, _, err := w.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The command ran `lockgate done --failed` itself: as it said.
	finished(t, alice, j.ID, "flaky")
	if err := w.Keep(ctx, j); err != nil {
		t.Fatalf("keep after the command finished it: %v", err)
	}
	if err := w.Conclude(ctx, j, CommandResult{}); err != nil {
		t.Fatal(err)
	}
	if s := w.Summary(); ids(s.Failed) != "WP-2" || s.Failed[0].Reason != "flaky" || len(s.Done) != 0 {
		t.Errorf("summary %+v: want WP-2 failed for flaky", s)
	}
}

func TestWorkSession(t *testing.T) {
	none := func(string) string { return "" }
	if got := WorkSession("s1", none); got != "s1" {
		t.Errorf("named: %q", got)
	}
	if got := WorkSession("", func(string) string { return "env" }); got != "" {
		t.Errorf("from the environment: %q, want it left to the environment", got)
	}
	if a, b := WorkSession("", none), WorkSession("", none); !strings.HasPrefix(a, "work-") || a == b {
		t.Errorf("own sessions %q, %q: want two distinct work-… sessions", a, b)
	}
}

func TestListPackagesUnreadable(t *testing.T) {
	_, _, open := queueRepo(t, queuePackages)
	e := open("alice")
	if err := os.WriteFile(e.Store.Where("task:WP-1"), []byte("not a record"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := e.ListPackages(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := l.status("WP-1"); s.Unreadable == "" || s.State != PackageClaimed {
		t.Errorf("WP-1: %+v, want unreadable, never ready", s)
	}
	if h := l.Hints["WP-1"]; !strings.Contains(h, "lockgate lock clear --force task:WP-1") || len(l.Hints) != 1 {
		t.Errorf("hints %q, want the one that clears task:WP-1", l.Hints)
	}
}

// A renewal of the claim the store cannot confirm is tried again sooner
// while the claim's expiry, less a margin, is ahead; past that margin the
// command must be stopped, before the claim can lapse.
func TestWorkLoopKeepRidesOutUnavailableStore(t *testing.T) {
	_, clock, open := queueRepo(t, queuePackages)
	ctx := context.Background()
	alice := open("alice")
	w, said := workLoop(alice, WorkRequest{})
	j, _, err := w.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	store := &locktest.DownFor{Store: alice.Mgr.Store, N: 2}
	alice.Mgr.Store = store
	for i, want := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond} {
		if err := w.Keep(ctx, j); err != nil || w.KeepAfter(j) != want {
			t.Fatalf("keep %d with the store down: %v, next after %s; want nil and %s", i+1, err, w.KeepAfter(j), want)
		}
	}
	if err := w.Keep(ctx, j); err != nil || w.KeepAfter(j) != j.Every {
		t.Fatalf("keep with the store back: %v, next after %s", err, w.KeepAfter(j))
	}
	if n := strings.Count(strings.Join(*said, "\n"), "could not renew the claim"); n != 1 {
		t.Errorf("said the renewal failed %d times, want once: %q", n, *said)
	}
	store.N = 1000
	clock.Add(j.expires.Sub(clock.Now()) - time.Second)
	err = w.Keep(ctx, j)
	if !errors.As(err, new(*locks.ExpiringError)) || !errors.As(err, new(*locks.UnavailableError)) {
		t.Fatalf("keep a second before the claim expires, the store down: %v; want an *ExpiringError with the store's", err)
	}
	alice.Mgr.Store = store.Store
	if err := w.Conclude(ctx, j, CommandResult{Status: 143, Lost: err}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(*said, "\n"), "did not confirm a renewal of the claim while make ran") {
		t.Errorf("said %q; want that the claim was not renewed in time", *said)
	}
}

// TestWorkLoopUntitledPackage: a package without a title is named by its
// id alone, not followed by empty parentheses.
func TestWorkLoopUntitledPackage(t *testing.T) {
	_, _, open := queueRepo(t, "packages:\n  - id: WP-1\n    locks:\n      files: [src/a.go]\n  - id: WP-2\n    title: two\n    locks:\n      files: [src/b.go]\n")
	w, said := workLoop(open("alice"), WorkRequest{})
	runs(t, w, nil)
	all := strings.Join(*said, "\n")
	if !strings.Contains(all, "claimed WP-1 until ") || !strings.Contains(all, "claimed WP-2 (two) until ") || strings.Contains(all, "()") {
		t.Errorf("the loop said:\n%s\nwant WP-1 named without a title, WP-2 with its own", all)
	}
}

// contendedFor is a store whose next n changes fail as a git store's do
// when other writers change it first on every try.
type contendedFor struct {
	locks.Store
	n int
}

func (s *contendedFor) busy() error {
	if s.n > 0 {
		s.n--
		return &locks.ContendedError{Store: "test", Attempts: 8}
	}
	return nil
}

func (s *contendedFor) Acquire(ctx context.Context, rec locks.Lock, now time.Time) (locks.Lock, *locks.Lock, error) {
	if err := s.busy(); err != nil {
		return locks.Lock{}, nil, err
	}
	return s.Store.Acquire(ctx, rec, now)
}

func (s *contendedFor) Update(ctx context.Context, rec locks.Lock) (locks.Lock, error) {
	if err := s.busy(); err != nil {
		return locks.Lock{}, err
	}
	return s.Store.Update(ctx, rec)
}

func (s *contendedFor) Release(ctx context.Context, key, token string) error {
	if err := s.busy(); err != nil {
		return err
	}
	return s.Store.Release(ctx, key, token)
}

// TestWorkLoopWaitsOutContention: a worker loop whose claims find the
// store busy with other workers (every try lost to them) waits and tries
// again, saying so once; it drains the queue and never ends for it.
func TestWorkLoopWaitsOutContention(t *testing.T) {
	_, _, open := queueRepo(t, queuePackages)
	alice := open("alice")
	store := &contendedFor{Store: alice.Mgr.Store, n: 3}
	alice.Mgr.Store = store
	w, said := workLoop(alice, WorkRequest{})
	end := runs(t, w, nil)
	if end.Summary.Status != WorkDrained || len(end.Summary.Done) != 4 {
		t.Fatalf("the loop ended %+v, want the 4 packages done", end.Summary)
	}
	if store.n != 0 {
		t.Fatalf("%d contended tries left: the store was not asked", store.n)
	}
	if n := strings.Count(strings.Join(*said, "\n"), "waiting: the queue is busy"); n != 1 {
		t.Errorf("said the queue was busy %d times, want once: %q", n, *said)
	}
}

// TestWorkLoopFinishesThroughContention: a package whose command ended
// is marked done, or given back, though the store is busy with other
// workers when the loop concludes it: the loop tries again, and neither
// ends nor loses the package for it.
func TestWorkLoopFinishesThroughContention(t *testing.T) {
	ctx := context.Background()
	for _, status := range []int{0, 75} { // done; given back (EX_TEMPFAIL)
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			_, _, open := queueRepo(t, queuePackages)
			alice := open("alice")
			w, _ := workLoop(alice, WorkRequest{Retries: 1})
			j, _, err := w.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			store := &contendedFor{Store: alice.Mgr.Store, n: 3}
			alice.Mgr.Store = store
			if err := w.Conclude(ctx, j, CommandResult{Status: status}); err != nil {
				t.Fatalf("conclude %s (status %d) with the store busy: %v", j.ID, status, err)
			}
			if store.n != 0 {
				t.Fatalf("%d contended tries left: the store was not asked", store.n)
			}
			wps, err := alice.LoadPackages("")
			if err != nil {
				t.Fatal(err)
			}
			q, err := alice.Packages(ctx, wps, false)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int]PackageState{0: PackageDone, 75: PackageReady}[status]
			if s, _ := q.status(j.ID); s.State != want {
				t.Fatalf("%s is %s, want %s", j.ID, s.State, want)
			}
		})
	}
}

// TestContended: only the store's contention and the global claim lock
// held by another are waited out; a lock on a package's file, and any
// other error, are not contention.
func TestContended(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&locks.ContendedError{Store: "git", Attempts: 8}, true},
		{fmt.Errorf("claim: %w", &locks.HeldError{Lock: locks.Lock{Key: "claim", Holder: "bob"}}), true},
		{&locks.HeldError{Lock: locks.Lock{Key: "src/a.go", Holder: "bob"}}, false},
		{&locks.UnavailableError{Store: "redis", Err: errors.New("refused")}, false},
		{errors.New("disk full"), false},
	} {
		if got := contended(c.err); got != c.want {
			t.Errorf("contended(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestClaimThroughContention: a claim, done, give-back or retry of one
// command (`lockgate claim`, `done`, `release-package`, `retry`) whose
// store other writers keep changing first tries again: the command does
// not fail for it.
func TestClaimThroughContention(t *testing.T) {
	ctx := context.Background()
	_, _, open := queueRepo(t, queuePackages)
	alice := open("alice")
	store := &contendedFor{Store: alice.Mgr.Store}
	alice.Mgr.Store = store
	busy := func(what string, op func() error) {
		t.Helper()
		store.n = 3
		if err := op(); err != nil {
			t.Fatalf("%s with the store busy: %v", what, err)
		}
		if store.n != 0 {
			t.Fatalf("%s: %d contended tries left: the store was not asked", what, store.n)
		}
	}
	busy("claim", func() error {
		_, err := alice.ClaimWork(ctx, ClaimRequest{PackageRequest: pkgReq("WP-2"), TTL: time.Hour})
		return err
	})
	busy("release-package", func() error { _, err := alice.ReleasePackage(ctx, pkgReq("WP-2")); return err })
	claimed(t, alice, "WP-2")
	busy("done, failed", func() error {
		_, err := alice.FinishPackage(ctx, FinishRequest{PackageRequest: pkgReq("WP-2"), Finish: Finish{Failed: "no"}})
		return err
	})
	busy("retry", func() error {
		_, err := alice.RetryPackage(ctx, RetryRequest{PackageRequest: pkgReq("WP-2")})
		return err
	})
}
