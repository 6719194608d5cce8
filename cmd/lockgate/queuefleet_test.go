package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
)

// BenchmarkQueueFleet: a fleet drains a work queue. Workers (the first
// three in clones of their own, the rest worktrees of one clone) loop
// claim → pull → work (a fixed sleep) → edit the package's files → commit
// through the installed hooks → pull --rebase and push → done, each
// claim kept alive by a refresh every third of its TTL. One worker is
// killed with SIGKILL in the middle of a package, which comes back when
// its claim expires. Run on the file store (every worker a worktree of
// one clone, whose store it is), the git store and Redis, and once without
// lockgate (plain git: the same workers take the same tasks from a shared
// list with no locks, and count the rebase conflicts).
//
// Reported per run: makespan, its lower bound and their ratio, its ratio
// to the makespan of a coordinator with zero overhead (simulated), packages
// done, packages handed out again after done (must be 0), rebase
// conflicts, the share of the workers' time spent waiting for a claim,
// and claim latency. Run with -benchtime 1x; the size is set by
// LOCKGATE_BENCH_FLEET_PACKAGES (200), _WORKERS (13), _FILES (24),
// _WORK (the sleep per package, 1s) and _TTL (the claim TTL, 1m);
// _CLAIM_LOCK=false sets locks.use_global_claim_lock: false.
func BenchmarkQueueFleet(b *testing.B) {
	cfg := queueFleetConfig{
		packages: envInt(b, "LOCKGATE_BENCH_FLEET_PACKAGES", 200),
		workers:  envInt(b, "LOCKGATE_BENCH_FLEET_WORKERS", 13),
		files:    envInt(b, "LOCKGATE_BENCH_FLEET_FILES", 24),
		work:     envDuration(b, "LOCKGATE_BENCH_FLEET_WORK", time.Second),
		ttl:      envDuration(b, "LOCKGATE_BENCH_FLEET_TTL", time.Minute),
	}
	cfg.tasks = fleetTasks(cfg.packages, cfg.files)
	simSpan, simIdle := cfg.simulate()
	cfg.zero = simSpan
	b.Logf("%d packages over %d files, %d workers, %v of work each; lower bound %v (%s); "+
		"scheduled as claim does with no cost but the work: makespan %v, workers without a package %.1f %% of the time",
		cfg.packages, cfg.files, cfg.workers, cfg.work, cfg.bound().Round(time.Millisecond), cfg.boundWhy(),
		simSpan.Round(time.Millisecond), 100*simIdle)
	for _, store := range []string{"plain-git", "file", "git", "redis"} {
		b.Run(store, func(b *testing.B) {
			for range b.N {
				var storeEnv []string
				if store == "redis" {
					storeEnv = []string{"LOCK_REDIS_URL=" + redistest.Start(b, redistest.Options{}).URL()}
				}
				runQueueFleet(b, cfg, store, storeEnv)
			}
		})
	}
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive whole number", name, v)
	}
	return n
}

func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		b.Fatalf("%s=%q: want a duration", name, v)
	}
	return d
}

type queueFleetConfig struct {
	packages, workers, files int
	work, ttl                time.Duration
	tasks                    []fleetTask
	// zero is the makespan of a coordinator with zero overhead
	// (simulate).
	zero time.Duration
}

// fleetTask is one package: its files and the package it depends on.
type fleetTask struct {
	id    string
	files []string
	dep   int // -1: none
}

// fleetTasks makes n packages of 1–3 of the files each, one in ten
// depending on a package a dozen places before it: a fixed seed, so that
// every run and store drains the same queue.
func fleetTasks(n, files int) []fleetTask {
	rng := rand.New(rand.NewPCG(1, 2))
	tasks := make([]fleetTask, n)
	for i := range tasks {
		k := 1 + rng.IntN(3)
		var fs []string
		for _, j := range rng.Perm(files)[:k] {
			fs = append(fs, fmt.Sprintf("src/f%02d.go", j))
		}
		slices.Sort(fs)
		dep := -1
		if i%10 == 9 && i >= 12 {
			dep = i - 12
		}
		tasks[i] = fleetTask{id: fmt.Sprintf("WP-%03d", i), files: fs, dep: dep}
	}
	return tasks
}

