package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
)

// The work queue driven by real lockgate processes: many claimers at once,
// killed claimers, a file edited under live claims, dependencies, and a
// corrupt task record — on the file store (worktrees of one clone), the git
// store and Redis (clones of one remote).

// queueRig is one queue shared by the workers of its sites: the worktrees
// of one clone on the file store, clones of one bare remote on the git
// store and Redis.
type queueRig struct {
	t     *testing.T
	ctx   context.Context
	bin   string
	env   []string
	store string
	sites []string
	// files are the files each package locks, when the test checks that
	// no two claimers hold one at once.
	files map[string][]string
	// noneFree: a claim that exits 4 must say that no package is free
	// (not that a lock around the choice was busy).
	noneFree bool
}

// newQueueRig makes a repository whose work-packages.yaml is packages, with
// n sites on store ("file", "git" or "redis").
func newQueueRig(t *testing.T, store string, n int, packages string) *queueRig {
	t.Helper()
	return newQueueRigWith(t, store, n, packages, "")
}

// newQueueRigWith is newQueueRig with locksPolicy added to the policy's
// locks: section (flow style: "use_global_claim_lock: false").
func newQueueRigWith(t *testing.T, store string, n int, packages, locksPolicy string) *queueRig {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &queueRig{t: t, ctx: ctx, bin: lockgateBinary(t), env: gittest.Env(home), store: store}
	if store == "redis" {
		srv := redistest.Start(t, redistest.Options{})
		r.env = append(r.env, "LOCK_REDIS_URL="+srv.URL())
	}
	seed := filepath.Join(root, "seed")
	r.git(root, "init", "-q", "-b", "main", seed)
	if locksPolicy != "" {
		locksPolicy = ", " + locksPolicy
	}
	write(t, filepath.Join(seed, ".lockgate.yaml"), fmt.Sprintf("version: 1\nlocks: {store: %s%s}\nworkflow: {auto_commit: false}\n", store, locksPolicy))
	write(t, filepath.Join(seed, "work-packages.yaml"), packages)
	write(t, filepath.Join(seed, "src", "README"), "sources\n")
	r.git(seed, "add", "-A")
	r.git(seed, "commit", "-q", "-m", "base")
	if store == "file" {
		r.sites = append(r.sites, seed)
		for i := 1; i < n; i++ {
			wt := filepath.Join(root, fmt.Sprintf("worktree-%d", i))
			r.git(seed, "worktree", "add", "-q", "-b", fmt.Sprintf("w%d", i), wt)
			r.sites = append(r.sites, wt)
		}
		return r
	}
	origin := filepath.Join(root, "origin.git")
	r.git(root, "init", "-q", "--bare", "-b", "main", origin)
	r.git(seed, "remote", "add", "origin", origin)
	r.git(seed, "push", "-q", "origin", "main")
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("clone-%d", i))
		r.git(root, "clone", "-q", origin, dir)
		r.git(dir, "config", "gc.auto", "0")
		r.sites = append(r.sites, dir)
	}
	return r
}

