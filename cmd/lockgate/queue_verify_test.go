package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
)

// TestQueueFleetVerify: a fleet drains a work queue with claim and done
// on the git store, with workflow.auto_push, and pushes its work; then a
// fresh clone verifies every pushed commit against the lock log. The
// remote refuses the first push of every new tip of the workflow branch
// (a push race lost, made certain): each clone must push its events
// again itself, before the commits that need them are verified. One
// worker is killed in the middle of its first package and comes back as
// a new session; its claim expires and is taken over. The fleet reaches
// the remote through git daemon.
//
// On Redis the same fleet runs with the claim index (docs/queue.md): each
// clone keeps its own mark, and the store's queue epoch is shared.
func TestQueueFleetVerify(t *testing.T) {
	t.Parallel()
	oneFleetAtATime(t)
	t.Run("git", func(t *testing.T) { runQueueFleetVerify(t, "git", nil) })
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Options{})
		runQueueFleetVerify(t, "redis", []string{"LOCK_REDIS_URL=" + srv.URL()})
	})
}

func runQueueFleetVerify(t *testing.T, store string, storeEnv []string) {
	const (
		workers  = 4 // 0 and 1 in clones of their own, the rest in worktrees of one clone
		packages = 10
		files    = 6
		victim   = workers - 1
	)
	f := newFleet(t, store, storeEnv, 4)
	defer f.cancel()
	f.origin = filepath.Join(f.root, "origin.git")
	f.git(f.root, "init", "-q", "--bare", "-b", "main", f.origin)
	refuseFirstWorkflowPush(t, f.origin)
	seed := filepath.Join(f.root, "seed")
	f.git(f.root, "init", "-q", "-b", "main", seed)
	write(t, filepath.Join(seed, ".lockgate.yaml"), `version: 1
locks:
  store: `+store+`
  git:
    clock_skew: 1s
hooks:
  require_lock: true
  trailers: true
workflow:
  auto_push: true
`)
	var y strings.Builder
	y.WriteString("packages:\n")
	for i := range packages {
		fmt.Fprintf(&y, "  - id: WP-%02d\n    title: package %d\n    locks:\n      ttl: 30m\n      files: [%s]\n", i, i, fleetFile(i%files))
	}
	write(t, filepath.Join(seed, "work-packages.yaml"), y.String())
	for i := range files {
		write(t, filepath.Join(seed, fleetFile(i)), fmt.Sprintf("package src\n\n// file %d\n", i))
	}
	f.publish(seed)
	// The workers and the verifier reach the remote through git daemon
	// (the events tests beside this one use the file remote).
	daemon, url, err := startGitDaemon(f.root, gittest.Env(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopDaemon(daemon) })
	f.origin = url + "origin.git"
	shared := f.clone("shared")
	for n := range workers {
		w := &fleetWorker{f: f, n: n, id: fmt.Sprintf("agent-%d@fleet", n), rng: rand.New(rand.NewPCG(uint64(n), 11))}
		w.session = w.id
		if n < 2 {
			w.dir = f.clone(fmt.Sprintf("clone-%d", n))
		} else {
			w.dir = filepath.Join(f.root, fmt.Sprintf("worktree-%d", n))
			f.git(shared, "worktree", "add", "-q", "-b", fmt.Sprintf("agent-%d", n), w.dir, "origin/main")
		}
		f.workers = append(f.workers, w)
	}

	var mu sync.Mutex
	doneBy := map[string]string{}
	var wg sync.WaitGroup
	for _, w := range f.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.n == victim {
				if err := queueVictim(w); err != nil {
					f.fail(fmt.Errorf("%s: %w", w.id, err))
					return
				}
				w.session = w.id + "-restarted"
			}
			err := queueDrain(w, files, func(id string) {
				mu.Lock()
				defer mu.Unlock()
				if by, ok := doneBy[id]; ok {
					f.fail(fmt.Errorf("%s done twice: by %s and %s", id, by, w.id))
				}
				doneBy[id] = w.id
			})
			if err != nil {
				f.fail(fmt.Errorf("%s: %w", w.id, err))
			}
		}()
	}
	wg.Wait()
	if len(f.errs) > 0 {
		f.dumpLogs()
		t.Fatalf("the fleet failed: %v", errors.Join(f.errs...))
	}
	if len(doneBy) != packages {
		f.dumpLogs()
		t.Fatalf("%d packages done, want %d", len(doneBy), packages)
	}

	dir := filepath.Join(f.root, "verifier")
	f.git(f.root, "clone", "-q", f.origin, dir)
	cmd := exec.CommandContext(f.ctx, f.bin, "verify", "--fetch", "--range", f.base+"..origin/main", "--format", "json")
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), f.env...), "LOCKGATE_WORKER=ci@fleet", "LOCKGATE_WORKER_TYPE=agent")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var rep fleetReport
	jerr := json.Unmarshal(stdout.Bytes(), &rep)
	if err != nil || jerr != nil || !rep.OK || len(rep.Undecided) > 0 || len(rep.Violations) > 0 || rep.Commits != packages {
		f.dumpLogs()
		t.Fatalf("verify over the fleet's %d commits: %v (report: %v): ok=%v, %d judged, %d undecided, %d violations, want all %d proven\nstdout:\n%s\nstderr:\n%s",
			packages, err, jerr, rep.OK, rep.Commits, len(rep.Undecided), len(rep.Violations), packages, stdout.String(), stderr.String())
	}
}

