package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestFleetBranches runs a team on two long-lived branches, main and
// release, with locks per branch (locks.per_branch) in the git store
// shared through the remote, which runs lockgate's pre-receive. Six
// agents, half on each branch, in clones of their own and in worktrees of
// shared clones, edit the same few files, each taking its locks on the
// branch it pushes to. Workers of one branch wait for each other; workers
// of two branches never do: a main and a release worker hold the same
// file at once, by appointment, and the harness sees holds of one file
// overlap across the branches and never within one. A release worker is
// killed with SIGKILL while it holds a lock, which its branch's workers
// take over once it has expired. A commit made past the hooks on main
// while another worker holds its file there is refused by the server,
// and a release worker's change to that file meanwhile is accepted. A
// fresh clone verifies each branch by its own locks. Last, release is
// merged into main in a clone (locks.release_on_merge).
func TestFleetBranches(t *testing.T) {
	t.Parallel()
	oneFleetAtATime(t)
	lockgateBinary(t)
	tasks := gittest.Rounds(t, 16)
	f := newFleet(t, "git", nil, tasks)
	defer f.cancel()
	f.setupBranches()
	f.run(tasks)
	f.checkBranchOverlap()
	// The harness's own tasks are numbered after the fleet's.
	f.refusedOnMain(tasks)
	landing := f.prepareLanding(tasks + 1)
	dir := f.verify()
	f.checkReleasedOnMerge(dir)
	f.mergeRelease(landing)
}

const (
	branchFleetWorkers = 6 // even on main, odd on release; 0 and 1 in clones of their own, 2 to 5 in pairs of worktrees of two clones
	branchFleetRelease = "release"
	// branchFleetMeetTimeout bounds the wait at the appointment: a worker
	// may first wait for its own branch's holders of the file, and for
	// its previous task.
	branchFleetMeetTimeout = 4 * time.Minute
)

// setupBranches makes the remote, running lockgate's pre-receive, with
// the base on main and release, and each worker's clone or worktree on
// its branch: a branch is checked out in one worktree of a clone at a
// time, so a shared clone's own worktree is its main worker's and a
// worktree of it its release worker's. Workers 0 (main) and 1 (release)
// meet at their second task on the same file.
func (f *fleet) setupBranches() {
	t := f.t
	f.perBranch, f.server, f.releaseOnMerge = true, true, true
	f.victim = branchFleetWorkers - 1
	f.origin = filepath.Join(f.root, "origin.git")
	f.git(f.root, "init", "-q", "--bare", "-b", "main", f.origin)
	seed := filepath.Join(f.root, "seed")
	f.git(f.root, "init", "-q", "-b", "main", seed)
	write(t, filepath.Join(seed, ".lockgate.yaml"), `version: 1
locks:
  store: git
  per_branch: true
  release_on_merge: true
hooks:
  require_lock: true
  trailers: true
workflow:
  auto_push: true
`)
	// Both branches add lines to the same files: a merge keeps both sides'.
	write(t, filepath.Join(seed, ".gitattributes"), "src/*.go merge=union\n")
	for i := range fleetFiles {
		write(t, filepath.Join(seed, fleetFile(i)), fmt.Sprintf("package src\n\n// file %d\n", i))
	}
	// Installed before the base is pushed, which an empty repository's
	// defaults judge; from then on the committed policy does.
	if out, err := f.lockgate(f.origin, "installer", "install", "--hook", "pre-receive"); err != nil {
		t.Fatalf("lockgate install --hook pre-receive in the remote: %v\n%s", err, out)
	}
	f.publish(seed)
	f.git(seed, "push", "-q", "origin", "main:"+branchFleetRelease)
	shared := map[int]string{}
	for n := range branchFleetWorkers {
		w := &fleetWorker{f: f, n: n, id: fmt.Sprintf("agent-%d@fleet", n), branch: "main"}
		if n%2 == 1 {
			w.branch = branchFleetRelease
		}
		w.session = w.id
		f.workers = append(f.workers, w)
		switch {
		case n < 2:
			w.dir = f.clone(fmt.Sprintf("clone-%d", n))
			if w.branch != "main" {
				f.git(w.dir, "switch", "-q", "-c", w.branch, "origin/"+w.branch)
			}
		case w.branch == "main":
			w.dir = f.clone(fmt.Sprintf("shared-%d", n/2))
			shared[n/2] = w.dir
		default:
			w.dir = filepath.Join(f.root, fmt.Sprintf("worktree-%d", n))
			f.git(shared[n/2], "worktree", "add", "-q", "-b", w.branch, w.dir, "origin/"+w.branch)
		}
	}
	m := &fleetMeet{task: 1, file: fleetFile(1), here: map[int]chan struct{}{0: make(chan struct{}), 1: make(chan struct{})}}
	f.workers[0].meet, f.workers[1].meet = m, m
}

