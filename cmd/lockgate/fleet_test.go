package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// TestFleetVerifySigned runs the fleet of TestFleetVerify in signed mode
// (workflow.signed: required) on the git store, as a team runs it: each
// worker signs with an SSH key of its own, listed in
// .lockgate/allowed_signers on main before the fleet starts, and the
// remote runs lockgate's pre-receive, so the server judges every push —
// the workers' commits, their events and the lock table's states — bound
// to the worker pushing it. Once the fleet is done, one worker pushes a
// commit whose trailers name another worker, signed with its own key, and
// the server refuses it. A fresh clone then verifies every pushed commit,
// and every commit of main since the base, of the workflow branch and the
// lock table's tip carries a good signature by the allowed signers.
func TestFleetVerifySigned(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("ssh-keygen is not installed: signed mode signs and checks with it (apt-get install openssh-client)")
	}
	oneFleetAtATime(t)
	lockgateBinary(t)
	runFleet(t, "git", nil, fleetOptions{workers: 4, rounds: 12, signed: true})
}

// TestFleetVerify runs a team as it works: agents in clones of their own
// and in worktrees of one shared clone take locks on a few shared files
// (waiting for each other), commit through the installed hooks, push to
// main while still holding the locks, and release; one of them is killed
// with SIGKILL while holding a lock, which the others take over once it
// has expired. Then a fresh clone of the remote verifies every pushed
// commit against the lock log: an honest fleet must be proven, with no
// violation and nothing undecided. It runs on the git store and on Redis.
func TestFleetVerify(t *testing.T) {
	t.Parallel()
	oneFleetAtATime(t)
	lockgateBinary(t)
	t.Run("git", func(t *testing.T) {
		runFleet(t, "git", nil, fleetOptions{})
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Options{})
		runFleet(t, "redis", []string{"LOCK_REDIS_URL=" + srv.URL()}, fleetOptions{})
	})
}

// fleetOptions vary a fleet run; the zero value is TestFleetVerify's.
type fleetOptions struct {
	workers int // fleetWorkers when zero; the last is the one killed
	// rounds is the full count of tasks per worker, scaled by
	// gittest.Rounds; 16 when zero.
	rounds int
	// signed runs the fleet in signed mode (workflow.signed: required):
	// each worker signs with an SSH key of its own, listed in
	// .lockgate/allowed_signers on the base, and the remote runs
	// lockgate's pre-receive, told the pusher by each push's environment.
	signed bool
}

const (
	fleetWorkers   = 6 // workers 0 and 1 in clones of their own, the rest in worktrees of one clone
	fleetFiles     = 12
	fleetHotFiles  = 5 // tasks pick from the first few files, so that they collide
	fleetVictim    = fleetWorkers - 1
	fleetWait      = "8m"  // a waiter may be passed over several times on a busy machine, each task taking a minute there
	fleetTTL       = "30m" // longer than any task: a live worker's lock never expires
	fleetVictimTTL = "5s"  // the killed worker's lock comes back soon
	// fleetSignedVictimTTL is the killed worker's TTL in signed mode, where
	// a grant takes longer to reach the remote (every push of the lock
	// table and of the event is checked by the server's hook): long
	// enough that lock hold starts its command before the lock lapses.
	fleetSignedVictimTTL = "20s"
)

// fleet is one run: the remote, the base commit and what every worker did.
type fleet struct {
	t         *testing.T
	ctx       context.Context
	cancel    context.CancelFunc
	bin       string
	root      string
	store     string
	origin    string
	env       []string // git's hermetic environment and the store's, without fixed dates
	base      string
	victim    int    // the worker killed while it holds a lock (fleetVictim unless the run has fewer workers)
	victimTTL string // its lock's TTL
	signed    bool   // signed mode: every worker signs, the remote checks every push
	// server: the remote runs lockgate's pre-receive, told the pusher by
	// each push's environment (signed mode's too).
	server bool
	// perBranch (locks.per_branch): each worker takes its locks on the
	// branch it pushes to, and only holds of one branch exclude each
	// other.
	perBranch bool
	// releaseOnMerge (locks.release_on_merge): another clone's pull may
	// release a lock once its holder's commit is on origin.
	releaseOnMerge bool

	mu      sync.Mutex
	holds   []fleetHold // every hold, in the order its acquisition returned
	errs    []error
	workers []*fleetWorker
}

// fleetHold is one task's locks as the harness saw them: granted no later
// than acquired (when the command returned), held at least until released
// (when the release command started).
type fleetHold struct {
	worker   string
	task     int
	files    []string
	acquired time.Time
	released time.Time
	commit   string // the commit as pushed; empty for the killed worker's hold
	ct       int64  // its committer time (%ct)
	killed   bool
	branch   string // the branch it was pushed to: "" is main
	// merged are the files whose lock another clone released on merge
	// before its holder did (releaseOnMerge).
	merged []string
}

// onBranch is the branch the hold's commit was pushed to.
func (h fleetHold) onBranch() string { return cmp.Or(h.branch, "main") }

