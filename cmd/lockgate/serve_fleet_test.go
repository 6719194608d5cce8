package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
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

// TestServeFleet runs `lockgate serve` as a team uses it: the server runs
// in a clone of the shared remote, on the store every clone shares;
// people in clones of their own lock binary assets with git-lfs's own
// client (`git lfs lock`, `git lfs unlock`) through it, while agents in
// a clone of their own and in worktrees of another take locks with
// `lockgate lock acquire`, and a `lockgate work` loop in a clone of its
// own works through a queue of packages; everyone commits through the
// installed hooks
// and pushes to the remote, and one agent is killed with SIGKILL while it
// holds a lock. A commit of an asset another person locked through
// git-lfs is refused by the hook, which names the holder. Then a fresh
// clone verifies every pushed commit against the lock log: the locks
// taken through the server are proven like the others. It runs on the
// git store and on Redis.
func TestServeFleet(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Fatal("git-lfs is not installed: `make test` installs it (apt-get install git-lfs)")
	}
	oneFleetAtATime(t)
	lockgateBinary(t)
	t.Run("git", func(t *testing.T) {
		runServeFleet(t, "git", nil)
	})
	t.Run("redis", func(t *testing.T) {
		srv := redistest.Start(t, redistest.Options{})
		runServeFleet(t, "redis", []string{"LOCK_REDIS_URL=" + srv.URL()})
	})
}

const (
	serveFleetAssets  = 3 // the people's assets: few, so that they collide
	serveFleetAgents  = 3 // agents fleetVictim-2 … fleetVictim: one in a clone of its own, two in worktrees
	serveFleetRetries = 600
	serveFleetContest = "assets/contested.bin" // locked by alice while bob commits it
)

var serveFleetPeople = []string{"alice", "bob", "carol"}

// servePerson is a person of the team: a clone of their own, a serve user
// whose token git-lfs sends, and the hooks judging their commits as the
// human worker of that name.
type servePerson struct {
	f    *fleet
	n    int
	name string
	dir  string
	rng  *rand.Rand

	logMu sync.Mutex
	log   bytes.Buffer
}

func runServeFleet(t *testing.T, store string, storeEnv []string) {
	rounds := gittest.Rounds(t, 16)
	f := newFleet(t, store, storeEnv, rounds)
	defer f.cancel()
	people, workDir, stopServer := serveFleetSetup(f, store, rounds)
	seed := uint64(time.Now().UnixNano())
	t.Logf("%s store: %d people × %d rounds through lockgate serve, %d agents × %d tasks, lockgate work × %d packages, seed %d",
		store, len(people), rounds, len(f.workers), rounds, rounds, seed)

	// alice locks the contested asset; bob commits it and is refused;
	// then alice commits and pushes it and unlocks.
	locked, refused := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range f.workers {
		w.rng = rand.New(rand.NewPCG(seed, uint64(w.n)))
		wg.Go(func() {
			if err := w.work(rounds); err != nil {
				f.fail(fmt.Errorf("%s: %w", w.id, err))
			}
		})
	}
	wg.Go(func() {
		if err := serveFleetWork(f, workDir); err != nil {
			f.fail(fmt.Errorf("%s: %w", serveFleetLoop, err))
		}
	})
	for _, p := range people {
		p.rng = rand.New(rand.NewPCG(seed, uint64(100+p.n)))
		wg.Go(func() {
			var err error
			switch p.name {
			case "alice":
				err = p.contestHolder(locked, refused)
			case "bob":
				err = p.contestRefused(locked, refused)
			}
			if err == nil {
				err = p.work(rounds)
			}
			if err != nil {
				f.fail(fmt.Errorf("%s: %w", p.name, err))
			}
		})
	}
	wg.Wait()
	if f.ctx.Err() != nil && len(f.errs) == 0 {
		f.fail(fmt.Errorf("the team did not finish in time: %w", f.ctx.Err()))
	}
	// The agents' logs come with every failure (checkHarness and verify
	// show them too); the people's here.
	defer func() {
		if !t.Failed() {
			return
		}
		for _, p := range people {
			p.logMu.Lock()
			t.Logf("log of %s (%s):\n%s", p.name, p.dir, p.log.String())
			p.logMu.Unlock()
		}
	}()
	if len(f.errs) > 0 {
		f.dumpLogs()
		t.Fatalf("the team failed: %v", errors.Join(f.errs...))
	}
	f.checkHarness()
	// The server commits and pushes its events a moment after it answers;
	// stopped, it has pushed the last of them.
	stopServer()
	f.verify()
}