// bound is the least time any schedule takes: the work over the workers,
// the busiest file's packages back to back, or the longest chain of
// dependencies, whichever is longest.
func (c queueFleetConfig) bound() time.Duration {
	b, _ := c.bounds()
	return b
}

func (c queueFleetConfig) boundWhy() string {
	_, why := c.bounds()
	return why
}

func (c queueFleetConfig) bounds() (time.Duration, string) {
	perWorker := time.Duration((len(c.tasks) + c.workers - 1) / c.workers)
	byFile := map[string]int{}
	chain := make([]int, len(c.tasks))
	longest := 0
	for i, t := range c.tasks {
		for _, f := range t.files {
			byFile[f]++
		}
		chain[i] = 1
		if t.dep >= 0 {
			chain[i] = chain[t.dep] + 1
		}
		longest = max(longest, chain[i])
	}
	busiest := 0
	for _, n := range byFile {
		busiest = max(busiest, n)
	}
	best, why := perWorker, fmt.Sprintf("%d packages a worker", perWorker)
	if time.Duration(busiest) > best {
		best, why = time.Duration(busiest), fmt.Sprintf("the busiest file's %d packages", busiest)
	}
	if time.Duration(longest) > best {
		best, why = time.Duration(longest), fmt.Sprintf("a chain of %d dependencies", longest)
	}
	return best * c.work, why
}

// simulate schedules the queue as claim does, with no cost but the work:
// each free worker takes the first package whose dependencies are done
// and whose files no package in progress has. It returns the makespan and
// the share of the workers' time they had no package to take: what the
// queue's shape alone costs.
func (c queueFleetConfig) simulate() (time.Duration, float64) {
	type running struct {
		task int
		end  time.Duration
	}
	var now, idle time.Duration
	var run []running
	done := make([]bool, len(c.tasks))
	started := make([]bool, len(c.tasks))
	held := map[string]bool{}
	left := len(c.tasks)
	for left > 0 {
		for len(run) < c.workers {
			pick := -1
			for i, t := range c.tasks {
				if started[i] || t.dep >= 0 && !done[t.dep] || slices.ContainsFunc(t.files, func(f string) bool { return held[f] }) {
					continue
				}
				pick = i
				break
			}
			if pick < 0 {
				break
			}
			started[pick] = true
			for _, f := range c.tasks[pick].files {
				held[f] = true
			}
			run = append(run, running{pick, now + c.work})
		}
		// The next package to finish frees its files.
		slices.SortFunc(run, func(a, b running) int { return int(a.end - b.end) })
		next := run[0]
		idle += time.Duration(c.workers-len(run)) * (next.end - now)
		now = next.end
		run = run[1:]
		done[next.task] = true
		for _, f := range c.tasks[next.task].files {
			held[f] = false
		}
		left--
	}
	return now, idle.Seconds() / (float64(c.workers) * now.Seconds())
}

// queueFleet is one run.
type queueFleet struct {
	b      *testing.B
	cfg    queueFleetConfig
	store  string // "plain-git", "git" or "redis"
	ctx    context.Context
	cancel context.CancelFunc
	bin    string
	root   string
	origin string
	env    []string
	dirs   []string // each worker's checkout

	mu        sync.Mutex
	errs      []error
	next      int                  // plain git: the next task of the shared list
	doneAt    map[string]time.Time // package -> when its done returned
	doneCount map[string]int
	handed    map[string]int // package -> claims of it that returned it
	again     int            // claims of a package already done
	retaken   int            // claims of a package after its claim expired
	conflicts int            // pulls that stopped in a rebase conflict
	claims    []time.Duration
	waited    time.Duration // time spent getting a package (claims that found none, and the waits between)
	tail      time.Duration // of which, waits that ended with the queue drained
	none      int           // claims that found no package free (exit 4)
	held      time.Duration // the packages' time from claim to done, summed
	busy      time.Duration // every worker's time, from start to its end
	lastDone  time.Time
	// phases sums the workers' time by what it went to: claim (the
	// claim commands), idle (the pauses after a claim that found none
	// free), pull, work, commit (the edit and the commit through the
	// hooks), push (with its pulls and retries), done.
	phases map[string]time.Duration
	pushes int // git push runs, refused ones included
}

// spent adds the time since began to phase.
func (f *queueFleet) spent(phase string, began time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.phases[phase] += time.Since(began)
}