type fleetWorker struct {
	f       *fleet
	n       int
	id      string
	session string
	dir     string
	rng     *rand.Rand

	logMu sync.Mutex
	log   bytes.Buffer

	key string // signed mode: the worker's private SSH key

	branch    string     // the branch it works on and pushes to: "" is main
	pushStart time.Time  // when its last push began
	meet      *fleetMeet // a task at which it waits, holding its lock, for a worker of another branch to hold the same file
}

// target is the branch the worker works on and pushes to.
func (w *fleetWorker) target() string { return cmp.Or(w.branch, "main") }

// lockArgs are args (keys, or the options of lock acquire and release)
// with the worker's branch, when the fleet locks per branch.
func (w *fleetWorker) lockArgs(args ...string) []string {
	if w.f.perBranch {
		args = append(args, "--branch", w.target())
	}
	return args
}

// lockKey is the key of the worker's lock on file: its branch's, when the
// fleet locks per branch.
func (w *fleetWorker) lockKey(file string) string {
	if w.f.perBranch {
		return "branch:" + w.target() + ":" + file
	}
	return file
}

// newFleet is a fleet of rounds rounds on store, in a directory of its
// own with a home of its own. A hang fails the run rather than stalling
// it: every process dies with the fleet's context, which the caller
// cancels when done.
func newFleet(t *testing.T, store string, storeEnv []string, rounds int) *fleet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute+time.Duration(rounds)*time.Minute)
	f := &fleet{t: t, ctx: ctx, cancel: cancel, bin: lockgateBinary(t), root: t.TempDir(), store: store,
		victim: fleetVictim, victimTTL: fleetVictimTTL}
	home := filepath.Join(f.root, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		cancel()
		t.Fatal(err)
	}
	// Commits get the real time: verify judges each at its committer time.
	for _, kv := range gittest.Env(home) {
		if !strings.HasPrefix(kv, "GIT_AUTHOR_DATE=") && !strings.HasPrefix(kv, "GIT_COMMITTER_DATE=") {
			f.env = append(f.env, kv)
		}
	}
	f.env = append(f.env, storeEnv...)
	return f
}

// publish commits the seed's tree as the base of main and pushes it to
// the fleet's origin.
func (f *fleet) publish(seed string) {
	f.git(seed, "add", "-A")
	f.git(seed, "commit", "-q", "-m", "base")
	f.git(seed, "remote", "add", "origin", f.origin)
	f.git(seed, "push", "-q", "origin", "main")
	f.base = f.git(seed, "rev-parse", "HEAD")
}

// clone is a clone of the fleet's origin named name, lockgate's hooks
// installed.
func (f *fleet) clone(name string) string {
	dir := filepath.Join(f.root, name)
	f.git(f.root, "clone", "-q", f.origin, dir)
	// No background gc or maintenance racing the workers' own git runs.
	f.git(dir, "config", "gc.auto", "0")
	f.git(dir, "config", "maintenance.auto", "false")
	if out, err := f.lockgate(dir, "installer", "install"); err != nil {
		f.t.Fatalf("lockgate install in %s: %v\n%s", name, err, out)
	}
	return dir
}

func runFleet(t *testing.T, store string, storeEnv []string, opts fleetOptions) {
	tasks := gittest.Rounds(t, cmp.Or(opts.rounds, 16))
	f := newFleet(t, store, storeEnv, tasks)
	defer f.cancel()
	f.setup(store, opts)
	f.run(tasks)
	if f.signed {
		f.rogue()
	}
	dir := f.verify()
	if f.signed {
		f.checkSigned(dir)
	}
}

