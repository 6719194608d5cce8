//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package workflow

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// Environment of a helper process.
const (
	envHelper = "BRANCHTEST_HELPER" // "commit" or "push"
	envDir    = "BRANCHTEST_DIR"    // the repository's work tree
	envN      = "BRANCHTEST_N"      // events to write
	envWorker = "BRANCHTEST_WORKER" // worker name of the events
	envGo     = "BRANCHTEST_GO"     // start when this file exists
	envLock   = "BRANCHTEST_LOCK"   // flock this file around writes ("" = no lock)
)

const linePrefix = "branchtest: "

// helperProcess is the body of the writer processes the tests below
// start: TestMain runs it instead of the tests when envHelper is set.
func helperProcess() {
	mode := os.Getenv(envHelper)
	say := func(format string, args ...any) {
		fmt.Printf(linePrefix+format+"\n", args...)
	}
	ctx := context.Background()
	repo, err := gitexec.Discover(ctx, os.Getenv(envDir))
	if err != nil {
		say("error discover: %v", err)
		return
	}
	cfg := Config{GitDir: repo.GitDir, CommonDir: repo.CommonDir, WorkTree: repo.Toplevel}
	if p := os.Getenv(envLock); p != "" {
		cfg.Lock = flockAt(p)
	}
	w, err := Open(cfg)
	if err != nil {
		say("error open: %v", err)
		return
	}
	defer w.Close()
	j := journal.Open(filepath.Join(repo.CommonDir, "lockgate", "events.jsonl"))
	n, _ := strconv.Atoi(os.Getenv(envN))
	worker := os.Getenv(envWorker)
	for {
		if _, err := os.Stat(os.Getenv(envGo)); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for i := range n {
		// auto_commit: append to the journal, then commit to the branch.
		evs := []journal.Event{{Worker: worker, WorkerType: "agent", Action: journal.ActionAcquire, Key: fmt.Sprintf("file:src/%s/%d.go", worker, i)}}
		if err := j.Append(evs...); err != nil {
			say("error append: %v", err)
			return
		}
		c, err := w.Commit(ctx, evs)
		switch {
		case errors.Is(err, ErrContention):
			// Bounded retries ran out; the event is in the journal and
			// the next Sync commits it.
			say("contention %s", evs[0].ID)
		case err != nil:
			say("error commit: %v", err)
		case c != 1:
			say("error commit: committed %d events, want 1", c)
		default:
			say("committed %s", evs[0].ID)
		}
		if mode == "push" {
			if err := w.Push(ctx); err != nil {
				say("pusherr %v", err)
			} else {
				say("pushed")
			}
		}
	}
	say("lost %d", w.casLost.Load())
}

// flockAt returns a Config.Lock that takes an exclusive flock on path, as
// lockgate's `workflow` lock serializes its own writers.
func flockAt(path string) func(context.Context) (func(), error) {
	return func(context.Context) (func(), error) {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
		return func() {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}, nil
	}
}

// helperReport is what one helper process said.
type helperReport struct {
	committed []string
	contended []string // ids whose Commit gave up with ErrContention
	errs      []string
	pushErrs  []string
	pushed    int
	lost      int
}

// runHelpers starts one helper per worker (each in its repository dir),
// releases them at once and collects their reports.
func runHelpers(t *testing.T, mode string, dirs, workers []string, n int, lock string) []helperReport {
	t.Helper()
	goFile := filepath.Join(t.TempDir(), "go")
	type proc struct {
		cmd *exec.Cmd
		out bytes.Buffer
		err bytes.Buffer
	}
	procs := make([]*proc, len(workers))
	for i, worker := range workers {
		p := &proc{cmd: exec.Command(os.Args[0])}
		p.cmd.Env = append(os.Environ(), envHelper+"="+mode, envDir+"="+dirs[i], envN+"="+strconv.Itoa(n),
			envWorker+"="+worker, envGo+"="+goFile, envLock+"="+lock)
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	writeFile(t, goFile, "", 0o644)
	reports := make([]helperReport, len(procs))
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("helper %s: %v\n%s%s", workers[i], err, p.out.String(), p.err.String())
		}
		sc := bufio.NewScanner(&p.out)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), linePrefix)
			if !ok {
				continue
			}
			verb, rest, _ := strings.Cut(line, " ")
			r := &reports[i]
			switch verb {
			case "committed":
				r.committed = append(r.committed, rest)
			case "contention":
				r.contended = append(r.contended, rest)
			case "error":
				r.errs = append(r.errs, rest)
			case "pusherr":
				r.pushErrs = append(r.pushErrs, rest)
			case "pushed":
				r.pushed++
			case "lost":
				r.lost, _ = strconv.Atoi(rest)
			}
		}
	}
	return reports
}