func runQueueFleet(b *testing.B, cfg queueFleetConfig, store string, storeEnv []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	f := &queueFleet{b: b, cfg: cfg, store: store, ctx: ctx, cancel: cancel, bin: lockgateBinary(b), root: b.TempDir(),
		doneAt: map[string]time.Time{}, doneCount: map[string]int{}, handed: map[string]int{}, phases: map[string]time.Duration{}}
	home := filepath.Join(f.root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		b.Fatal(err)
	}
	// Real commit times: the hooks and the lock log judge commits by them.
	for _, kv := range gittest.Env(home) {
		if !strings.HasPrefix(kv, "GIT_AUTHOR_DATE=") && !strings.HasPrefix(kv, "GIT_COMMITTER_DATE=") {
			f.env = append(f.env, kv)
		}
	}
	f.env = append(f.env, storeEnv...)
	b.StopTimer()
	f.setup()
	b.StartTimer()

	victim := 1 // a worker in a worktree; 1 of 13 is 5 %
	start := time.Now()
	var wg sync.WaitGroup
	for n := range cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			var err error
			if store == "plain-git" {
				err = f.plainWorker(n)
			} else {
				err = f.queueWorker(n, n == victim)
			}
			if err != nil {
				f.fail(fmt.Errorf("worker %d: %w", n, err))
			}
			f.mu.Lock()
			f.busy += time.Since(began)
			f.mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	if len(f.errs) > 0 {
		b.Fatalf("the fleet failed: %v", errors.Join(f.errs...))
	}
	makespan := f.lastDone.Sub(start)
	bound := cfg.bound()
	b.ReportMetric(makespan.Seconds(), "makespan-s")
	b.ReportMetric(bound.Seconds(), "bound-s")
	b.ReportMetric(makespan.Seconds()/bound.Seconds(), "x-bound")
	b.ReportMetric(makespan.Seconds()/cfg.zero.Seconds(), "x-zero-overhead")
	b.ReportMetric(float64(f.conflicts), "conflicts")
	b.ReportMetric(float64(f.pushes)/float64(cfg.packages), "pushes/package")
	done, once := 0, 0
	for _, t := range cfg.tasks {
		if f.doneCount[t.id] > 0 {
			done++
		}
		if f.doneCount[t.id] == 1 {
			once++
		}
	}
	b.ReportMetric(float64(done), "done")
	if store == "plain-git" {
		return
	}
	b.ReportMetric(float64(once), "done-once")
	b.ReportMetric(float64(f.again), "handed-after-done")
	b.ReportMetric(float64(f.retaken), "taken-over")
	b.ReportMetric(100*f.waited.Seconds()/f.busy.Seconds(), "%-waiting")
	b.ReportMetric(100*(f.waited-f.tail).Seconds()/f.busy.Seconds(), "%-waiting-before-drained")
	// How many packages were in hand at once, on average: with every
	// package locking 1–3 of the files, fewer than the workers.
	b.ReportMetric(f.held.Seconds()/makespan.Seconds(), "in-progress")
	b.ReportMetric(float64(f.none), "claims-none-free")
	b.ReportMetric(ms(percentile(f.claims, 0.5), 1), "claim-p50-ms")
	b.ReportMetric(ms(percentile(f.claims, 0.99), 1), "claim-p99-ms")
	for _, phase := range []string{"claim", "idle", "pull", "work", "commit", "push", "done"} {
		if f.store != "plain-git" {
			b.ReportMetric(100*f.phases[phase].Seconds()/f.busy.Seconds(), "%-"+phase)
		}
	}
	f.checkQueue()
}