// run runs every worker's tasks at once and checks what the harness saw:
// a failed worker or an unfaithful hold fails the test.
func (f *fleet) run(tasks int) {
	t := f.t
	seed := uint64(time.Now().UnixNano())
	mode := ""
	if f.signed {
		mode = ", signed"
	}
	if f.perBranch {
		mode += ", locks per branch"
	}
	t.Logf("%s store%s: %d workers × %d tasks, seed %d", f.store, mode, len(f.workers), tasks, seed)

	var wg sync.WaitGroup
	for _, w := range f.workers {
		w.rng = rand.New(rand.NewPCG(seed, uint64(w.n)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.work(tasks); err != nil {
				f.fail(fmt.Errorf("%s: %w", w.id, err))
			}
		}()
	}
	wg.Wait()
	if f.ctx.Err() != nil && len(f.errs) == 0 {
		f.fail(fmt.Errorf("the fleet did not finish in time: %w", f.ctx.Err()))
	}
	if len(f.errs) > 0 {
		f.dumpLogs()
		t.Fatalf("the fleet failed: %v", errors.Join(f.errs...))
	}
	// Worktrees of one clone share its config file: their first commands,
	// run at once, all record the clone's store without losing a write.
	for _, w := range f.workers {
		if strings.Contains(w.log.String(), "could not lock config file") {
			f.dumpLogs()
			t.Fatalf("%s: a write of the clone's config was lost", w.id)
		}
	}
	f.checkHarness()
}

// setup makes the remote with the base commit, the clones and worktrees,
// and installs the hooks. Signed, the remote runs lockgate's pre-receive,
// the base lists every worker's key, and every clone and worktree signs
// with its worker's key.
func (f *fleet) setup(store string, opts fleetOptions) {
	t := f.t
	workers := cmp.Or(opts.workers, fleetWorkers)
	f.victim = workers - 1
	f.signed = opts.signed
	if f.signed {
		f.victimTTL = fleetSignedVictimTTL
		f.server = true
	}
	f.origin = filepath.Join(f.root, "origin.git")
	f.git(f.root, "init", "-q", "--bare", "-b", "main", f.origin)
	seed := filepath.Join(f.root, "seed")
	f.git(f.root, "init", "-q", "-b", "main", seed)
	cfg := fmt.Sprintf(`version: 1
locks:
  store: %s
hooks:
  require_lock: true
  trailers: true
workflow:
  auto_push: true
`, store)
	if f.signed {
		cfg += "  signed: required\n"
	}
	write(t, filepath.Join(seed, ".lockgate.yaml"), cfg)
	for i := range fleetFiles {
		write(t, filepath.Join(seed, fleetFile(i)), fmt.Sprintf("package src\n\n// file %d\n", i))
	}
	for n := range workers {
		f.workers = append(f.workers, &fleetWorker{f: f, n: n, id: fmt.Sprintf("agent-%d@fleet", n)})
	}
	if f.signed {
		f.signers(seed)
		if out, err := f.lockgate(f.origin, "installer", "install", "--hook", "pre-receive"); err != nil {
			t.Fatalf("lockgate install --hook pre-receive in the remote: %v\n%s", err, out)
		}
	}
	f.publish(seed)
	clone := f.clone
	shared := clone("shared")
	if f.signed {
		// Each worktree signs with its own worker's key: the clone's
		// config is shared, the worktrees' own are not.
		f.git(shared, "config", "extensions.worktreeConfig", "true")
	}
	for _, w := range f.workers {
		w.session = w.id
		if w.n < 2 {
			w.dir = clone(fmt.Sprintf("clone-%d", w.n))
		} else {
			w.dir = filepath.Join(f.root, fmt.Sprintf("worktree-%d", w.n))
			f.git(shared, "worktree", "add", "-q", "-b", fmt.Sprintf("agent-%d", w.n), w.dir, "origin/main")
		}
		if f.signed {
			scope := "--local"
			if w.n >= 2 {
				scope = "--worktree"
			}
			f.git(w.dir, "config", scope, "gpg.format", "ssh")
			f.git(w.dir, "config", scope, "user.signingkey", w.key)
			f.git(w.dir, "config", scope, "commit.gpgsign", "true")
		}
	}
}

// signers makes each worker's SSH key and lists them in the seed's
// .lockgate/allowed_signers, the worker id as the principal.
func (f *fleet) signers(seed string) {
	keys := filepath.Join(f.root, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		f.t.Fatal(err)
	}
	var list strings.Builder
	for _, w := range f.workers {
		w.key = filepath.Join(keys, fmt.Sprintf("agent-%d", w.n))
		cmd := exec.CommandContext(f.ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", w.id, "-f", w.key)
		if out, err := cmd.CombinedOutput(); err != nil {
			f.t.Fatalf("ssh-keygen for %s: %v\n%s", w.id, err, out)
		}
		pub, err := os.ReadFile(w.key + ".pub")
		if err != nil {
			f.t.Fatal(err)
		}
		fields := strings.Fields(string(pub))
		fmt.Fprintf(&list, "%s %s %s\n", w.id, fields[0], fields[1])
	}
	write(f.t, filepath.Join(seed, ".lockgate", "allowed_signers"), list.String())
}

// fleetSlot lets one fleet run at a time: each keeps both cores busy, and
// two at once (beside the other tests) make every worker's git and lock
// commands wait on the CPU, not on each other.
var fleetSlot = make(chan struct{}, 1)

func oneFleetAtATime(t *testing.T) {
	t.Helper()
	fleetSlot <- struct{}{}
	t.Cleanup(func() { <-fleetSlot })
}

func fleetFile(i int) string { return fmt.Sprintf("src/f%02d.go", i) }

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// git runs git for the harness; a failure fails the test.
func (f *fleet) git(dir string, args ...string) string {
	f.t.Helper()
	cmd := exec.CommandContext(f.ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, f.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// lockgate runs lockgate for the harness as worker.
func (f *fleet) lockgate(dir, worker string, args ...string) (string, error) {
	cmd := exec.CommandContext(f.ctx, f.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), f.env...), "LOCKGATE_WORKER="+worker, "LOCKGATE_WORKER_TYPE=agent")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (f *fleet) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
	f.cancel() // the others stop too, rather than wait for locks that will not come
}

func (f *fleet) record(h fleetHold) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds = append(f.holds, h)
}

func (f *fleet) dumpLogs() {
	for _, w := range f.workers {
		w.logMu.Lock()
		f.t.Logf("log of %s (%s):\n%s", w.id, w.dir, w.log.String())
		w.logMu.Unlock()
	}
}

// logf adds a line to the worker's log, with the time it is about.
func (w *fleetWorker) logf(at time.Time, format string, args ...any) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	fmt.Fprintf(&w.log, "%s %s\n", at.UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// run runs one command of the worker's, logs it and its output, and
// returns the output and the exit code (-1 when it could not run).
func (w *fleetWorker) run(name string, args ...string) (string, int) {
	cmd := exec.CommandContext(w.f.ctx, name, args...)
	cmd.Dir = w.dir
	cmd.Env = w.environ()
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		code = -1
		out = append(out, err.Error()...)
	}
	shown := name
	if name == w.f.bin {
		shown = "lockgate"
	}
	w.logf(start, "%s %s → exit %d in %v\n%s", shown, strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond), indent(string(out)))
	return string(out), code
}