// serveFleetSetup makes the remote with the base commit, starts `lockgate
// serve` in a clone of its own with a user per person, and makes the
// people's clones (git-lfs pointed at the server) and the agents' clone
// and worktrees, all with the hooks installed.
func serveFleetSetup(f *fleet, store string, rounds int) (people []*servePerson, workDir string, stopServer func()) {
	t := f.t
	f.origin = filepath.Join(f.root, "origin.git")
	f.git(f.root, "init", "-q", "--bare", "-b", "main", f.origin)
	seed := filepath.Join(f.root, "seed")
	f.git(f.root, "init", "-q", "-b", "main", seed)
	write(t, filepath.Join(seed, ".lockgate.yaml"), fmt.Sprintf(`version: 1
locks:
  store: %s
hooks:
  require_lock: true
  trailers: true
workflow:
  auto_push: true
`, store))
	write(t, filepath.Join(seed, ".gitattributes"), "*.bin binary\n")
	for i := range fleetFiles {
		write(t, filepath.Join(seed, fleetFile(i)), fmt.Sprintf("package src\n\n// file %d\n", i))
	}
	for i := range serveFleetAssets {
		write(t, filepath.Join(seed, serveFleetAsset(i)), string(binaryBlob(uint64(i), 4096)))
	}
	write(t, filepath.Join(seed, serveFleetContest), string(binaryBlob(99, 4096)))
	var pkgs strings.Builder
	pkgs.WriteString("packages:\n")
	for i := range rounds {
		write(t, filepath.Join(seed, serveFleetWorkFile(i)), fmt.Sprintf("package src\n\n// work %d\n", i))
		fmt.Fprintf(&pkgs, "  - id: WP-%d\n    title: package %d\n    locks:\n      files: [%s]\n", i, i, serveFleetWorkFile(i))
	}
	write(t, filepath.Join(seed, "work-packages.yaml"), pkgs.String())
	f.publish(seed)
	clone := f.clone

	server := clone("server")
	tokens := map[string]string{}
	for _, name := range serveFleetPeople {
		out, err := f.lockgate(server, "admin", "serve", "user", "add", name)
		if err != nil {
			t.Fatalf("lockgate serve user add %s: %v\n%s", name, err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		tokens[name] = lines[len(lines)-1]
	}
	addr, stop := startServeIn(t, f.bin, server, append(append([]string(nil), f.env...), "LOCKGATE_WORKER=server@fleet", "LOCKGATE_WORKER_TYPE=agent"))

	for n, name := range serveFleetPeople {
		p := &servePerson{f: f, n: n, name: name, dir: clone("person-" + name)}
		f.git(p.dir, "config", "lfs.url", "http://"+name+":"+tokens[name]+"@"+addr+"/lfs")
		f.git(p.dir, "config", "lfs.locksverify", "true")
		people = append(people, p)
	}
	shared := clone("agents")
	for n := fleetVictim - serveFleetAgents + 1; n <= fleetVictim; n++ {
		w := &fleetWorker{f: f, n: n, id: fmt.Sprintf("agent-%d@fleet", n)}
		w.session = w.id
		if n == fleetVictim-serveFleetAgents+1 {
			w.dir = clone(fmt.Sprintf("clone-%d", n))
		} else {
			w.dir = filepath.Join(f.root, fmt.Sprintf("worktree-%d", n))
			f.git(shared, "worktree", "add", "-q", "-b", fmt.Sprintf("agent-%d", n), w.dir, "origin/main")
		}
		f.workers = append(f.workers, w)
	}
	return people, clone("clone-work"), stop
}

func serveFleetAsset(i int) string { return fmt.Sprintf("assets/a%d.bin", i) }

func serveFleetWorkFile(i int) string { return fmt.Sprintf("src/w%02d.go", i) }

// serveFleetLoop is the worker running `lockgate work`.
const serveFleetLoop = "agent-work@fleet"

// serveFleetWorkCmd is the command `lockgate work` runs for each package:
// it brings the clone up to date, changes the package's files, commits
// them through the hooks, pushes (rebasing while others pushed first),
// and writes the hold down for the harness: when it started (the claim
// was held by then), the commit, its committer time and when it pushed
// (the claim is held until after the command exits).
const serveFleetWorkCmd = `set -e
start=$(date +%s.%N)
git pull -q --rebase origin main
for f in $LOCKGATE_PACKAGE_FILES; do echo "// $LOCKGATE_PACKAGE" >> "$f"; done
git add -- $LOCKGATE_PACKAGE_FILES
git commit -q -m "$LOCKGATE_WORKER $LOCKGATE_PACKAGE: $LOCKGATE_PACKAGE_TITLE"
n=0
until git push -q origin HEAD:main; do
  n=$((n + 1)); [ "$n" -lt 30 ]
  git pull -q --rebase origin main
done
echo "$LOCKGATE_PACKAGE $start $(git log -1 --format='%H %ct') $(date +%s.%N) $LOCKGATE_PACKAGE_FILES" >> "$1"
`

// serveFleetWork runs `lockgate work` in dir until every package is done,
// and records a hold for each package's commit.
func serveFleetWork(f *fleet, dir string) error {
	holds := filepath.Join(f.root, "work-holds")
	cmd := exec.CommandContext(f.ctx, f.bin, "work", "--", "sh", "-c", serveFleetWorkCmd, "sh", holds)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), f.env...), "LOCKGATE_WORKER="+serveFleetLoop, "LOCKGATE_WORKER_TYPE=agent")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("lockgate work: %w\n%s", err, out)
	}
	b, err := os.ReadFile(holds)
	if err != nil {
		return fmt.Errorf("lockgate work ran no package: %w\n%s", err, out)
	}
	at := func(s string) (time.Time, error) {
		sec, frac, _ := strings.Cut(s, ".")
		n, err := strconv.ParseInt(sec, 10, 64)
		if err != nil {
			return time.Time{}, err
		}
		ns, err := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		return time.Unix(n, ns), err
	}
	for line := range strings.Lines(string(b)) {
		fs := strings.Fields(line)
		if len(fs) < 6 {
			return fmt.Errorf("a hold of lockgate work's command: %q", line)
		}
		h := fleetHold{worker: serveFleetLoop, files: fs[5:], commit: fs[2]}
		var errs [4]error
		h.acquired, errs[0] = at(fs[1])
		h.ct, errs[1] = strconv.ParseInt(fs[3], 10, 64)
		h.released, errs[2] = at(fs[4])
		h.task, errs[3] = strconv.Atoi(strings.TrimPrefix(fs[0], "WP-"))
		if err := errors.Join(errs[:]...); err != nil {
			return fmt.Errorf("a hold of lockgate work's command: %q: %w", line, err)
		}
		f.record(h)
	}
	return nil
}