// setup makes the remote with the base commit and the work packages, the
// clones and the worktrees, and (with lockgate) installs the hooks.
func (f *queueFleet) setup() {
	b := f.b
	f.origin = filepath.Join(f.root, "origin.git")
	f.git(f.root, "init", "-q", "--bare", "-b", "main", f.origin)
	seed := filepath.Join(f.root, "seed")
	f.git(f.root, "init", "-q", "-b", "main", seed)
	if f.store != "plain-git" {
		policy := fmt.Sprintf("version: 1\nlocks:\n  store: %s\nhooks:\n  require_lock: true\n", f.store)
		if v := os.Getenv("LOCKGATE_BENCH_FLEET_CLAIM_LOCK"); v != "" {
			policy = strings.Replace(policy, "locks:\n", "locks:\n  use_global_claim_lock: "+v+"\n", 1)
		}
		write(b, filepath.Join(seed, ".lockgate.yaml"), policy)
		var y strings.Builder
		y.WriteString("packages:\n")
		for _, t := range f.cfg.tasks {
			fmt.Fprintf(&y, "  - id: %s\n    title: package %s\n", t.id, t.id)
			if t.dep >= 0 {
				fmt.Fprintf(&y, "    depends_on: [%s]\n", f.cfg.tasks[t.dep].id)
			}
			fmt.Fprintf(&y, "    locks:\n      ttl: %s\n      files: [%s]\n", f.cfg.ttl, strings.Join(t.files, ", "))
		}
		write(b, filepath.Join(seed, "work-packages.yaml"), y.String())
	}
	for i := range f.cfg.files {
		write(b, filepath.Join(seed, fmt.Sprintf("src/f%02d.go", i)), fmt.Sprintf("package src\n\n// file %d\n", i))
	}
	f.git(seed, "add", "-A")
	f.git(seed, "commit", "-q", "-m", "base")
	f.git(seed, "remote", "add", "origin", f.origin)
	f.git(seed, "push", "-q", "origin", "main")

	clone := func(name string) string {
		dir := filepath.Join(f.root, name)
		f.git(f.root, "clone", "-q", f.origin, dir)
		f.git(dir, "config", "gc.auto", "0")
		f.git(dir, "config", "maintenance.auto", "false")
		if f.store != "plain-git" {
			if out, err := f.run(dir, "installer", f.bin, "install"); err != nil {
				b.Fatalf("lockgate install in %s: %v\n%s", name, err, out)
			}
		}
		return dir
	}
	shared := clone("shared")
	for n := range f.cfg.workers {
		// The file store is one clone's: its workers share that clone.
		if n < 3 && f.store != "file" {
			f.dirs = append(f.dirs, clone(fmt.Sprintf("clone-%d", n)))
			continue
		}
		dir := filepath.Join(f.root, fmt.Sprintf("worktree-%d", n))
		f.git(shared, "worktree", "add", "-q", "-b", fmt.Sprintf("agent-%d", n), dir, "origin/main")
		f.dirs = append(f.dirs, dir)
	}
}

func (f *queueFleet) git(dir string, args ...string) string {
	f.b.Helper()
	out, err := f.run(dir, "", "git", args...)
	if err != nil {
		f.b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

// run runs a command in dir as worker (lockgate's LOCKGATE_WORKER).
func (f *queueFleet) run(dir, worker, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(f.ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), f.env...), "LOCKGATE_WORKER="+worker, "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SESSION="+worker)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (f *queueFleet) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
	f.cancel()
}

// queueWorker drains the queue with lockgate until claim says it is
// drained. The victim is killed in the middle of its first package.
func (f *queueFleet) queueWorker(n int, victim bool) error {
	dir, worker := f.dirs[n], fmt.Sprintf("agent-%d@fleet", n)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for {
		if f.ctx.Err() != nil {
			return f.ctx.Err()
		}
		// Get a package: claim, and on exit 4 (none free now) wait and
		// try again.
		asked := time.Now()
		var id string
		for {
			t0 := time.Now()
			cmd := exec.CommandContext(f.ctx, f.bin, "claim")
			cmd.Dir = dir
			cmd.Env = append(append([]string(nil), f.env...), "LOCKGATE_WORKER="+worker, "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SESSION="+worker)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			took := time.Since(t0)
			f.mu.Lock()
			f.claims = append(f.claims, took)
			f.phases["claim"] += took
			f.mu.Unlock()
			code := exitCode(err)
			if code == 4 {
				f.mu.Lock()
				f.none++
				f.mu.Unlock()
				idle := time.Now()
				time.Sleep(time.Duration(100+rng.IntN(400)) * time.Millisecond)
				f.spent("idle", idle)
				continue
			}
			if code != 0 {
				return fmt.Errorf("claim: exit %d: %s", code, stderr.String())
			}
			id = strings.TrimSpace(string(out))
			break
		}
		f.mu.Lock()
		f.waited += time.Since(asked)
		if id == "" {
			f.tail += time.Since(asked)
		} else {
			if _, done := f.doneAt[id]; done {
				f.again++
			}
			if f.handed[id] > 0 {
				f.retaken++
			}
			f.handed[id]++
		}
		f.mu.Unlock()
		if id == "" {
			return nil // drained
		}
		task := f.task(id)
		if victim {
			return f.die(dir)
		}
		began := time.Now()
		if err := f.doPackage(dir, worker, task, rng); err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		f.mu.Lock()
		f.held += time.Since(began)
		f.mu.Unlock()
	}
}