// refuseFirstWorkflowPush makes the bare remote refuse the first push of
// every new tip of the workflow branch, as if another clone's push had
// won the race; the same tip pushed again is taken.
func refuseFirstWorkflowPush(t *testing.T, bare string) {
	t.Helper()
	seen := t.TempDir()
	hook := "#!/bin/sh\nwhile read old new ref; do\n" +
		"  if [ \"$ref\" = refs/heads/lockgate/workflow ] && mkdir '" + seen + "'/\"$new\" 2>/dev/null; then\n" +
		"    echo \"lost the race for $ref (refused once)\" >&2; exit 1\n  fi\ndone\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
}

// queueVictim claims a package with a short claim and is killed while it
// works on it: the claim is never given back, it expires.
func queueVictim(w *fleetWorker) error {
	out, code := w.run(w.f.bin, "claim", "--ttl", "3s")
	if code != 0 {
		return fmt.Errorf("claim: exit %d: %s", code, out)
	}
	work := exec.Command("sleep", "60")
	work.Dir = w.dir
	work.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := work.Start(); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	err := syscall.Kill(-work.Process.Pid, syscall.SIGKILL)
	_ = work.Wait()
	w.logf(time.Now(), "killed in the middle of its package (%v)", err)
	return err
}

// queueDrain claims, works, commits, pushes and marks done until claim
// says the queue is drained; each package done is told to done.
func queueDrain(w *fleetWorker, files int, done func(id string)) error {
	for {
		if err := w.f.ctx.Err(); err != nil {
			return err
		}
		out, code := w.run(w.f.bin, "claim")
		if code == 4 {
			time.Sleep(time.Duration(200+w.rng.IntN(400)) * time.Millisecond)
			continue
		}
		if code != 0 {
			return fmt.Errorf("claim: exit %d: %s", code, out)
		}
		id := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "WP-") {
				id = strings.TrimSpace(l)
			}
		}
		if id == "" {
			return nil // drained
		}
		if err := w.pull(); err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.TrimPrefix(id, "WP-"))
		if err != nil {
			return fmt.Errorf("claim printed %q", id)
		}
		file := fleetFile(n % files)
		p := filepath.Join(w.dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(p, fmt.Appendf(b, "// %s by %s\n", id, w.id), 0o644); err != nil {
			return err
		}
		if out, code := w.run("git", "add", "--", file); code != 0 {
			return fmt.Errorf("git add: %s", out)
		}
		if out, code := w.run("git", "commit", "-q", "-m", id+": "+file); code != 0 {
			return fmt.Errorf("git commit (hooks refused an honest commit?): exit %d: %s", code, out)
		}
		if err := w.push(); err != nil {
			return err
		}
		if out, code := w.run(w.f.bin, "done", id); code != 0 {
			return fmt.Errorf("done %s: exit %d: %s", id, code, out)
		}
		done(id)
	}
}