// fleetMeet is an appointment of workers of different branches: at task
// task each takes file on its own branch and, holding it, waits until
// every other one holds it too. Were a lock of one branch to keep another
// branch out, the first to arrive would keep the others waiting, and the
// appointment would fail.
type fleetMeet struct {
	task int
	file string
	here map[int]chan struct{} // closed once worker n holds file
}

// wait: w holds the file; it waits for the others to.
func (m *fleetMeet) wait(w *fleetWorker) error {
	close(m.here[w.n])
	w.logf(time.Now(), "appointment: holds %s on %s, waits for the others", m.file, w.target())
	timeout := time.NewTimer(branchFleetMeetTimeout)
	defer timeout.Stop()
	for n, here := range m.here {
		if n == w.n {
			continue
		}
		select {
		case <-here:
		case <-w.f.ctx.Done():
			return w.f.ctx.Err()
		case <-timeout.C:
			return fmt.Errorf("agent-%d did not hold %s on its branch within %v while %s held it on %s: a lock of one branch keeps another out",
				n, m.file, branchFleetMeetTimeout, w.id, w.target())
		}
	}
	w.logf(time.Now(), "appointment: every worker holds %s", m.file)
	return nil
}

// checkBranchOverlap requires, of the holds the harness saw, that holds
// of one file on main and on release overlapped — the appointment's at
// least — as checkHarness found none of one branch that did.
func (f *fleet) checkBranchOverlap() {
	t := f.t
	overlaps, met := 0, false
	for i, a := range f.holds {
		for _, b := range f.holds[i+1:] {
			if a.onBranch() == b.onBranch() || !a.acquired.Before(b.released) || !b.acquired.Before(a.released) {
				continue
			}
			for _, file := range a.files {
				if !slices.Contains(b.files, file) {
					continue
				}
				overlaps++
				pair := []string{a.worker, b.worker}
				slices.Sort(pair)
				if file == fleetFile(1) && a.task == 1 && b.task == 1 && pair[0] == f.workers[0].id && pair[1] == f.workers[1].id {
					met = true
				}
			}
		}
	}
	t.Logf("holds of one file on main and on release overlapped %d times", overlaps)
	if !met {
		f.dumpLogs()
		t.Fatalf("%s (main) and %s (release) never held %s at once, by appointment", f.workers[0].id, f.workers[1].id, fleetFile(1))
	}
}

// checkReleasedOnMerge reads, in the verifier's clone dir, the events on
// the workflow branch of locks released on merge: as a worker pulls, the
// post-merge hook releases the locks whose holders' work the pull brought
// (locks.release_on_merge), before their holders do. Each must be one the
// harness saw its holder find gone after its push, and the reverse: no
// lock is released on merge before its holder's work is on origin, nor
// one whose holder released it.
func (f *fleet) checkReleasedOnMerge(dir string) {
	t := f.t
	lines, err := branchEventLines(f.ctx, dir, f.env, "origin/lockgate/workflow", func(l string) bool { return strings.Contains(l, `"details":"released on merge: `) })
	if err != nil {
		t.Fatalf("read the releases on merge on the workflow branch: %v", err)
	}
	logged := map[string]int{}
	for _, line := range lines {
		var ev fleetEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("an event of the workflow branch: %v: %s", err, line)
		}
		holder, _, _ := strings.Cut(strings.TrimPrefix(ev.Details, "released on merge: "), "'s work on it")
		if ev.Action != "lock_release" || ev.Worker == holder {
			t.Errorf("a release on merge: %s of %s by %s, want a lock_release by another worker than its holder", ev.Action, ev.Key, ev.Worker)
		}
		logged[ev.Key+" of "+holder]++
	}
	seen := map[string]int{}
	for _, h := range f.holds {
		for _, file := range h.merged {
			seen["branch:"+h.onBranch()+":"+file+" of "+h.worker]++
		}
	}
	t.Logf("%d locks released on merge by another worker's pull before their holders released them", len(lines))
	for k, n := range logged {
		if seen[k] != n {
			t.Errorf("%s released on merge %d times, its holder found it gone %d times; its events:\n%s", k, n, seen[k], f.eventsOf(dir, k))
		}
	}
	for k, n := range seen {
		if logged[k] != n {
			t.Errorf("%s: its holder found it gone %d times, released on merge %d times; its events:\n%s", k, n, logged[k], f.eventsOf(dir, k))
		}
	}
}