func (f *queueFleet) task(id string) fleetTask {
	i, _ := strconv.Atoi(strings.TrimPrefix(id, "WP-"))
	return f.cfg.tasks[i]
}

// die is the victim: it starts its work (a process of its own group) and
// is killed with SIGKILL in the middle of it. Its claim is never given
// back: it expires.
func (f *queueFleet) die(dir string) error {
	cmd := exec.Command("sleep", "60")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	time.Sleep(f.cfg.work / 2)
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		return err
	}
	_ = cmd.Wait()
	return nil
}

// doPackage does one claimed package: bring the tree up to date, work,
// edit, commit through the hooks, push, done; the claim refreshed every
// third of its TTL meanwhile.
func (f *queueFleet) doPackage(dir, worker string, t fleetTask, rng *rand.Rand) error {
	stop := make(chan struct{})
	var beat sync.WaitGroup
	beat.Add(1)
	go func() {
		defer beat.Done()
		tick := time.NewTicker(f.cfg.ttl / 3)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				args := append([]string{"lock", "refresh", "task:" + t.id, "--ttl", f.cfg.ttl.String()}, t.files...)
				if out, err := f.run(dir, worker, f.bin, args...); err != nil {
					f.fail(fmt.Errorf("%s: refresh: %v: %s", t.id, err, out))
					return
				}
			}
		}
	}()
	// The refreshes stop before done: a refresh after it would find the
	// locks given back, and perhaps another's.
	stopBeat := sync.OnceFunc(func() { close(stop); beat.Wait() })
	defer stopBeat()
	began := time.Now()
	if err := f.pull(dir, rng); err != nil {
		return err
	}
	f.spent("pull", began)
	began = time.Now()
	time.Sleep(f.cfg.work)
	f.spent("work", began)
	began = time.Now()
	if err := f.edit(dir, worker, t); err != nil {
		return err
	}
	if out, err := f.run(dir, worker, "git", "commit", "-q", "-m", t.id+": "+strings.Join(t.files, " ")); err != nil {
		return fmt.Errorf("git commit: %v: %s", err, out)
	}
	f.spent("commit", began)
	began = time.Now()
	if err := f.push(dir, worker, rng); err != nil {
		return err
	}
	f.spent("push", began)
	stopBeat()
	began = time.Now()
	if out, err := f.run(dir, worker, f.bin, "done", t.id); err != nil {
		return fmt.Errorf("done: %v: %s", err, out)
	}
	f.spent("done", began)
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	f.doneAt[t.id] = now
	f.doneCount[t.id]++
	if now.After(f.lastDone) {
		f.lastDone = now
	}
	return nil
}