func (r *queueRig) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.CommandContext(r.ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// who is a worker: its name and session.
type who struct{ worker, session string }

// cmd prepares lockgate at site as w.
func (r *queueRig) cmd(site int, w who, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(r.ctx, r.bin, args...)
	cmd.Dir = r.sites[site]
	cmd.Env = append(append([]string(nil), r.env...),
		"LOCKGATE_WORKER="+w.worker, "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SESSION="+w.session)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs lockgate at site as w: stdout, stderr, exit code (-1: it did
// not run).
func (r *queueRig) run(site int, w who, args ...string) (string, string, int) {
	cmd := r.cmd(site, w, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	default:
		return stdout.String(), stderr.String() + err.Error(), -1
	}
}

// must runs lockgate and fails the test unless it exits 0; it returns
// stdout.
func (r *queueRig) must(site int, w who, args ...string) string {
	r.t.Helper()
	out, errOut, code := r.run(site, w, args...)
	if code != 0 {
		r.t.Fatalf("lockgate %s as %s: exit %d\n%s%s", strings.Join(args, " "), w.worker, code, out, errOut)
	}
	return out
}

// queueDoc is `packages --json`.
type queueDoc struct {
	Path     string `json:"path"`
	Packages []struct {
		ID         string   `json:"id"`
		State      string   `json:"state"`
		Holder     string   `json:"holder"`
		Session    string   `json:"session"`
		Fence      uint64   `json:"fence"`
		Commit     string   `json:"commit"`
		WaitsFor   []string `json:"waits_for"`
		Unreadable string   `json:"unreadable"`
	} `json:"packages"`
	Counts  map[string]int `json:"counts"`
	Drained bool           `json:"drained"`
	Store   string         `json:"store"`
}

func (r *queueRig) packages(site int) queueDoc {
	r.t.Helper()
	out := r.must(site, who{"reader", "reader"}, "--json", "packages")
	var q queueDoc
	if err := json.Unmarshal([]byte(out), &q); err != nil {
		r.t.Fatalf("packages --json: %v\n%s", err, out)
	}
	return q
}

// queueEvent is an event of `log --json` about a package.
type queueEvent struct {
	ID        string    `json:"id"`
	Timestamp time.Time `json:"timestamp"`
	Worker    string    `json:"worker"`
	Session   string    `json:"session"`
	Action    string    `json:"action"`
	Key       string    `json:"key"`
	TaskID    string    `json:"task_id"`
	Fence     uint64    `json:"fence"`
	Details   string    `json:"details"`
}

// events are the package events every site's log holds, each once.
func (r *queueRig) events() []queueEvent {
	r.t.Helper()
	seen := map[string]bool{}
	var all []queueEvent
	for site := range r.sites {
		out := r.must(site, who{"reader", "reader"}, "--json", "log")
		var evs []queueEvent
		if err := json.Unmarshal([]byte(out), &evs); err != nil {
			r.t.Fatalf("log --json: %v\n%s", err, out)
		}
		for _, ev := range evs {
			if !seen[ev.ID] && strings.HasSuffix(ev.Action, "_package") {
				seen[ev.ID] = true
				all = append(all, ev)
			}
		}
	}
	return all
}

// rank orders a package's events of one fence: the claim, its takeover,
// how it ended, then a retry of the finished record.
func rank(action string) int {
	switch action {
	case "claimed_package":
		return 0
	case "took_over_package":
		return 1
	case "retried_package", "reset_package":
		return 3
	}
	return 2
}

// checkPackageEvents replays each package's events in fence order (a task
// record's fence only grows) and fails on any that the queue must not
// allow: a claim while another's claim stands (but for a takeover), an end
// by anyone but the claim's holder, a claim after done without a retry
// between. It returns how often each package was completed.
func checkPackageEvents(t *testing.T, evs []queueEvent) map[string]int {
	t.Helper()
	by := map[string][]queueEvent{}
	for _, ev := range evs {
		id := ev.TaskID
		if id == "" {
			id = strings.TrimPrefix(ev.Key, "task:")
		}
		by[id] = append(by[id], ev)
	}
	completed := map[string]int{}
	for id, evs := range by {
		slices.SortStableFunc(evs, func(a, b queueEvent) int {
			if a.Fence != b.Fence {
				if a.Fence < b.Fence {
					return -1
				}
				return 1
			}
			return rank(a.Action) - rank(b.Action)
		})
		state := "ready"
		var holder queueEvent
		for i, ev := range evs {
			bad := func(why string) {
				var lines []string
				for _, e := range evs {
					lines = append(lines, fmt.Sprintf("  fence %d %s by %s (session %s) at %s: %s", e.Fence, e.Action, e.Worker, e.Session, e.Timestamp.Format(time.RFC3339Nano), e.Details))
				}
				t.Errorf("%s: event %d (%s by %s, fence %d): %s; its events:\n%s", id, i, ev.Action, ev.Worker, ev.Fence, why, strings.Join(lines, "\n"))
			}
			switch ev.Action {
			case "claimed_package":
				takeover := i+1 < len(evs) && evs[i+1].Action == "took_over_package" && evs[i+1].Fence == ev.Fence
				switch {
				case state == "claimed" && !takeover:
					bad("claimed while " + holder.Worker + "'s claim stood")
				case state == "done" || state == "failed":
					bad("claimed after it was " + state + ", with no retry between")
				}
				if state == "claimed" && holder.Fence >= ev.Fence {
					bad("a claim with no greater fence than the one before")
				}
				state, holder = "claimed", ev
			case "took_over_package":
				if i == 0 || evs[i-1].Action != "claimed_package" || evs[i-1].Fence != ev.Fence {
					bad("a takeover without its claim")
				}
			case "completed_package", "failed_package", "released_package":
				if state != "claimed" || holder.Fence != ev.Fence || holder.Worker != ev.Worker || holder.Session != ev.Session {
					bad(fmt.Sprintf("ended, but not by the claim's holder (state %s, claim of %s at fence %d)", state, holder.Worker, holder.Fence))
				}
				switch ev.Action {
				case "completed_package":
					state = "done"
					completed[id]++
				case "failed_package":
					state = "failed"
				default:
					state = "ready"
				}
			case "retried_package", "reset_package":
				if state != "done" && state != "failed" {
					bad("retried while " + state)
				}
				state = "ready"
			default:
				bad("an unknown package event")
			}
		}
	}
	return completed
}

// randomQueue is m packages over a few shared files, with priorities and
// dependencies on earlier packages (deps: each package's).
func randomQueue(rng *rand.Rand, m int) (yaml string, deps map[string][]string) {
	var b strings.Builder
	deps = map[string][]string{}
	b.WriteString("packages:\n")
	for i := range m {
		fmt.Fprintf(&b, "  - id: WP-%02d\n    title: package %d\n    priority: %d\n", i, i, rng.IntN(3))
		if i > 0 && rng.IntN(3) == 0 {
			dep := fmt.Sprintf("WP-%02d", rng.IntN(i))
			fmt.Fprintf(&b, "    depends_on: [%s]\n", dep)
			deps[fmt.Sprintf("WP-%02d", i)] = []string{dep}
		}
		files := []string{fmt.Sprintf("src/f%d.go", rng.IntN(6))}
		if rng.IntN(2) == 0 {
			if f := fmt.Sprintf("src/f%d.go", rng.IntN(6)); f != files[0] {
				files = append(files, f)
			}
		}
		fmt.Fprintf(&b, "    locks:\n      files: [%s]\n      ttl: 10m\n", strings.Join(files, ", "))
	}
	return b.String(), deps
}

// claimDoc is `claim --json`.
type claimDoc struct {
	Package string `json:"package"`
	Status  string `json:"status"`
	Store   string `json:"store"`
}

// TestProcessQueueDrain: 8 claimer processes at once drain a queue of
// packages with shared files, priorities and dependencies, claiming,
// finishing and now and then giving a package back until `claim` says
// nothing is left. Every package ends done exactly once, no two ever hold
// one package at once, and the log tells the same story. In worktrees of
// one clone on the file store, and across clones on the git store and
// Redis.
func TestProcessQueueDrain(t *testing.T) {
	t.Parallel()
	lockgateBinary(t)
	for _, store := range []string{"file", "git", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			drainQueue(t, store)
		})
	}
}

func drainQueue(t *testing.T, store string) {
	const claimers = 8
	m := gittest.Rounds(t, 48)
	if store != "file" {
		m = gittest.Rounds(t, 32) // each step is a push or a round trip
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("%s store: %d claimers, %d packages, seed %d", store, claimers, m, seed)
	sites := claimers
	if store != "file" {
		sites = claimers / 2 // two claimers in each clone
	}
	file, deps := randomQueue(rand.New(rand.NewPCG(seed, 0)), m)
	r := newQueueRig(t, store, sites, file)
	h := r.drain(claimers, seed, 5)
	for site := range r.sites {
		q := r.packages(site)
		if !q.Drained || q.Counts["done"] != m || len(q.Packages) != m {
			t.Fatalf("site %d: the queue is not drained: %+v", site, q)
		}
		for _, p := range q.Packages {
			if p.State != "done" || !strings.HasPrefix(p.Holder, "claimer-") {
				t.Errorf("site %d: %s is %s by %q", site, p.ID, p.State, p.Holder)
			}
		}
	}
	h.checkDeps(t, h.check(r, m), deps)
}

// harness is what the claimers of a drain saw: how often each package was
// claimed, when each claim returned first, when each done began.
type harness struct {
	mu          sync.Mutex
	holding     map[string]string // package → the claimer the harness saw claim it
	fileHolder  map[string]string // file → the claimer holding a package that locks it (with queueRig.files)
	claims      map[string]int
	firstClaim  map[string]time.Time
	doneStarted map[string]time.Time
	errs        []error
}

func (h *harness) fail(err error) {
	h.mu.Lock()
	h.errs = append(h.errs, err)
	h.mu.Unlock()
}

// drain runs claimers claimer processes at once, spread over the rig's
// sites, each claiming the next package and finishing it (giving it back
// one time in giveBack, when giveBack > 0) until claim says the queue is
// drained.
func (r *queueRig) drain(claimers int, seed uint64, giveBack int) *harness {
	r.t.Helper()
	h := &harness{holding: map[string]string{}, fileHolder: map[string]string{}, claims: map[string]int{}, firstClaim: map[string]time.Time{}, doneStarted: map[string]time.Time{}}
	var wg sync.WaitGroup
	for c := range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(c+1)))
			w := who{fmt.Sprintf("claimer-%d", c), fmt.Sprintf("claimer-%d-s", c)}
			site := c % len(r.sites)
			for {
				if r.ctx.Err() != nil {
					h.fail(fmt.Errorf("%s: the queue did not drain in time", w.worker))
					return
				}
				out, errOut, code := r.run(site, w, "--json", "claim")
				if code == 4 && r.noneFree && !strings.Contains(errOut, "can be claimed now") {
					h.fail(fmt.Errorf("%s: claim: exit 4, not for want of a free package:\n%s%s", w.worker, out, errOut))
					return
				}
				if code == 4 {
					time.Sleep(time.Duration(20+rng.IntN(100)) * time.Millisecond)
					continue
				}
				if code != 0 {
					h.fail(fmt.Errorf("%s: claim: exit %d\n%s%s", w.worker, code, out, errOut))
					return
				}
				var doc claimDoc
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					h.fail(fmt.Errorf("%s: claim --json: %v: %s", w.worker, err, out))
					return
				}
				if doc.Status == "drained" {
					if doc.Package != "" {
						h.fail(fmt.Errorf("%s: drained, yet package %q", w.worker, doc.Package))
					}
					return
				}
				if doc.Status != "claimed" || doc.Package == "" {
					h.fail(fmt.Errorf("%s: claim --json: %s", w.worker, out))
					return
				}
				id := doc.Package
				verb := []string{"done", id}
				if giveBack > 0 && rng.IntN(giveBack) == 0 {
					verb = []string{"release-package", id}
				}
				h.mu.Lock()
				if other, ok := h.holding[id]; ok {
					h.errs = append(h.errs, fmt.Errorf("%s claimed %s while %s held it", w.worker, id, other))
				}
				h.claims[id]++
				if _, ok := h.firstClaim[id]; !ok {
					h.firstClaim[id] = time.Now()
				}
				// The claim returned after its grant, and the done starts
				// before its release: the harness's hold lies within the
				// store's.
				h.holding[id] = w.worker
				for _, f := range r.files[id] {
					if other, ok := h.fileHolder[f]; ok {
						h.errs = append(h.errs, fmt.Errorf("%s claimed %s, which locks %s, while %s held a package locking it", w.worker, id, f, other))
					}
					h.fileHolder[f] = w.worker
				}
				h.mu.Unlock()
				time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond) // the work
				h.mu.Lock()
				delete(h.holding, id)
				for _, f := range r.files[id] {
					if h.fileHolder[f] == w.worker {
						delete(h.fileHolder, f)
					}
				}
				if verb[0] == "done" {
					h.doneStarted[id] = time.Now()
				}
				h.mu.Unlock()
				if out, errOut, code := r.run(site, w, verb...); code != 0 {
					h.fail(fmt.Errorf("%s: %s: exit %d\n%s%s", w.worker, strings.Join(verb, " "), code, out, errOut))
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(h.errs) > 0 {
		r.t.Fatal(errors.Join(h.errs...))
	}
	return h
}

