package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
	"github.com/lockgate/lockgate/workflow"
)

// cliRepo is a real repository and a way to run lockgate processes in it.
type cliRepo struct {
	t    *testing.T
	repo *gittest.Repo
}

func newCLIRepo(t *testing.T) *cliRepo {
	r := gittest.New(t)
	return &cliRepo{t: t, repo: r}
}

// cmd prepares one lockgate process.
func (c *cliRepo) cmd(worker string, args ...string) *exec.Cmd {
	cmd := exec.Command(lockgateBinary(c.t), args...)
	cmd.Dir = c.repo.Dir
	cmd.Env = append(append([]string(nil), c.repo.Env...), "LOCKGATE_WORKER="+worker)
	return cmd
}

// run runs lockgate and returns its exit code and combined output.
func (c *cliRepo) run(worker string, args ...string) (int, string) {
	cmd := c.cmd(worker, args...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	default:
		c.t.Fatalf("run lockgate: %v", err)
		return -1, ""
	}
}

// race starts n processes at once and returns their exit codes.
func (c *cliRepo) race(n int, args func(i int) (worker string, argv []string)) []int {
	codes := make([]int, n)
	outs := make([]string, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, a := args(i)
			<-start
			codes[i], outs[i] = c.run(w, a...)
		}()
	}
	close(start)
	wg.Wait()
	for i, code := range codes {
		if code != 0 && code != 4 {
			c.t.Fatalf("process %d exited %d: %s", i, code, outs[i])
		}
	}
	return codes
}

func count(codes []int, want int) int {
	n := 0
	for _, c := range codes {
		if c == want {
			n++
		}
	}
	return n
}

// rounds scales a race's full round count (see gittest.Rounds).
func rounds(t *testing.T, n int) int { return gittest.Rounds(t, n) }

// TestRaceAcquire: 16 processes acquire one key; exactly one wins, the
// rest exit 4. Repeated 200 times.
func TestRaceAcquire(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	for round := range rounds(t, 200) {
		key := fmt.Sprintf("race/k%d.txt", round)
		codes := c.race(16, func(i int) (string, []string) {
			return fmt.Sprintf("w%d", i), []string{"lock", "acquire", key}
		})
		if got := count(codes, 0); got != 1 {
			t.Fatalf("round %d: %d winners, want exactly 1 (codes %v)", round, got, codes)
		}
	}
}

// TestRaceTakeover: 16 processes take over one expired lock; exactly one
// wins.
func TestRaceTakeover(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	for round := range rounds(t, 40) {
		key := fmt.Sprintf("takeover/k%d", round)
		if code, out := c.run("old", "lock", "acquire", key, "--ttl", "1ms"); code != 0 {
			t.Fatalf("seed lock: %d %s", code, out)
		}
		time.Sleep(5 * time.Millisecond)
		codes := c.race(16, func(i int) (string, []string) {
			return fmt.Sprintf("w%d", i), []string{"lock", "acquire", key}
		})
		if got := count(codes, 0); got != 1 {
			t.Fatalf("round %d: %d winners of the takeover, want exactly 1 (codes %v)", round, got, codes)
		}
	}
	// Every takeover is in the journal, once per round.
	code, out := c.run("reader", "log", "--json")
	if code != 0 {
		t.Fatalf("log: %s", out)
	}
	if got, want := strings.Count(out, `"lock_takeover"`), rounds(t, 40); got != want {
		t.Fatalf("%d lock_takeover events, want %d", got, want)
	}
}