// binaryBlob is n bytes of noise (NUL bytes included) from seed: an
// asset git cannot diff or merge.
func binaryBlob(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// startServeIn starts `lockgate serve --listen 127.0.0.1:0 [args]` in dir
// with env, waits until /healthz answers and returns HOST:PORT and a stop
// that stops it with SIGTERM, which it must survive with exit 0 (its last
// events committed and pushed: a test that verifies what the server
// granted stops it first). At the end it is stopped if it was not; its
// log is shown when t failed.
func startServeIn(t testing.TB, bin, dir string, env []string, args ...string) (addr string, stop func()) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var log bytes.Buffer
	exited := make(chan error, 1)
	lines := bufio.NewScanner(stderr)
	for addr == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), " on http://"); ok {
			addr, _, _ = strings.Cut(rest, " ")
		}
	}
	go func() {
		for lines.Scan() {
			logMu.Lock()
			log.WriteString(lines.Text() + "\n")
			logMu.Unlock()
		}
		exited <- cmd.Wait()
	}()
	if addr == "" {
		t.Fatalf("lockgate serve said no address: %v", <-exited)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() { stopServe(t, cmd, exited) })
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			logMu.Lock()
			t.Logf("log of lockgate serve:\n%s", log.String())
			logMu.Unlock()
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return addr, stop
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz never answered: %v", err)
		}
	}
}