// TestProcesses: 8 processes append 50 events each to the journal and
// commit each to the branch at once. With the workflow lock (as the CLI
// runs them) every commit succeeds. With the compare-and-swap alone a
// commit may give up after its bounded attempts (ErrContention): its event
// is still in the journal and one Sync commits it. Either way the branch
// ends with exactly the 400 events, each once, git fsck is clean, and the
// user's index, work tree, HEAD and other refs are byte for byte as they
// were.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 16 processes")
	}
	t.Parallel()
	for _, locked := range []bool{true, false} {
		name := map[bool]string{true: "workflow lock", false: "compare-and-swap only"}[locked]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			r.Git("branch", "feature")
			r.Git("tag", "v1")
			r.Write("a.txt", "staged change\n")
			r.Git("add", "a.txt")
			r.Write("b.txt", "unstaged change\n")
			r.Write("untracked.txt", "new\n")
			before := userState(t, r)
			status := r.Git("status", "--porcelain=v2")

			procs, perProc := 8, gittest.Rounds(t, 50)
			lock := ""
			if locked {
				lock = filepath.Join(t.TempDir(), "workflow.lock")
			}
			dirs, workers := make([]string, procs), make([]string, procs)
			for i := range workers {
				dirs[i], workers[i] = r.Dir, fmt.Sprintf("agent-%d", i)
			}
			start := time.Now()
			reports := runHelpers(t, "commit", dirs, workers, perProc, lock)
			elapsed := time.Since(start)
			var committed, contended []string
			lost := 0
			for i, rep := range reports {
				if len(rep.errs) > 0 {
					t.Errorf("%s: %d errors, first: %s", workers[i], len(rep.errs), rep.errs[0])
				}
				committed = append(committed, rep.committed...)
				contended = append(contended, rep.contended...)
				lost += rep.lost
			}
			t.Logf("%d commits by %d processes in %v; %d compare-and-swaps lost and retried; %d commits gave up",
				len(committed), procs, elapsed, lost, len(contended))
			// Writers of one clone queue on its writer lock: every
			// commit gets through, whatever the load, with or without
			// the caller's lock, and Sync finds nothing left to do.
			if len(contended) > 0 {
				t.Errorf("%d commits gave up", len(contended))
			}
			w := openWriter(t, repoOf(r))
			got := branchIDs(t, w)
			equalIDs(t, "branch vs reported", got, sortedCopy(committed))
			j := journal.Open(filepath.Join(r.Dir, ".git", "lockgate", "events.jsonl"))
			jevs, err := j.Read(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			equalIDs(t, "branch vs journal", got, idsOf(jevs))
			res, err := w.Sync(context.Background(), j)
			if err != nil || res.Committed != 0 || res.Journal != procs*perProc {
				t.Errorf("Sync after the race = %+v, %v; want nothing to commit", res, err)
			}
			if n := r.Git("rev-list", "--count", "lockgate/workflow"); n != strconv.Itoa(len(committed)) {
				t.Errorf("%s commits on the branch, want one per commit reported", n)
			}
			fsck(t, r.Dir, r.Env)
			if after := userState(t, r); after != before {
				t.Errorf("user state changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if got := r.Git("status", "--porcelain=v2"); got != status {
				t.Errorf("git status changed:\n%s\nwant:\n%s", got, status)
			}
		})
	}
}

func sortedCopy(ids []string) []string {
	evs := make([]journal.Event, len(ids))
	for i, id := range ids {
		evs[i].ID = id
	}
	return idsOf(evs)
}