// environ is the environment of the worker's commands. Signed, it names
// the worker as the pusher too: over a file remote the server's
// pre-receive runs in the pushing process's environment, where a forge
// would set GL_USERNAME to the user it authenticated.
func (w *fleetWorker) environ() []string {
	env := append(append([]string(nil), w.f.env...),
		"LOCKGATE_WORKER="+w.id, "LOCKGATE_WORKER_TYPE=agent", "LOCKGATE_SESSION="+w.session)
	switch {
	case w.f.signed:
		env = append(env, "GL_USERNAME="+w.id)
	case w.f.server:
		env = append(env, "LOCKGATE_PUSHER="+w.id)
	}
	return env
}

// must runs one of the worker's commands for the harness: a failure fails
// the test, with every worker's log.
func (w *fleetWorker) must(name string, args ...string) string {
	w.f.t.Helper()
	out, code := w.run(name, args...)
	if code != 0 {
		w.f.dumpLogs()
		if name == w.f.bin {
			name = "lockgate"
		}
		w.f.t.Fatalf("%s: %s %s: exit %d: %s", w.id, name, strings.Join(args, " "), code, out)
	}
	return out
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// work runs the worker's tasks. The last worker is first killed while it
// holds a lock, and comes back as a new session (an agent restarted).
func (w *fleetWorker) work(tasks int) error {
	if w.n == w.f.victim {
		if err := w.killedHold(); err != nil {
			return err
		}
		w.session = w.id + "-restarted"
	}
	for i := range tasks {
		if w.f.ctx.Err() != nil {
			return w.f.ctx.Err()
		}
		files := w.pick(i)
		if err := w.task(i, files); err != nil {
			return fmt.Errorf("task %d (%s): %w", i, strings.Join(files, " "), err)
		}
	}
	return nil
}

// pick chooses one or two of the hot files. The restarted worker's first
// task wants the file its killed session held, so that some worker takes
// it over; a task at which the worker meets another wants the meeting's
// file.
func (w *fleetWorker) pick(i int) []string {
	if w.n == w.f.victim && i == 0 {
		return []string{fleetFile(0)}
	}
	if w.meet != nil && i == w.meet.task {
		return []string{w.meet.file}
	}
	n := 1 + w.rng.IntN(2)
	var files []string
	for _, j := range w.rng.Perm(fleetHotFiles)[:n] {
		files = append(files, fleetFile(j))
	}
	slices.Sort(files)
	return files
}

// task is one unit of work: lock, bring the files up to date, edit,
// commit through the hooks, push while holding the locks, release.
func (w *fleetWorker) task(i int, files []string) error {
	args := append([]string{"lock", "acquire"}, files...)
	args = append(args, "--wait", fleetWait, "--ttl", fleetTTL, "--reason", fmt.Sprintf("task %d", i))
	if out, code := w.run(w.f.bin, w.lockArgs(args...)...); code != 0 {
		return fmt.Errorf("lock acquire: exit %d: %s", code, out)
	}
	h := fleetHold{worker: w.id, task: i, files: files, acquired: time.Now(), branch: w.branch}
	releaseArgs := w.lockArgs(append([]string{"lock", "release"}, files...)...)
	release := func() {
		h.released = time.Now()
		w.run(w.f.bin, releaseArgs...)
	}
	if w.meet != nil && i == w.meet.task {
		if err := w.meet.wait(w); err != nil {
			release()
			return err
		}
	}
	// The previous holder pushed before it released: this brings its change.
	if err := w.pull(); err != nil {
		release()
		return err
	}
	for _, file := range files {
		p := filepath.Join(w.dir, file)
		b, err := os.ReadFile(p)
		if err != nil {
			release()
			return err
		}
		b = fmt.Appendf(b, "// %s task %d\n", w.id, i)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			release()
			return err
		}
	}
	if out, code := w.run("git", append([]string{"add", "--"}, files...)...); code != 0 {
		release()
		return fmt.Errorf("git add: exit %d: %s", code, out)
	}
	msg := fmt.Sprintf("%s task %d: %s", w.id, i, strings.Join(files, " "))
	if out, code := w.run("git", "commit", "-q", "-m", msg); code != 0 {
		release()
		return fmt.Errorf("git commit (hooks refused an honest commit?): exit %d: %s", code, out)
	}
	if err := w.push(); err != nil {
		release()
		return err
	}
	out, code := w.run("git", "log", "-1", "--format=%H %ct")
	if code != 0 {
		release()
		return fmt.Errorf("git log: %s", out)
	}
	sha, ct, _ := strings.Cut(strings.TrimSpace(out), " ")
	h.commit = sha
	h.ct, _ = strconv.ParseInt(ct, 10, 64)
	h.released = time.Now()
	out, code = w.run(w.f.bin, releaseArgs...)
	if code != 0 {
		return fmt.Errorf("lock release: exit %d: %s", code, out)
	}
	if w.f.releaseOnMerge {
		// Another clone's pull (the post-merge hook) may have released a
		// lock once the commit was on origin: it was held at least until
		// the push that brought it there began.
		for _, file := range files {
			if strings.Contains(out, w.lockKey(file)+" was not locked") {
				h.merged = append(h.merged, file)
			}
		}
		if len(h.merged) > 0 {
			h.released = w.pushStart
		}
	}
	w.f.record(h)
	return nil
}