func (p *servePerson) logf(at time.Time, format string, args ...any) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintf(&p.log, "%s %s\n", at.UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// git runs git in the person's clone as the human worker of their name
// (the hooks judge the commit as theirs), logs it and returns the output
// and the exit code (-1 when it could not run).
func (p *servePerson) git(args ...string) (string, int) {
	cmd := exec.CommandContext(p.f.ctx, "git", args...)
	cmd.Dir = p.dir
	cmd.Env = append(append([]string(nil), p.f.env...), "LOCKGATE_WORKER="+p.name, "LOCKGATE_WORKER_TYPE=human")
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
	p.logf(start, "git %s → exit %d in %v\n%s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond), indent(string(out)))
	return string(out), code
}

// work runs the person's rounds: each locks one of the assets with `git
// lfs lock`, changes it, commits, pushes and unlocks.
func (p *servePerson) work(rounds int) error {
	for i := range rounds {
		if p.f.ctx.Err() != nil {
			return p.f.ctx.Err()
		}
		asset := serveFleetAsset(p.rng.IntN(serveFleetAssets))
		if err := p.lock(asset); err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		if err := p.change(i, asset); err != nil {
			return fmt.Errorf("round %d (%s): %w", i, asset, err)
		}
	}
	return nil
}

// lock takes asset with `git lfs lock`, trying again while another
// person holds it (git-lfs names the holder).
func (p *servePerson) lock(asset string) error {
	var out string
	for range serveFleetRetries {
		var code int
		out, code = p.git("lfs", "lock", asset)
		if code == 0 {
			return nil
		}
		if !strings.Contains(out, "is held by") || !p.namesAnother(out) {
			return fmt.Errorf("git lfs lock %s: exit %d: %s", asset, code, out)
		}
		select {
		case <-p.f.ctx.Done():
			return p.f.ctx.Err()
		case <-time.After(time.Duration(50+p.rng.IntN(150)) * time.Millisecond):
		}
	}
	return fmt.Errorf("git lfs lock %s kept finding it held: %s", asset, out)
}

// namesAnother reports whether out names another person.
func (p *servePerson) namesAnother(out string) bool {
	for _, name := range serveFleetPeople {
		if name != p.name && strings.Contains(out, name) {
			return true
		}
	}
	return false
}

// change brings the clone up to date, changes asset (locked by the
// person), commits it through the hooks, pushes and unlocks it, and
// records the hold for the harness.
func (p *servePerson) change(round int, asset string) error {
	h := fleetHold{worker: p.name, task: round, files: []string{asset}, acquired: time.Now()}
	unlock := func() error {
		h.released = time.Now()
		if out, code := p.git("lfs", "unlock", asset); code != 0 {
			return fmt.Errorf("git lfs unlock %s: exit %d: %s", asset, code, out)
		}
		return nil
	}
	fail := func(err error) error {
		return errors.Join(err, unlock())
	}
	// The previous holder pushed before it unlocked: this brings its change.
	if err := p.pull(); err != nil {
		return fail(err)
	}
	path := filepath.Join(p.dir, asset)
	b, err := os.ReadFile(path)
	if err != nil {
		return fail(err)
	}
	b = append(b, binaryBlob(uint64(1000*p.n+round), 64)...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fail(err)
	}
	if out, code := p.git("add", "--", asset); code != 0 {
		return fail(fmt.Errorf("git add: exit %d: %s", code, out))
	}
	if out, code := p.git("commit", "-q", "-m", fmt.Sprintf("%s round %d: %s", p.name, round, asset)); code != 0 {
		return fail(fmt.Errorf("git commit (hooks refused an honest commit?): exit %d: %s", code, out))
	}
	if err := p.push(); err != nil {
		return fail(err)
	}
	out, code := p.git("log", "-1", "--format=%H %ct")
	if code != 0 {
		return fail(fmt.Errorf("git log: %s", out))
	}
	sha, ct, _ := strings.Cut(strings.TrimSpace(out), " ")
	h.commit = sha
	h.ct, _ = strconv.ParseInt(ct, 10, 64)
	if err := unlock(); err != nil {
		return err
	}
	p.f.record(h)
	return nil
}

// pull rebases the person's main onto origin's.
func (p *servePerson) pull() error {
	out, code := p.git("pull", "-q", "--rebase", "origin", "main")
	if code != 0 {
		return fmt.Errorf("git pull --rebase: exit %d: %s", code, out)
	}
	return nil
}

// push pushes to origin's main, rebasing onto what others pushed first;
// the pre-push hook judges it each time.
func (p *servePerson) push() error {
	for range 30 {
		out, code := p.git("push", "-q", "origin", "HEAD:main")
		if code == 0 {
			return nil
		}
		// The remote moved: another push came first, or is landing now.
		moved := false
		for _, s := range []string{"[rejected]", "fetch first", "non-fast-forward", "cannot lock ref", "failed to update ref"} {
			moved = moved || strings.Contains(out, s)
		}
		if !moved {
			return fmt.Errorf("git push refused: exit %d: %s", code, out)
		}
		if err := p.pull(); err != nil {
			return err
		}
	}
	return errors.New("git push: origin kept moving")
}

// contestHolder: alice locks the contested asset with git-lfs and keeps
// it until bob's commit of it has been refused; then she commits and
// pushes her change of it and unlocks it.
func (p *servePerson) contestHolder(locked, refused chan struct{}) error {
	if err := p.lock(serveFleetContest); err != nil {
		return err
	}
	close(locked)
	select {
	case <-refused:
	case <-p.f.ctx.Done():
		return p.f.ctx.Err()
	}
	return p.change(-1, serveFleetContest)
}

// contestRefused: bob changes the asset alice locked with git-lfs and
// commits it; the pre-commit hook must refuse the commit and name alice.
// He then puts the file back as it was.
func (p *servePerson) contestRefused(locked, refused chan struct{}) error {
	select {
	case <-locked:
	case <-p.f.ctx.Done():
		return p.f.ctx.Err()
	}
	path := filepath.Join(p.dir, serveFleetContest)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, 0, 1, 2), 0o644); err != nil {
		return err
	}
	if out, code := p.git("add", "--", serveFleetContest); code != 0 {
		return fmt.Errorf("git add: exit %d: %s", code, out)
	}
	out, code := p.git("commit", "-q", "-m", "bob's change of alice's asset")
	if code == 0 {
		return fmt.Errorf("the hooks let bob commit %s, locked by alice through git-lfs: %s", serveFleetContest, out)
	}
	if !strings.Contains(out, serveFleetContest) || !strings.Contains(out, "locked by alice") {
		return fmt.Errorf("bob's commit of %s was refused (exit %d) without naming the file and its holder alice: %s", serveFleetContest, code, out)
	}
	if out, code := p.git("reset", "-q", "--hard", "HEAD"); code != 0 {
		return fmt.Errorf("git reset: exit %d: %s", code, out)
	}
	close(refused)
	return nil
}

// stopServe stops the lockgate serve process cmd with SIGTERM and waits for
// it (exited gets cmd.Wait's error): it must exit 0 within 30 seconds, or
// it is killed and t fails.
func stopServe(t testing.TB, cmd *exec.Cmd, exited <-chan error) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("lockgate serve after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Error("lockgate serve did not stop on SIGTERM")
	}
}