// TestMixedWriters races Commit against git plumbing moving the same
// branch with `git update-ref REF NEW OLD`, over 1,000 rounds. In each
// round both sides start from the same old value: the git side has its
// commit on the tip ready, and both swap at once; the loser builds again
// on the winner's commit. Every commit adds one event to its parent's
// tree, so a lost update (a swap that overwrote a tip it did not build on)
// drops an event and a commit: the test checks that the final tree holds
// every event either side reports committed and that the history has
// exactly one commit per event.
func TestMixedWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 rounds of git plumbing")
	}
	t.Parallel()
	rounds := gittest.Rounds(t, 1000)
	const ref = "refs/heads/lockgate/workflow"
	r := newRepo(t)
	w := openWriter(t, repoOf(r))
	ctx := context.Background()
	env := append(append([]string(nil), r.Env...), "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "plumbing-index"))
	seed := event("seed", 0)
	if _, err := w.Commit(ctx, []journal.Event{seed}); err != nil {
		t.Fatal(err)
	}

	// The git side's blobs are written up front, in one process: they are
	// not part of the race.
	blobDir := t.TempDir()
	gitEvents := make([]journal.Event, rounds)
	var paths strings.Builder
	for i := range gitEvents {
		gitEvents[i] = event("git-plumbing", i)
		line, _ := encodeEvent(gitEvents[i])
		p := filepath.Join(blobDir, strconv.Itoa(i))
		writeFile(t, p, string(line), 0o644)
		paths.WriteString(p + "\n")
	}
	blobs := strings.Fields(gitIn(t, r.Dir, env, paths.String(), "hash-object", "-w", "--stdin-paths"))

	// prepare builds, with plumbing only, the commit of git event i on the
	// current tip and returns it with that tip.
	prepare := func(i int) (commit, old string, err error) {
		if old, err = tryGit(r.Dir, env, "", "rev-parse", ref); err != nil {
			return "", "", err
		}
		if _, err = tryGit(r.Dir, env, "", "read-tree", old); err != nil {
			return "", "", err
		}
		if _, err = tryGit(r.Dir, env, "", "update-index", "--add", "--cacheinfo", "100644,"+blobs[i]+","+EventPath(gitEvents[i].ID)); err != nil {
			return "", "", err
		}
		tree, err := tryGit(r.Dir, env, "", "write-tree")
		if err != nil {
			return "", "", err
		}
		commit, err = tryGit(r.Dir, env, "git plumbing event "+strconv.Itoa(i)+"\n", "commit-tree", tree, "-p", old)
		return commit, old, err
	}

	var ours []string
	gitLost, gitWon := 0, 0
	for i := range rounds {
		c, old, err := prepare(i)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		ev := event("lockgate", i)
		var wg sync.WaitGroup
		var gitErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for {
				if _, err := tryGit(r.Dir, env, "", "update-ref", ref, c, old); err == nil {
					if first {
						gitWon++
					}
					return
				}
				first = false
				gitLost++
				if c, old, gitErr = prepare(i); gitErr != nil {
					return
				}
			}
		}()
		n, err := w.Commit(ctx, []journal.Event{ev})
		wg.Wait()
		if err != nil || n != 1 {
			t.Fatalf("round %d: Commit = %d, %v", i, n, err)
		}
		if gitErr != nil {
			t.Fatalf("round %d: git side: %v", i, gitErr)
		}
		ours = append(ours, ev.ID)
	}
	t.Logf("%d rounds: git plumbing won %d swaps at once and lost %d; lockgate lost %d",
		rounds, gitWon, gitLost, w.casLost.Load())
	// Which side loses depends on the scheduler (on a loaded machine git's
	// prepared swap may win every time); the race ran when any swap was
	// lost, and the outcome below is what must hold either way.
	if gitLost == 0 && w.casLost.Load() == 0 {
		t.Errorf("no swap was ever lost (git %d, lockgate %d): the race was not run", gitLost, w.casLost.Load())
	}
	want := sortedCopy(append(append(ours, idsOf(gitEvents)...), seed.ID))
	equalIDs(t, "final branch", branchIDs(t, w), want)
	if n := r.Git("rev-list", "--count", ref); n != strconv.Itoa(len(want)) {
		t.Fatalf("%s commits for %d events: an update was lost", n, len(want))
	}
	fsck(t, r.Dir, r.Env)
}