// pull rebases the worker's branch onto origin's (main, or the branch the
// worker works on). Worktrees of one
// clone fetch into the same remote-tracking refs, and git refuses a fetch
// while another holds the ref's lock: that is retried.
func (w *fleetWorker) pull() error {
	var out string
	for range 10 {
		var code int
		out, code = w.run("git", "pull", "-q", "--rebase", "origin", w.target())
		if code == 0 {
			return nil
		}
		if _, inRebase := w.run("git", "rev-parse", "-q", "--verify", "REBASE_HEAD"); inRebase == 0 {
			return fmt.Errorf("git pull --rebase stopped in a rebase: %s", out)
		}
		time.Sleep(time.Duration(50+w.rng.IntN(200)) * time.Millisecond)
	}
	return fmt.Errorf("git pull --rebase kept failing: %s", out)
}

// push pushes to origin's main (or the worker's branch), rebasing onto
// what others pushed first;
// the pre-push hook judges it each time. A refusal other than the remote
// having moved is an error.
func (w *fleetWorker) push() error {
	for range 30 {
		w.pushStart = time.Now()
		out, code := w.run("git", "push", "-q", "origin", "HEAD:"+w.target())
		if code == 0 {
			return nil
		}
		retry := false
		for _, s := range []string{"[rejected]", "fetch first", "non-fast-forward", "cannot lock ref", "failed to update ref", "[remote rejected] main (failed to update ref)"} {
			if strings.Contains(out, s) {
				retry = true
			}
		}
		if !retry {
			return fmt.Errorf("git push refused: exit %d: %s", code, out)
		}
		if err := w.pull(); err != nil {
			return err
		}
	}
	return errors.New("git push: origin kept moving")
}

// killedHold: the worker holds src/f00.go with `lock hold` and a short
// TTL, and is killed with SIGKILL (its command too) while it does. The
// lock stays until it expires; then a waiting worker takes it over.
func (w *fleetWorker) killedHold() error {
	// On a busy machine the grant's event can take longer to push than
	// the short lock lives: lock hold then does not start its command
	// (the lock lapsed before it could), and the worker tries again.
	for try := 1; ; try++ {
		err := w.killedHoldOnce()
		if err == nil || try == 5 || !strings.Contains(err.Error(), "lapsed before the command could start") {
			return err
		}
		w.logf(time.Now(), "lock hold: the lock lapsed before sleep started; again (try %d)", try+1)
	}
}

func (w *fleetWorker) killedHoldOnce() error {
	file := fleetFile(0)
	cmd := exec.CommandContext(w.f.ctx, w.f.bin, "lock", "hold", w.lockKey(file), "--ttl", w.f.victimTTL, "--wait", fleetWait, "--", "sleep", "60")
	cmd.Dir = w.dir
	cmd.Env = w.environ()
	// Its own process group, so that the kill takes `sleep` too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	w.logf(time.Now(), "lockgate lock hold %s --ttl %s -- sleep 60: started, pid %d", w.lockKey(file), w.f.victimTTL, cmd.Process.Pid)
	var seen bytes.Buffer
	holding := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "holding ") {
			holding = true
			break
		}
	}
	acquired := time.Now()
	if !holding {
		_ = cmd.Wait()
		return fmt.Errorf("lock hold never held %s: %s", file, seen.String())
	}
	// Killed while it holds the lock, the way an agent's machine dies.
	killErr := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	killed := time.Now()
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	_ = cmd.Wait()
	w.logf(killed, "lock hold %s: held (seen at %s), then killed with SIGKILL (%v)\n%s", file, acquired.UTC().Format("15:04:05.000"), killErr, indent(seen.String()))
	if killErr != nil {
		return fmt.Errorf("kill lock hold: %w", killErr)
	}
	w.f.record(fleetHold{worker: w.id, task: -1, files: []string{file}, acquired: acquired, released: killed, killed: true, branch: w.branch})
	return nil
}