// checkDeps fails when a package was claimed before every package it
// depends on was done: by what the claimers saw (its first claim returned
// after each dependency's done began) and by the log (its claims come
// after each dependency's completion; one machine's clock dates both).
func (h *harness) checkDeps(t *testing.T, evs []queueEvent, deps map[string][]string) {
	t.Helper()
	completedAt := map[string]time.Time{}
	for _, ev := range evs {
		if ev.Action == "completed_package" {
			completedAt[ev.TaskID] = ev.Timestamp
		}
	}
	for id, ds := range deps {
		for _, d := range ds {
			if started, ok := h.doneStarted[d]; !ok || !started.Before(h.firstClaim[id]) {
				t.Errorf("%s was claimed at %v, before its dependency %s was done (done began %v)", id, h.firstClaim[id], d, started)
			}
		}
		for _, ev := range evs {
			if ev.TaskID != id || ev.Action != "claimed_package" {
				continue
			}
			for _, d := range ds {
				if at, ok := completedAt[d]; !ok || !at.Before(ev.Timestamp) {
					t.Errorf("the log has %s claimed by %s at %v, before its dependency %s was completed (%v)", id, ev.Worker, ev.Timestamp, d, at)
				}
			}
		}
	}
}

// check compares the log with what the claimers saw: packages WP-00 …
// each completed once, as often claimed as the claimers saw.
func (h *harness) check(r *queueRig, m int) []queueEvent {
	t := r.t
	t.Helper()
	evs := r.events()
	completed := checkPackageEvents(t, evs)
	claimed := map[string]int{}
	for _, ev := range evs {
		if ev.Action == "claimed_package" {
			claimed[ev.TaskID]++
		}
	}
	for i := range m {
		id := fmt.Sprintf("WP-%02d", i)
		if completed[id] != 1 {
			t.Errorf("%s: completed %d times in the log, want once", id, completed[id])
		}
		if claimed[id] != h.claims[id] {
			t.Errorf("%s: %d claimed_package events, the claimers saw %d claims", id, claimed[id], h.claims[id])
		}
	}
	return evs
}