// TestConcurrentPushClones: two clones commit and push to one bare remote
// at the same time; the remote branch ends with the union of their
// events, each once.
func TestConcurrentPushClones(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes that push")
	}
	t.Parallel()
	remote := newBare(t)
	a, b := cloneOf(t, remote), cloneOf(t, remote)
	const n = 15
	reports := runHelpers(t, "push", []string{a.Dir, b.Dir}, []string{"clone-a", "clone-b"}, n, "")
	var all []string
	for i, rep := range reports {
		if len(rep.errs) > 0 {
			t.Errorf("clone %d: %v", i, rep.errs)
		}
		if len(rep.pushErrs) > 0 {
			t.Errorf("clone %d: %d of %d pushes failed, first: %s", i, len(rep.pushErrs), n, rep.pushErrs[0])
		}
		all = append(all, rep.committed...)
	}
	// Whatever the race left, one more push each settles it.
	for _, r := range []*gittest.Repo{a, b} {
		if err := openWriter(t, repoOf(r)).Push(context.Background()); err != nil {
			t.Fatalf("final push: %v", err)
		}
	}
	if len(all) != 2*n {
		t.Fatalf("%d events committed, want %d", len(all), 2*n)
	}
	equalIDs(t, "remote", branchIDs(t, openWriter(t, bareOf(remote))), sortedCopy(all))
	fsck(t, remote, a.Env)
}

// TestCommitInProgress: while `git commit` waits for its editor (holding
// the index lock), events are committed to the branch; then the user's
// commit completes with exactly its own staged content, and the index is
// as the user left it.
func TestCommitInProgress(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	parent := r.Git("rev-parse", "HEAD")
	r.Write("a.txt", "staged edit\n")
	r.Write("new.txt", "new file\n")
	r.Git("add", "a.txt", "new.txt")
	r.Write("b.txt", "not staged\n")
	staged := r.Git("ls-files", "-s")

	sig := t.TempDir()
	editor := filepath.Join(sig, "editor.sh")
	writeFile(t, editor, fmt.Sprintf(`#!/bin/sh
touch %[1]s/started
while [ ! -f %[1]s/release ]; do sleep 0.01; done
printf 'user commit\n' > "$1"
`, sig), 0o755)
	cmd := exec.Command("git", "commit")
	cmd.Dir = r.Dir
	cmd.Env = append(append([]string(nil), r.Env...), "GIT_EDITOR="+editor)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(sig, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the editor did not start: %s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, ".git", "index.lock")); err != nil {
		t.Logf("note: git commit holds no index.lock while the editor runs: %v", err)
	}

	w := openWriter(t, repoOf(r))
	evs := events("agent", 20)
	for i := range evs {
		if n, err := w.Commit(context.Background(), evs[i:i+1]); err != nil || n != 1 {
			t.Fatalf("Commit during git commit = %d, %v", n, err)
		}
	}
	writeFile(t, filepath.Join(sig, "release"), "", 0o644)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("git commit: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("git commit did not finish")
	}

	if got := r.Git("rev-parse", "HEAD^"); got != parent {
		t.Fatalf("HEAD^ = %s, want %s", got, parent)
	}
	if got := r.Git("log", "-1", "--format=%s"); got != "user commit" {
		t.Fatalf("HEAD message %q", got)
	}
	if got := r.Git("diff-tree", "--no-commit-id", "--name-status", "-r", "HEAD"); got != "M\ta.txt\nA\tnew.txt" {
		t.Fatalf("HEAD changes:\n%s", got)
	}
	if got := r.Git("show", "HEAD:a.txt"); got != "staged edit" {
		t.Fatalf("HEAD:a.txt = %q", got)
	}
	if got := r.Git("ls-files", "-s"); got != staged {
		t.Fatalf("index after the commit:\n%s\nwant what the user staged:\n%s", got, staged)
	}
	if got := r.Git("diff", "--name-only"); got != "b.txt" {
		t.Fatalf("unstaged changes: %q", got)
	}
	if got := r.Git("status", "--porcelain"); got != "M b.txt" {
		t.Fatalf("status: %q", got)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(evs))
	fsck(t, r.Dir, r.Env)
}