// checkHarness makes sure the fleet was honest before verify is asked to
// prove it: no two holds of one file overlapped (as the harness saw them;
// per branch, no two of one branch), and every commit was made and pushed
// while its author held its files.
func (f *fleet) checkHarness() {
	t := f.t
	byFile := map[string][]fleetHold{}
	for _, h := range f.holds {
		for _, file := range h.files {
			if f.perBranch {
				file = h.onBranch() + ":" + file
			}
			byFile[file] = append(byFile[file], h)
		}
		if h.killed {
			continue
		}
		if h.ct < h.acquired.Unix() || h.ct > h.released.Unix() {
			t.Errorf("harness: %s task %d committed %s at %d, outside its hold %s–%s",
				h.worker, h.task, h.commit, h.ct, h.acquired.Format(time.RFC3339Nano), h.released.Format(time.RFC3339Nano))
		}
	}
	for file, hs := range byFile {
		slices.SortFunc(hs, func(a, b fleetHold) int { return a.acquired.Compare(b.acquired) })
		for i := 1; i < len(hs); i++ {
			if hs[i].acquired.Before(hs[i-1].released) {
				t.Errorf("%s was held twice at once: by %s from %s while %s held it until %s",
					file, hs[i].worker, hs[i].acquired.Format(time.RFC3339Nano), hs[i-1].worker, hs[i-1].released.Format(time.RFC3339Nano))
			}
		}
	}
	if t.Failed() {
		f.dumpLogs()
		t.FailNow()
	}
}