// waitPackage polls `packages --json` at site until ok says the package
// is as wanted; a minute without fails the test.
func (r *queueRig) waitPackage(site int, id string, ok func(state, holder string, expired bool) bool) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out := r.must(site, who{"reader", "reader"}, "--json", "packages")
		var q struct {
			Packages []struct {
				ID      string `json:"id"`
				State   string `json:"state"`
				Holder  string `json:"holder"`
				Expired bool   `json:"expired"`
			} `json:"packages"`
		}
		if err := json.Unmarshal([]byte(out), &q); err != nil {
			r.t.Fatalf("packages --json: %v\n%s", err, out)
		}
		for _, p := range q.Packages {
			if p.ID == id && ok(p.State, p.Holder, p.Expired) {
				return
			}
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s never came to the state waited for:\n%s", id, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestKillQueueClaimer: a claimer takes a package with --ttl 2s and is
// killed with SIGKILL before it finishes. Once its claim has expired,
// another takes the package over (took_over_package names the dead
// session) and the dead session's late done is refused; or, in every
// other round, the late done and the other's claim race, and exactly one
// of them wins. Each package ends done exactly once. On the file store,
// the git store and Redis.
func TestKillQueueClaimer(t *testing.T) {
	t.Parallel()
	lockgateBinary(t)
	for _, store := range []string{"file", "git", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			killQueueClaimer(t, store)
		})
	}
}