// refusedOnMain: while agent-0 holds a file on main, agent-2 (on main
// too) changes it. The reference-transaction hook refuses its `git commit
// --no-verify`; made past every local hook and pushed with --no-verify,
// the commit is refused by the server's pre-receive, which names the
// holder. Meanwhile a release worker's change to the same file, through
// the hooks, is accepted: the server judges a push by the locks of the
// branch it updates.
func (f *fleet) refusedOnMain(task int) {
	t := f.t
	holder, rogue, other := f.workers[0], f.workers[2], f.workers[1]
	file := fleetFile(2)
	key := holder.lockKey(file)
	holder.must(f.bin, holder.lockArgs("lock", "acquire", file, "--reason", "held while "+rogue.id+" changes it")...)
	rogue.must("git", "fetch", "-q", "origin")
	rogue.must("git", "reset", "-q", "--hard", "origin/main")
	before := strings.TrimSpace(rogue.must("git", "rev-parse", "origin/main"))
	p := filepath.Join(rogue.dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, fmt.Appendf(b, "// %s, while %s holds it\n", rogue.id, holder.id), 0o644); err != nil {
		t.Fatal(err)
	}
	msg := fmt.Sprintf("%s changes %s, held by %s", rogue.id, file, holder.id)
	out, code := rogue.run("git", "commit", "--no-verify", "-q", "-a", "-m", msg)
	if code == 0 || !strings.Contains(out, "locked through "+key+" by "+holder.id) {
		f.dumpLogs()
		t.Fatalf("git commit --no-verify of %s, held by %s on main: exit %d, want the reference-transaction hook's refusal naming %s:\n%s",
			file, holder.id, code, key, out)
	}
	rogue.must("git", "-c", "core.hooksPath=/dev/null", "commit", "--no-verify", "-q", "-a", "-m", msg)
	out, code = rogue.run("git", "push", "--no-verify", "origin", "HEAD:main")
	switch {
	case code == 0:
		f.dumpLogs()
		t.Fatalf("%s pushed to main a change of %s, which %s holds there: the server accepted it\n%s", rogue.id, file, holder.id, out)
	case !strings.Contains(out, "pre-receive refused"):
		t.Fatalf("%s's push of %s failed, but not by lockgate's pre-receive:\n%s", rogue.id, file, out)
	case !strings.Contains(out, "[remote rejected]"):
		t.Fatalf("%s's push of %s: lockgate's pre-receive refused, git did not reject:\n%s", rogue.id, file, out)
	case !strings.Contains(out, "locked through "+key+" by "+holder.id):
		t.Errorf("the server's refusal of %s's change does not name %s held by %s:\n%s", rogue.id, key, holder.id, out)
	}
	t.Logf("the server refused %s's change of %s, held by %s:\n%s", rogue.id, file, holder.id, indent(out))
	rogue.must("git", "fetch", "-q", "origin")
	if after := strings.TrimSpace(rogue.must("git", "rev-parse", "origin/main")); after != before {
		t.Fatalf("origin's main moved from %s to %s with the refused push", before, after)
	}
	rogue.must("git", "reset", "-q", "--hard", "origin/main")
	if err := other.task(task, []string{file}); err != nil {
		f.dumpLogs()
		t.Fatalf("%s changing %s on %s while %s holds it on main: %v", other.id, file, other.target(), holder.id, err)
	}
	holder.must(f.bin, holder.lockArgs("lock", "release", file)...)
}

// fleetLanding is what merging release into main is to do to the locks
// on main that prepareLanding took.
type fleetLanding struct {
	landed, kept, idle       string       // keys on main: the holder's work lands; has work main lacks; has no work in the merge
	landedBy, keptBy, idleBy *fleetWorker // their holders
	hotfix, hotfixKey        string       // keptBy's branch with its work main lacks, and its lock there
}