// edit appends a line to each of the task's files and stages them.
func (f *queueFleet) edit(dir, worker string, t fleetTask) error {
	for _, file := range t.files {
		p := filepath.Join(dir, file)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		data = fmt.Appendf(data, "// %s by %s\n", t.id, worker)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	if out, err := f.run(dir, worker, "git", append([]string{"add", "--"}, t.files...)...); err != nil {
		return fmt.Errorf("git add: %v: %s", err, out)
	}
	return nil
}

// errConflict: a pull stopped in a rebase conflict (aborted).
var errConflict = errors.New("rebase conflict")

// pull rebases onto origin's main. A pull that stops in a conflict is
// counted, aborted, and reported as errConflict. Worktrees of one clone
// share its remote-tracking refs: a fetch refused meanwhile is retried.
func (f *queueFleet) pull(dir string, rng *rand.Rand) error {
	var out string
	var err error
	for range 20 {
		out, err = f.run(dir, "", "git", "pull", "-q", "--rebase", "origin", "main")
		if err == nil {
			return nil
		}
		if _, rerr := f.run(dir, "", "git", "rev-parse", "-q", "--verify", "REBASE_HEAD"); rerr == nil {
			f.mu.Lock()
			f.conflicts++
			f.mu.Unlock()
			if out, err := f.run(dir, "", "git", "rebase", "--abort"); err != nil {
				return fmt.Errorf("git rebase --abort: %v: %s", err, out)
			}
			return errConflict
		}
		time.Sleep(time.Duration(50+rng.IntN(200)) * time.Millisecond)
	}
	return fmt.Errorf("git pull --rebase kept failing: %v: %s", err, out)
}

// push pushes to origin's main, rebasing onto what others pushed first.
// A conflict with lockgate is an error (the locks should have prevented
// it); plain git redoes its edit on the new main (redo).
func (f *queueFleet) push(dir, worker string, rng *rand.Rand, redo ...func() error) error {
	for range 100 {
		// As the worker: pre-push judges the commits' trailers against
		// who pushes them.
		out, err := f.run(dir, worker, "git", "push", "-q", "origin", "HEAD:main")
		f.mu.Lock()
		f.pushes++
		f.mu.Unlock()
		if err == nil {
			return nil
		}
		retry := false
		for _, s := range []string{"[rejected]", "fetch first", "non-fast-forward", "cannot lock ref", "failed to update ref"} {
			if strings.Contains(out, s) {
				retry = true
			}
		}
		if !retry {
			return fmt.Errorf("git push refused: %v: %s", err, out)
		}
		err = f.pull(dir, rng)
		if errors.Is(err, errConflict) && len(redo) > 0 {
			err = redo[0]()
		}
		if err != nil {
			return err
		}
	}
	return errors.New("git push: origin kept moving")
}

// plainWorker takes tasks from the shared list in order, with no locks
// and no hooks: pull, work, edit, commit, push; a rebase that conflicts
// is counted, and the worker starts its edit again on origin's main.
func (f *queueFleet) plainWorker(n int) error {
	dir, worker := f.dirs[n], fmt.Sprintf("agent-%d@fleet", n)
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	for {
		f.mu.Lock()
		i := f.next
		f.next++
		f.mu.Unlock()
		if i >= len(f.cfg.tasks) {
			return nil
		}
		t := f.cfg.tasks[i]
		if err := f.pull(dir, rng); err != nil {
			return err
		}
		time.Sleep(f.cfg.work)
		commit := func() error {
			if err := f.edit(dir, worker, t); err != nil {
				return err
			}
			if out, err := f.run(dir, worker, "git", "commit", "-q", "--no-verify", "-m", t.id); err != nil {
				return fmt.Errorf("git commit: %v: %s", err, out)
			}
			return nil
		}
		if err := commit(); err != nil {
			return err
		}
		redo := func() error {
			if out, err := f.run(dir, "", "git", "reset", "-q", "--hard", "origin/main"); err != nil {
				return fmt.Errorf("git reset: %v: %s", err, out)
			}
			return commit()
		}
		if err := f.push(dir, worker, rng, redo); err != nil {
			return err
		}
		f.mu.Lock()
		now := time.Now()
		f.doneCount[t.id]++
		if now.After(f.lastDone) {
			f.lastDone = now
		}
		f.mu.Unlock()
	}
}

// checkQueue fails the run unless every package is done exactly once and
// none was handed out after it was done, and the store agrees.
func (f *queueFleet) checkQueue() {
	b := f.b
	for _, t := range f.cfg.tasks {
		if c := f.doneCount[t.id]; c != 1 {
			b.Errorf("%s done %d times, want once", t.id, c)
		}
	}
	if f.again > 0 {
		b.Errorf("%d claims handed out a package already done", f.again)
	}
	if f.conflicts > 0 {
		b.Errorf("%d rebase conflicts with every file locked", f.conflicts)
	}
	out, err := f.run(f.dirs[0], "checker", f.bin, "packages")
	if err != nil || !strings.Contains(out, fmt.Sprintf("%d packages in", len(f.cfg.tasks))) ||
		!strings.Contains(out, fmt.Sprintf("0 ready, 0 claimed, %d done, 0 failed", len(f.cfg.tasks))) {
		b.Errorf("lockgate packages: %v\n%s", err, out)
	}
}