func killQueueClaimer(t *testing.T, store string) {
	n := gittest.Rounds(t, 8)
	var b strings.Builder
	b.WriteString("packages:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: WP-%d\n    title: package %d\n    locks:\n      files: [src/f%d.go, src/shared.go]\n", i, i, i)
	}
	r := newQueueRig(t, store, 2, b.String())
	survivor := who{"survivor", "survivor-s"}
	for i := range n {
		id := fmt.Sprintf("WP-%d", i)
		victim := who{"victim", fmt.Sprintf("victim-s%d", i)}
		// The claimer: an agent that claims, then works until it is killed.
		agent := r.cmd(0, victim)
		agent.Path = "/bin/sh"
		agent.Args = []string{"sh", "-c", `"$0" claim "$1" --ttl 2s && exec sleep 600`, r.bin, id}
		agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := agent.Start(); err != nil {
			t.Fatal(err)
		}
		r.waitPackage(1, id, func(state, holder string, _ bool) bool { return state == "claimed" && holder == victim.worker })
		_ = syscall.Kill(-agent.Process.Pid, syscall.SIGKILL)
		_ = agent.Wait()
		// Its claim is ready to take over once it has expired.
		r.waitPackage(1, id, func(state, _ string, expired bool) bool { return state == "ready" && expired })

		if i%2 == 0 {
			r.must(1, survivor, "claim", id)
			out, errOut, code := r.run(0, victim, "done", id)
			if code == 0 || !strings.Contains(errOut, survivor.worker) {
				t.Fatalf("round %d: the dead session's done after the takeover: exit %d, want refused naming %s\n%s%s", i, code, survivor.worker, out, errOut)
			}
			r.must(1, survivor, "done", id)
			continue
		}
		// The dead session's late done against another's claim: one wins.
		var wg sync.WaitGroup
		var doneCode, claimCode int
		var doneOut, claimOut string
		wg.Add(2)
		go func() {
			defer wg.Done()
			o, e, c := r.run(0, victim, "done", id)
			doneCode, doneOut = c, o+e
		}()
		go func() {
			defer wg.Done()
			o, e, c := r.run(1, survivor, "claim", id)
			claimCode, claimOut = c, o+e
		}()
		wg.Wait()
		switch {
		case doneCode == 0 && claimCode == 4 && strings.Contains(claimOut, "the package is done"):
			t.Logf("round %d: the late done won", i)
		case claimCode == 0 && doneCode != 0 && doneCode != -1:
			t.Logf("round %d: the takeover won", i)
			r.must(1, survivor, "done", id)
		default:
			t.Fatalf("round %d: late done exit %d, claim exit %d: want exactly one to win\ndone: %s\nclaim: %s", i, doneCode, claimCode, doneOut, claimOut)
		}
	}

	q := r.packages(1)
	if !q.Drained || q.Counts["done"] != n {
		t.Fatalf("the queue is not drained: %+v", q)
	}
	evs := r.events()
	completed := checkPackageEvents(t, evs)
	for i := range n {
		id := fmt.Sprintf("WP-%d", i)
		if completed[id] != 1 {
			t.Errorf("%s: completed %d times, want once", id, completed[id])
		}
		if i%2 != 0 {
			continue
		}
		found := false
		for _, ev := range evs {
			if ev.TaskID == id && ev.Action == "took_over_package" {
				found = ev.Worker == survivor.worker && strings.Contains(ev.Details, fmt.Sprintf("victim (session victim-s%d)", i))
			}
		}
		if !found {
			t.Errorf("%s: no took_over_package by %s naming the dead session", id, survivor.worker)
		}
	}
}