// prepareLanding takes the locks on main that merging release judges, on
// files the fleet left alone: agent-1 takes A on main, then changes A and
// B on release — its work on A lands with the merge; agent-3 takes C on
// main, changes C on release and again on a branch of its own, pushed —
// it has work on C that main lacks; agent-2 takes B on main and has no
// work in the merge. agent-3 pushes after agent-1, so that agent-1's
// commit is not the merge's parent.
func (f *fleet) prepareLanding(task int) fleetLanding {
	t := f.t
	r1, idle, r3 := f.workers[1], f.workers[2], f.workers[3]
	a, b, c := fleetFile(fleetHotFiles), fleetFile(fleetHotFiles+1), fleetFile(fleetHotFiles+2)
	l := fleetLanding{landed: "branch:main:" + a, kept: "branch:main:" + c, idle: "branch:main:" + b,
		landedBy: r1, keptBy: r3, idleBy: idle, hotfix: "hotfix-3"}
	l.hotfixKey = "branch:" + l.hotfix + ":" + c
	r1.must(f.bin, "lock", "acquire", a, "--branch", "main", "--reason", "brings its fix to main")
	if err := r1.task(task, []string{a, b}); err != nil {
		f.dumpLogs()
		t.Fatalf("%s: %v", r1.id, err)
	}
	r3.must(f.bin, "lock", "acquire", c, "--branch", "main", "--reason", "brings its fix to main")
	if err := r3.task(task, []string{c}); err != nil {
		f.dumpLogs()
		t.Fatalf("%s: %v", r3.id, err)
	}
	r3.must("git", "switch", "-q", "-c", l.hotfix)
	r3.must(f.bin, "lock", "acquire", c, "--branch", l.hotfix)
	p := filepath.Join(r3.dir, c)
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, fmt.Appendf(body, "// %s on %s\n", r3.id, l.hotfix), 0o644); err != nil {
		t.Fatal(err)
	}
	r3.must("git", "commit", "-q", "-a", "-m", fmt.Sprintf("%s: %s on %s", r3.id, c, l.hotfix))
	r3.must("git", "push", "-q", "origin", l.hotfix)
	r3.must("git", "switch", "-q", r3.target())
	idle.must(f.bin, "lock", "acquire", b, "--branch", "main", "--reason", "no work of its own in release")
	return l
}

// mergeRelease merges release into main in agent-0's clone and checks
// what locks.release_on_merge promises (docs/locks.md, "Released when the
// work lands"): the post-merge hook releases the main lock whose holder's
// work came with the merge, logged with the merge commit; keeps the one
// whose holder has work on its file that main lacks, and says so; leaves
// the one whose holder has no work in the merge. release-merged run again
// releases nothing more. Once the other work is merged too, its lock is
// released. The merges stay in the clone.
func (f *fleet) mergeRelease(l fleetLanding) {
	t := f.t
	m := f.workers[0]
	m.must("git", "fetch", "-q", "origin")
	m.must("git", "merge", "-q", "--ff-only", "origin/main")
	// What the merge changes beyond both parents (both branches' lines)
	// is judged as the merger's change at pre-merge-commit: it takes those
	// files on main (hooks.require_lock).
	mb := strings.TrimSpace(m.must("git", "merge-base", "origin/main", "origin/"+branchFleetRelease))
	onMain := strings.Fields(m.must("git", "diff", "--name-only", mb, "origin/main"))
	var both []string
	for _, p := range strings.Fields(m.must("git", "diff", "--name-only", mb, "origin/"+branchFleetRelease)) {
		if slices.Contains(onMain, p) {
			both = append(both, p)
		}
	}
	if len(both) == 0 {
		t.Fatalf("main and release changed no file in common since %s", mb)
	}
	m.must(f.bin, append([]string{"lock", "acquire", "--branch", "main", "--reason", "merges release"}, both...)...)
	out := m.must("git", "merge", "--no-edit", "origin/"+branchFleetRelease)
	merge := strings.TrimSpace(m.must("git", "rev-parse", "HEAD"))
	t.Logf("%s merged release into main (%s):\n%s", m.id, merge[:12], indent(out))
	released := func(key string, by *fleetWorker, merge string) string {
		return fmt.Sprintf("released %s of %s: its work is on main (%s)", key, by.id, merge[:12])
	}
	if want := released(l.landed, l.landedBy, merge); !strings.Contains(out, want) {
		t.Errorf("the merge's post-merge hook did not say %q:\n%s", want, out)
	}
	if want := fmt.Sprintf("kept %s of %s: %s has commits on it that main does not have yet", l.kept, l.keptBy.id, l.keptBy.id); !strings.Contains(out, want) {
		t.Errorf("the merge's post-merge hook did not say %q:\n%s", want, out)
	}
	if strings.Contains(out, l.idle) {
		t.Errorf("the merge's post-merge hook named %s, whose holder has no work in it:\n%s", l.idle, out)
	}
	// The merger's own locks: released where the merge commit itself
	// changes the file (its work), as git's combined diff lists them.
	mine := strings.Fields(m.must("git", "diff-tree", "-r", "--cc", "--name-only", "--no-commit-id", "HEAD"))
	held := map[string]*fleetWorker{l.kept: l.keptBy, l.idle: l.idleBy, l.hotfixKey: l.keptBy}
	gone := []string{l.landed}
	for _, p := range both {
		key := "branch:main:" + p
		if !slices.Contains(mine, p) {
			held[key] = m
			continue
		}
		gone = append(gone, key)
		if want := released(key, m, merge); !strings.Contains(out, want) {
			t.Errorf("the merge's post-merge hook did not say %q:\n%s", want, out)
		}
	}
	f.checkHeld(m.dir, held, gone)
	f.checkMergeEvent(m.dir, m, l.landed, l.landedBy, merge)

	// Run again (as CI would after the push), it finds the kept lock kept
	// and nothing to release.
	var again struct {
		Released []struct{ Key string } `json:"released"`
		Kept     []struct{ Key string } `json:"kept"`
	}
	f.lockgateJSON(m.dir, &again, "release-merged", "--range", "ORIG_HEAD..HEAD", "--branch", "main", "--json")
	if len(again.Released) != 0 || len(again.Kept) != 1 || again.Kept[0].Key != l.kept {
		t.Errorf("release-merged again: released %v, kept %v; want none released and %s kept", again.Released, again.Kept, l.kept)
	}

	// The rest of agent-3's work lands: now its lock on main is released;
	// its lock on its own branch is that branch's, and stays.
	out = m.must("git", "merge", "--no-edit", "origin/"+l.hotfix)
	merge2 := strings.TrimSpace(m.must("git", "rev-parse", "HEAD"))
	t.Logf("%s merged %s into main (%s):\n%s", m.id, l.hotfix, merge2[:12], indent(out))
	if want := released(l.kept, l.keptBy, merge2); !strings.Contains(out, want) {
		t.Errorf("the merge of %s's post-merge hook did not say %q:\n%s", l.hotfix, want, out)
	}
	delete(held, l.kept)
	f.checkHeld(m.dir, held, []string{l.kept})
}