// fleetEvent is the part of a lock event on the workflow branch the test
// reads.
type fleetEvent struct {
	Timestamp time.Time  `json:"timestamp"`
	Worker    string     `json:"worker"`
	Session   string     `json:"session"`
	Action    string     `json:"action"`
	Key       string     `json:"key"`
	Details   string     `json:"details"`
	Fence     uint64     `json:"fence"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// checkTakeover reads the events of src/f00.go (the killed worker's key:
// on its branch, per branch) on the workflow branch of the verifier's
// clone dir: the killed worker's grant was never
// released, and the key's next grant (the next fence) began after it
// expired. On the git store that grant is a lock_takeover naming the
// killed worker. On Redis it may be a plain lock_acquire: a waiter for
// src/f00.go and a key still held takes the expired record over, finds
// the other key held and gives src/f00.go back (the store has no
// transactions: the all-or-nothing rollback releases it), which removes
// the expired record with it; the next acquisition then finds the key
// free.
func (f *fleet) checkTakeover(dir string) {
	t := f.t
	file := fleetFile(0)
	for _, w := range f.workers {
		if w.n == f.victim {
			file = w.lockKey(file)
		}
	}
	victim := fmt.Sprintf("agent-%d@fleet", f.victim)
	lines, err := branchEventLines(f.ctx, dir, f.env, "origin/lockgate/workflow", func(l string) bool { return strings.Contains(l, `"key":"`+file+`"`) })
	if err != nil {
		t.Fatalf("read the events of %s on the workflow branch: %v", file, err)
	}
	var evs []fleetEvent
	for _, line := range lines {
		var ev fleetEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("an event of %s on the workflow branch: %v: %s", file, err, line)
		}
		if ev.Key == file {
			evs = append(evs, ev)
		}
	}
	// The killed session's grant, and its expiry as last refreshed: its
	// last grant (the highest fence), as lock hold may have been tried
	// again (a grant that lapsed before its command started is released).
	// The events come by path, not in time.
	var killed *fleetEvent
	for i, ev := range evs {
		if ev.Worker == victim && ev.Session == victim && (ev.Action == "lock_acquire" || ev.Action == "lock_takeover") &&
			(killed == nil || ev.Fence > killed.Fence) {
			killed = &evs[i]
		}
	}
	if killed == nil || killed.Fence == 0 || killed.ExpiresAt == nil {
		t.Fatalf("no lock_acquire of %s by %s's first session with a fence and an expiry among %d events", file, victim, len(evs))
	}
	expires := *killed.ExpiresAt
	var next *fleetEvent
	for i, ev := range evs {
		switch {
		case ev.Fence != killed.Fence:
		case ev.Action == "lock_refresh" && ev.ExpiresAt != nil && ev.ExpiresAt.After(expires):
			expires = *ev.ExpiresAt
		case ev.Action == "lock_release" || ev.Action == "lock_clear":
			t.Errorf("the killed session's grant of %s (fence %d) was ended by %s of %s", file, ev.Fence, ev.Action, ev.Worker)
		}
		if (ev.Action == "lock_acquire" || ev.Action == "lock_takeover") && ev.Fence > killed.Fence && (next == nil || ev.Fence < next.Fence) {
			next = &evs[i]
		}
	}
	if next == nil {
		t.Fatalf("no grant of %s after the killed session's (fence %d)", file, killed.Fence)
	}
	t.Logf("%s: the killed session's grant (fence %d) expired at %s; next: %s by %s (%s) at %s, fence %d",
		file, killed.Fence, expires.Format(time.RFC3339Nano), next.Action, next.Worker, next.Session, next.Timestamp.Format(time.RFC3339Nano), next.Fence)
	if !next.Timestamp.After(expires) {
		t.Errorf("%s was granted again at %s (%s by %s), before the killed session's lock expired at %s",
			file, next.Timestamp.Format(time.RFC3339Nano), next.Action, next.Worker, expires.Format(time.RFC3339Nano))
	}
	takenOver := next.Action == "lock_takeover" && strings.Contains(next.Details, victim)
	if f.store == "git" && !takenOver {
		t.Errorf("the grant of %s after the killed session's is %s by %s (%q), want a lock_takeover naming %s",
			file, next.Action, next.Worker, next.Details, victim)
	}
}

// fleetReport is the part of verify's JSON report the test reads.
type fleetReport struct {
	OK         bool `json:"ok"`
	Commits    int  `json:"commits_checked"`
	AsPusher   int  `json:"commits_as_pusher"`
	Violations []struct {
		Rule, Path, Key, Holder, Reason, Commit, Subject string
	} `json:"violations"`
	Undecided []struct {
		Commit, Subject, Path, Key, Reason string
	} `json:"undecided"`
	Warnings []string `json:"warnings"`
}

// verify runs `lockgate verify` in a fresh clone of the remote, as CI
// would, and requires every pushed commit proven, on each branch the
// workers pushed to. It returns the clone.
func (f *fleet) verify() string {
	dir := filepath.Join(f.root, "verifier")
	f.git(f.root, "clone", "-q", f.origin, dir)
	f.checkTakeover(dir)
	branches := []string{"main"}
	for _, h := range f.holds {
		if !h.killed && !slices.Contains(branches, h.onBranch()) {
			branches = append(branches, h.onBranch())
		}
	}
	for _, b := range branches {
		f.verifyBranch(dir, b)
	}
	return dir
}

// verifyBranch runs `lockgate verify` in the verifier's clone dir on the
// commits of branch since the base (judged by the locks of branch, per
// branch) and requires every one proven.
func (f *fleet) verifyBranch(dir, branch string) {
	t := f.t
	pushed := 0
	for _, h := range f.holds {
		if !h.killed && h.onBranch() == branch {
			pushed++
		}
	}
	if got := f.git(dir, "rev-list", "--count", f.base+"..origin/"+branch); got != strconv.Itoa(pushed) {
		t.Errorf("origin's %s has %s commits since the base, the workers pushed %d", branch, got, pushed)
	}
	args := []string{"verify", "--fetch", "--range", f.base + "..origin/" + branch, "--format", "json"}
	if f.perBranch {
		args = append(args, "--branch", branch)
	}
	cmd := exec.CommandContext(f.ctx, f.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), f.env...), "LOCKGATE_WORKER=ci@fleet", "LOCKGATE_WORKER_TYPE=agent")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run lockgate verify: %v", err)
	}
	var rep fleetReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("verify of %s exited %d without a JSON report: %v\nstdout:\n%s\nstderr:\n%s", branch, code, err, stdout.String(), stderr.String())
	}
	failed := false
	if code != 0 {
		t.Errorf("verify of %s exited %d, want 0 (an honest fleet is proven): %d violations, %d undecided", branch, code, len(rep.Violations), len(rep.Undecided))
		failed = true
	}
	if len(rep.Violations) > 0 || len(rep.Undecided) > 0 || !rep.OK {
		t.Errorf("verify of %s: ok=%v, %d violations, %d undecided, want none of either", branch, rep.OK, len(rep.Violations), len(rep.Undecided))
		failed = true
	}
	if rep.Commits != pushed {
		t.Errorf("verify of %s judged %d commits, the workers pushed %d", branch, rep.Commits, pushed)
		failed = true
	}
	if rep.AsPusher != 0 {
		t.Errorf("verify of %s judged %d commits as the pusher: every commit went through the hooks and carries trailers", branch, rep.AsPusher)
		failed = true
	}
	for _, w := range rep.Warnings {
		if f.signed && strings.Contains(w, "signature") {
			t.Errorf("verify, signed: %s", w)
			failed = true
		}
	}
	if !failed {
		t.Logf("verify of %s: %d commits proven", branch, rep.Commits)
		return
	}
	holds := map[string]fleetHold{}
	for _, h := range f.holds {
		if h.commit != "" {
			holds[h.commit[:12]] = h
		}
	}
	// Each finding beside what the harness saw of that commit.
	seen := func(commit string) string {
		h, ok := holds[commit]
		if !ok {
			return "commit unknown to the harness"
		}
		return fmt.Sprintf("%s held %s from %s to %s, committed at %s",
			h.worker, strings.Join(h.files, " "), h.acquired.UTC().Format("15:04:05.000"),
			h.released.UTC().Format("15:04:05.000"), time.Unix(h.ct, 0).UTC().Format("15:04:05"))
	}
	// The holds of the holder a violation names, on its path.
	heldBy := func(holder, path string) string {
		var spans []string
		for _, h := range f.holds {
			if h.worker == holder && slices.Contains(h.files, path) {
				spans = append(spans, fmt.Sprintf("%s–%s", h.acquired.UTC().Format("15:04:05.000"), h.released.UTC().Format("15:04:05.000")))
			}
		}
		return strings.Join(spans, ", ")
	}
	var b strings.Builder
	for _, v := range rep.Violations {
		fmt.Fprintf(&b, "violation %s %s (%s): %s\n    harness: %s; %s held %s at %s\n",
			v.Rule, v.Path, v.Commit, v.Reason, seen(v.Commit), v.Holder, v.Path, heldBy(v.Holder, v.Path))
	}
	for _, u := range rep.Undecided {
		fmt.Fprintf(&b, "undecided %s %s (%s): %s\n    harness: %s\n", u.Path, u.Key, u.Commit, u.Reason, seen(u.Commit))
	}
	fmt.Fprintf(&b, "%d warnings", len(rep.Warnings))
	for i, w := range rep.Warnings {
		if i == 5 {
			b.WriteString(", …")
			break
		}
		fmt.Fprintf(&b, "\nwarning: %s", w)
	}
	t.Logf("verify of %s exited %d; findings:\n%s\nstderr:\n%s", branch, code, b.String(), stderr.String())
	f.dumpLogs()
}

// rogue: the first worker, signing with its own key, commits a change
// whose trailers name the second worker (past the hooks of its clone, as
// a rogue agent can) and pushes it past pre-push. The server's
// pre-receive must refuse it: the pushed commit carries no signature of
// the worker it names, and another worker pushes it.
func (f *fleet) rogue() {
	t := f.t
	w, other := f.workers[0], f.workers[1]
	mustRun := w.must
	mustRun("git", "fetch", "-q", "origin")
	mustRun("git", "reset", "-q", "--hard", "origin/main")
	before := strings.TrimSpace(mustRun("git", "rev-parse", "origin/main"))
	file := fleetFile(fleetFiles - 1) // a file nobody locks
	p := filepath.Join(w.dir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, fmt.Appendf(b, "// %s, as %s\n", w.id, other.id), 0o644); err != nil {
		t.Fatal(err)
	}
	msg := filepath.Join(f.root, "rogue-msg")
	write(t, msg, fmt.Sprintf("%s's change, made by %s\n\nLockgate-Worker: %s\nLockgate-Worker-Type: agent\nLockgate-Session: %s\n",
		other.id, w.id, other.id, other.id))
	mustRun("git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-a", "-F", msg)
	if c := mustRun("git", "cat-file", "commit", "HEAD"); !strings.Contains(c, "BEGIN SSH SIGNATURE") {
		t.Fatalf("rogue %s: the commit is not signed (commit.gpgsign):\n%s", w.id, c)
	}
	out, code := w.run("git", "push", "--no-verify", "origin", "HEAD:main")
	switch {
	case code == 0:
		f.dumpLogs()
		t.Fatalf("%s pushed a commit naming %s, signed with its own key: the server accepted it\n%s", w.id, other.id, out)
	case !strings.Contains(out, "pre-receive hook declined") && !strings.Contains(out, "[remote rejected]"):
		t.Fatalf("%s's push of a commit naming %s failed, but not by the server's refusal:\n%s", w.id, other.id, out)
	case !strings.Contains(out, "signature: ") && !strings.Contains(out, "pusher: "):
		t.Fatalf("the server refused %s's commit naming %s without the rule signature or pusher:\n%s", w.id, other.id, out)
	case !strings.Contains(out, other.id):
		t.Errorf("the server's refusal of %s's commit does not name %s:\n%s", w.id, other.id, out)
	}
	t.Logf("the server refused %s's commit naming %s:\n%s", w.id, other.id, indent(out))
	mustRun("git", "fetch", "-q", "origin")
	if after := strings.TrimSpace(mustRun("git", "rev-parse", "origin/main")); after != before {
		t.Fatalf("origin's main moved from %s to %s with the refused push", before, after)
	}
	mustRun("git", "reset", "-q", "--hard", "origin/main")
}

// checkSigned requires, in the verifier's clone dir, a good signature by
// the allowed signers of the base on every commit of main since the base
// (its worker's, as its trailers name it), on every commit of the
// workflow branch and on the lock table's tip, as git checks them.
func (f *fleet) checkSigned(dir string) {
	t := f.t
	signers := filepath.Join(f.root, "allowed_signers")
	write(t, signers, f.git(dir, "show", f.base+":.lockgate/allowed_signers")+"\n")
	f.git(dir, "fetch", "-q", "origin", "+refs/lockgate/locks:refs/remotes/origin/lockgate-locks")
	log := func(args ...string) []string {
		args = append([]string{"-c", "gpg.ssh.allowedSignersFile=" + signers, "log"}, args...)
		return strings.Split(f.git(dir, args...), "\n")
	}
	check := func(what string, lines []string, wantSigner bool) {
		for _, line := range lines {
			fs := strings.Split(line, " ")
			if len(fs) < 3 || fs[1] != "G" {
				t.Errorf("%s: commit %s is not signed good by the allowed signers (%%G? %%GS: %q)", what, fs[0], strings.Join(fs[1:], " "))
				continue
			}
			if wantSigner && (len(fs) < 4 || fs[2] != fs[3]) {
				t.Errorf("%s: commit %s is signed by %s, its trailers name %q", what, fs[0], fs[2], strings.Join(fs[3:], " "))
			}
		}
		t.Logf("%s: %d commit(s), each signed", what, len(lines))
	}
	check("main since the base", log("--format=%H %G? %GS %(trailers:key=Lockgate-Worker,valueonly,separator=%x2C)", f.base+"..origin/main"), true)
	check("the workflow branch", log("--format=%H %G? %GS", "origin/lockgate/workflow"), false)
	check("the lock table's tip", log("-1", "--format=%H %G? %GS", "refs/remotes/origin/lockgate-locks"), false)
	if t.Failed() {
		f.dumpLogs()
	}
}