// TestRaceQueueDependencies: 4 claimers at once over a chain of packages,
// each depending on the one before and ranked above it, beside packages
// of their own: no package of the chain is claimed before the one it
// depends on is done.
func TestRaceQueueDependencies(t *testing.T) {
	t.Parallel()
	chain := gittest.Rounds(t, 16)
	var b strings.Builder
	b.WriteString("packages:\n")
	deps := map[string][]string{}
	for i := range 2 * chain {
		id := fmt.Sprintf("WP-%02d", i)
		fmt.Fprintf(&b, "  - id: %s\n    locks:\n      files: [src/f%d.go]\n", id, i%3)
		if i < chain {
			// The chain ranks above the rest, and each link above the one
			// before it: every claimer tries it first.
			fmt.Fprintf(&b, "    priority: %d\n", 10+i)
			if i > 0 {
				deps[id] = []string{fmt.Sprintf("WP-%02d", i-1)}
				fmt.Fprintf(&b, "    depends_on: [%s]\n", deps[id][0])
			}
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("a chain of %d beside %d more, seed %d", chain, chain, seed)
	r := newQueueRig(t, "file", 4, b.String())
	h := r.drain(4, seed, 0)
	h.checkDeps(t, h.check(r, 2*chain), deps)
}

// writePackages replaces site's work-packages.yaml in one rename: a
// lockgate reading it meanwhile sees the old file or the new one.
func (r *queueRig) writePackages(site int, content string) {
	r.t.Helper()
	tmp := filepath.Join(r.sites[site], ".work-packages.yaml.tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(r.sites[site], "work-packages.yaml")); err != nil {
		r.t.Fatal(err)
	}
}

// queueYAML writes packages as work-packages.yaml: id, priority.
func queueYAML(ids []string, prio map[string]int) string {
	var b strings.Builder
	b.WriteString("packages:\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "  - id: %s\n    priority: %d\n    locks:\n      files: [src/%s.go]\n", id, prio[id], strings.ToLower(id))
	}
	return b.String()
}

// TestConcurrentQueueEdits: work-packages.yaml edited while claims are
// live. A package added starts ready; one removed while claimed leaves
// the listing, its events stay, and its done by id is refused, saying
// what became of its claim; a new order and new priorities are followed;
// a done package stays done. Then claimers drain the queue while the
// file keeps changing under them: every package of the final file is
// done exactly once.
func TestConcurrentQueueEdits(t *testing.T) {
	t.Parallel()
	ids := []string{"WP-00", "WP-01", "WP-02", "WP-03"}
	prio := map[string]int{}
	r := newQueueRig(t, "file", 1, queueYAML(ids, prio))
	alice, bob, carol := who{"alice", "alice"}, who{"bob", "bob"}, who{"carol", "carol"}
	r.must(0, alice, "claim", "WP-00")
	r.must(0, bob, "claim", "WP-01")
	r.must(0, carol, "claim", "WP-02")
	r.must(0, carol, "done", "WP-02")

	// WP-01 removed while bob holds it, WP-04 added, WP-03 first by
	// priority, the rest reordered.
	ids = []string{"WP-04", "WP-02", "WP-00", "WP-03"}
	prio["WP-03"] = 9
	r.writePackages(0, queueYAML(ids, prio))
	q := r.packages(0)
	var got []string
	state := map[string]string{}
	for _, p := range q.Packages {
		got = append(got, p.ID)
		state[p.ID] = p.State + " " + p.Holder
	}
	if want := []string{"WP-03", "WP-04", "WP-02", "WP-00"}; !slices.Equal(got, want) {
		t.Fatalf("packages in order %v, want %v", got, want)
	}
	for id, want := range map[string]string{"WP-03": "ready ", "WP-04": "ready ", "WP-02": "done carol", "WP-00": "claimed alice"} {
		if state[id] != want {
			t.Errorf("%s: %q, want %q", id, state[id], want)
		}
	}
	out, errOut, code := r.run(0, bob, "done", "WP-01")
	if code != 2 || !strings.Contains(errOut, `no work package "WP-01"`) || !strings.Contains(errOut, "claimed by bob") ||
		!strings.Contains(errOut, "lockgate lock release task:WP-01") {
		t.Fatalf("done of a package removed while claimed: exit %d, want 2 saying what became of its claim\n%s%s", code, out, errOut)
	}
	if code := func() int { _, _, c := r.run(0, carol, "claim", "WP-02"); return c }(); code != 4 {
		t.Fatalf("claim of the done WP-02 after the edit: exit %d, want 4", code)
	}
	r.must(0, bob, "lock", "release", "task:WP-01", "src/wp-01.go")
	claimedRemoved := false
	for _, ev := range r.events() {
		claimedRemoved = claimedRemoved || ev.TaskID == "WP-01" && ev.Action == "claimed_package"
	}
	if !claimedRemoved {
		t.Error("the claim of the removed WP-01 left the log")
	}

	// Claimers drain the queue while the file changes under them; alice's
	// live claim keeps it from draining until the edits are over.
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	edits := gittest.Rounds(t, 24)
	var wg sync.WaitGroup
	wg.Add(1)
	var h *harness
	go func() {
		defer wg.Done()
		h = r.drain(4, seed, 0)
	}()
	for i := range edits {
		ids = append(ids, fmt.Sprintf("WP-%02d", 10+i))
		rng.Shuffle(len(ids), func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
		for _, id := range ids {
			prio[id] = rng.IntN(4)
		}
		r.writePackages(0, queueYAML(ids, prio))
		time.Sleep(time.Duration(50+rng.IntN(150)) * time.Millisecond)
	}
	r.must(0, alice, "done", "WP-00")
	wg.Wait()

	q = r.packages(0)
	if !q.Drained || len(q.Packages) != len(ids) {
		t.Fatalf("the queue is not drained: %+v", q)
	}
	completed := checkPackageEvents(t, r.events())
	for _, id := range ids {
		if completed[id] != 1 {
			t.Errorf("%s: completed %d times, want once", id, completed[id])
		}
	}
	if completed["WP-01"] != 0 {
		t.Errorf("the removed WP-01 was completed")
	}
	if h.claims["WP-02"] != 0 || h.claims["WP-00"] != 0 {
		t.Errorf("a package done or claimed before the edits was handed out again: %v", h.claims)
	}
}