// checkHeld lists the locks, from the clone or worktree dir, and requires
// each key of held held by its worker, and none of gone.
func (f *fleet) checkHeld(dir string, held map[string]*fleetWorker, gone []string) {
	t := f.t
	var list []struct{ Key, Holder string }
	f.lockgateJSON(dir, &list, "lock", "list", "--json")
	holders := map[string]string{}
	for _, l := range list {
		holders[l.Key] = l.Holder
	}
	for key, by := range held {
		if holders[key] != by.id {
			t.Errorf("%s is held by %q, want %s still holding it", key, holders[key], by.id)
		}
	}
	for _, key := range gone {
		if h, ok := holders[key]; ok {
			t.Errorf("%s is still held by %s, want it released by the merge", key, h)
		}
	}
}

// checkMergeEvent requires the lock_release event of key on merge, read
// in dir, to be the merger w's, naming the merge commit and by's work.
func (f *fleet) checkMergeEvent(dir string, w *fleetWorker, key string, by *fleetWorker, merge string) {
	t := f.t
	var evs []struct {
		Worker, Key, Details, Commit string
	}
	f.lockgateJSON(dir, &evs, "log", "--json", "--action", "lock_release")
	for _, ev := range evs {
		if ev.Key != key || !strings.HasPrefix(ev.Details, "released on merge: ") {
			continue
		}
		if ev.Commit != merge || ev.Worker != w.id || !strings.Contains(ev.Details, by.id+"'s work on it") {
			t.Errorf("the release of %s on merge: by %s, commit %s, %q; want by %s, commit %s (the merge), naming %s's work",
				key, ev.Worker, ev.Commit, ev.Details, w.id, merge, by.id)
		}
		return
	}
	t.Errorf("no lock_release event of %s on merge among %d releases", key, len(evs))
}

// lockgateJSON runs lockgate for the harness in dir, as the CI's worker,
// and reads what it prints on stdout, as JSON, into v.
func (f *fleet) lockgateJSON(dir string, v any, args ...string) {
	f.t.Helper()
	cmd := exec.CommandContext(f.ctx, f.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), f.env...), "LOCKGATE_WORKER=ci@fleet", "LOCKGATE_WORKER_TYPE=agent")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		f.t.Fatalf("lockgate %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		f.t.Fatalf("lockgate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// eventsOf is the events on the workflow branch, in the verifier's clone
// dir, of the key that "KEY of HOLDER" names, one a line.
func (f *fleet) eventsOf(dir, keyOf string) string {
	key, _, _ := strings.Cut(keyOf, " of ")
	lines, err := branchEventLines(f.ctx, dir, f.env, "origin/lockgate/workflow", func(l string) bool { return strings.Contains(l, `"key":`+strconv.Quote(key)) })
	if err != nil {
		f.t.Fatalf("read the events of %s on the workflow branch: %v", key, err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