// TestRaceJournal: 16 processes each record 200 events (100 acquire +
// release pairs); the journal holds 3,200 intact lines.
func TestRaceJournal(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	pairs := rounds(t, 100)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("w%d", w)
			key := fmt.Sprintf("journal/%s.txt", worker)
			for range pairs {
				for _, op := range []string{"acquire", "release"} {
					if code, out := c.run(worker, "lock", op, key); code != 0 {
						errs <- fmt.Errorf("%s %s: %d %s", worker, op, code, out)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	perWorker := map[string]int{}
	// Both segments: the journal may have been rotated on the way
	// (journal.rotate_bytes).
	for _, name := range []string{"events.jsonl.1", "events.jsonl"} {
		f, err := os.Open(filepath.Join(c.repo.Dir, ".git", "lockgate", name))
		if errors.Is(err, fs.ErrNotExist) && name != "events.jsonl" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for n := 1; sc.Scan(); n++ {
			var ev struct{ ID, Worker, Action string }
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("%s line %d is torn: %v: %q", name, n, err, sc.Text())
			}
			if ids[ev.ID] {
				t.Fatalf("%s line %d: duplicate event id %s", name, n, ev.ID)
			}
			ids[ev.ID] = true
			perWorker[ev.Worker]++
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if want := 16 * pairs * 2; len(ids) != want {
		t.Fatalf("%d events, want %d", len(ids), want)
	}
	for w, n := range perWorker {
		if n != pairs*2 {
			t.Errorf("worker %s: %d events, want %d", w, n, pairs*2)
		}
	}
}

// TestKilledAcquire: a process killed with SIGKILL in the middle of an
// acquire leaves either no record or a whole one, never a half-written one,
// and the key stays usable.
func TestKilledAcquire(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	for round := range rounds(t, 60) {
		key := fmt.Sprintf("killed/k%d", round%5)
		cmd := c.cmd("victim", "lock", "acquire", key, "--ttl", "1ms")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rand.IntN(8000)) * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
	code, out := c.run("reader", "--json", "lock", "list")
	if code != 0 {
		t.Fatalf("lock list: %d %s", code, out)
	}
	if bytes.Contains([]byte(out), []byte(`"corrupt": true`)) {
		t.Fatalf("a killed acquire left a corrupt record:\n%s", out)
	}
	time.Sleep(5 * time.Millisecond) // let the 1ms locks expire
	for i := range 5 {
		key := fmt.Sprintf("killed/k%d", i)
		if code, out := c.run("survivor", "lock", "acquire", key); code != 0 {
			t.Fatalf("key %s unusable after kills: %d %s", key, code, out)
		}
	}
}

// TestKilledAcquireJournal: processes SIGKILLed at random points of a
// `lock acquire` never leave a lock whose lock_acquire event the journal
// lacks, once the next command has run. Half the victims die at a random
// moment of their run, half the moment their lock record appears, before
// they can append its event.
func TestKilledAcquireJournal(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	lockgateBinary(t) // built before the clock starts
	start := time.Now()
	if code, out := c.run("probe", "lock", "acquire", "probe.txt"); code != 0 {
		t.Fatalf("probe: %d %s", code, out)
	}
	span := time.Since(start) // how long a whole acquire takes here
	locks := filepath.Join(c.repo.Dir, ".git", "lockgate", "locks")
	const parallel = 4
	n := rounds(t, 60)
	for round := range n {
		var wg sync.WaitGroup
		for i := range parallel {
			key := fmt.Sprintf("killed-r%d-%d.txt", round, i)
			cmd := c.cmd(fmt.Sprintf("victim-%d", i), "lock", "acquire", key)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					time.Sleep(rand.N(span + span/4))
				} else {
					record := filepath.Join(locks, key+".lock")
					for deadline := time.Now().Add(span + span/4); time.Now().Before(deadline); {
						if _, err := os.Stat(record); err == nil {
							break
						}
						time.Sleep(50 * time.Microsecond)
					}
				}
				_ = cmd.Process.Signal(syscall.SIGKILL)
				_ = cmd.Wait()
			}()
		}
		wg.Wait()
	}
	// The next command settles what the killed ones left.
	if code, out := c.run("next", "lock", "acquire", "next.txt"); code != 0 {
		t.Fatalf("next command: %d %s", code, out)
	}
	code, out := c.run("reader", "--json", "lock", "list")
	if code != 0 {
		t.Fatalf("lock list: %d %s", code, out)
	}
	var live []struct {
		Key       string `json:"key"`
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(out), &live); err != nil {
		t.Fatalf("lock list: %v\n%s", err, out)
	}
	type ref struct{ key, request string }
	acquired := map[ref]bool{}
	b, err := os.ReadFile(filepath.Join(c.repo.Dir, ".git", "lockgate", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	torn := 0
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev struct {
			Action    string `json:"action"`
			Key       string `json:"key"`
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			// A process killed in the middle of its append can leave a
			// torn line (the kernel stops a write at a page boundary for
			// a fatal signal). The next append starts a line of its own,
			// readers skip the torn one, and the dead process's intent
			// makes the next command record the event whole.
			if strings.Contains(line, "}{") || !strings.HasPrefix(line, `{"id":`) {
				t.Fatalf("journal line %d: %v: %q: not a torn line of its own", i+1, err, line)
			}
			torn++
			continue
		}
		if ev.Action == "lock_acquire" {
			r := ref{ev.Key, ev.RequestID}
			if acquired[r] {
				t.Errorf("journal line %d: a second lock_acquire of %s by request %s", i+1, ev.Key, ev.RequestID)
			}
			acquired[r] = true
		}
	}
	left := 0
	for _, l := range live {
		if !strings.HasPrefix(l.Key, "killed-") {
			continue
		}
		left++
		if !acquired[ref{l.Key, l.RequestID}] {
			t.Errorf("lock %s (request %s) has no lock_acquire event", l.Key, l.RequestID)
		}
	}
	t.Logf("%d acquires killed, %d left a lock, %d torn journal lines", n*parallel, left, torn)
}

// TestRaceWorkflowBranch: 8 processes acquiring and releasing keys with
// auto_commit on → every event of the journal is on the workflow branch
// when they are done (none left for `workflow sync`), `git fsck` clean,
// and the user's index, work tree and HEAD byte for byte unchanged.
func TestRaceWorkflowBranch(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.repo.Write("a.txt", "a\n")
	c.repo.Commit("init")
	c.repo.Write("a.txt", "staged\n")
	c.repo.Git("add", "a.txt")
	c.repo.Write("a.txt", "unstaged\n")
	index := func() []byte {
		b, err := os.ReadFile(filepath.Join(c.repo.Dir, ".git", "index"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	before, head := index(), c.repo.Git("rev-parse", "HEAD")
	const workers = 8
	perWorker := rounds(t, 25)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker := fmt.Sprintf("agent-%d", w)
			for i := range perWorker {
				key := fmt.Sprintf("wf/%s/%d.txt", worker, i)
				for _, op := range []string{"acquire", "release"} {
					if code, out := c.run(worker, "lock", op, key); code != 0 {
						errs <- fmt.Errorf("%s %s %s: %d %s", worker, op, key, code, out)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Every event the journal holds is on the branch, and nothing else.
	var journalIDs []string
	journalBytes, err := os.ReadFile(filepath.Join(c.repo.Dir, ".git", "lockgate", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(journalBytes)), "\n") {
		var ev struct{ ID string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.ID == "" {
			t.Fatalf("journal line %q: %v", line, err)
		}
		journalIDs = append(journalIDs, workflow.EventPath(ev.ID))
	}
	if want := workers * perWorker * 2; len(journalIDs) != want {
		t.Fatalf("%d events in the journal, want %d", len(journalIDs), want)
	}
	// The branch's events are those of every commit it reaches.
	var onBranch []string
	for line := range strings.Lines(c.repo.Git("rev-list", "--objects", "lockgate/workflow")) {
		if _, path, _ := strings.Cut(strings.TrimSpace(line), " "); strings.HasSuffix(path, ".json") {
			onBranch = append(onBranch, path)
		}
	}
	slices.Sort(journalIDs)
	slices.Sort(onBranch)
	if !slices.Equal(onBranch, journalIDs) {
		t.Fatalf("the workflow branch holds %d events, the journal %d: they differ", len(onBranch), len(journalIDs))
	}
	c.repo.Git("fsck", "--strict", "--no-progress")
	if !bytes.Equal(index(), before) {
		t.Fatal("the user's index changed")
	}
	if got := c.repo.Git("rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD moved: %s, was %s", got, head)
	}
	if b, _ := os.ReadFile(filepath.Join(c.repo.Dir, "a.txt")); string(b) != "unstaged\n" {
		t.Fatalf("work tree changed: %q", b)
	}
	if st := c.repo.Git("status", "--porcelain"); st != "MM a.txt" {
		t.Fatalf("status %q, want MM a.txt", st)
	}
}

// TestRacePorts: 16 processes allocating ports at once never lease one port
// twice.
func TestRacePorts(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	outs := make([][]byte, 16)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	start := make(chan struct{})
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := c.cmd(fmt.Sprintf("agent-%d", i), "ports", "allocate", "--count", "4")
			<-start
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("process %d: %v", i, err)
			}
			outs[i] = out
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for i, out := range outs {
		ports := strings.Fields(string(out))
		if len(ports) != 4 {
			t.Fatalf("process %d leased %q, want 4 ports", i, ports)
		}
		for _, p := range ports {
			if prev, dup := seen[p]; dup {
				t.Fatalf("port %s leased to processes %d and %d", p, prev, i)
			}
			seen[p] = i
		}
	}
}
