package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// workEvent is the part of a `lockgate log --json` event the work tests
// read.
type workEvent struct {
	Timestamp time.Time `json:"timestamp"`
	Worker    string    `json:"worker"`
	Session   string    `json:"session"`
	Action    string    `json:"action"`
	TaskID    string    `json:"task_id"`
	Details   string    `json:"details"`
}

func (c *cliRepo) events() []workEvent {
	c.t.Helper()
	code, out := c.runOut("admin", "log", "--json")
	if code != 0 {
		c.t.Fatalf("lockgate log --json exited %d: %s", code, out)
	}
	var evs []workEvent
	if err := json.Unmarshal([]byte(out), &evs); err != nil {
		c.t.Fatalf("lockgate log --json: %v\n%s", err, out)
	}
	return evs
}

// runOut runs lockgate and returns its exit code and stdout alone.
func (c *cliRepo) runOut(worker string, args ...string) (int, string) {
	cmd := c.cmd(worker, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out) + stderr.String()
	default:
		c.t.Fatalf("run lockgate: %v", err)
		return -1, ""
	}
}

func (c *cliRepo) writePackages(yaml string) {
	c.t.Helper()
	if err := os.WriteFile(filepath.Join(c.repo.Dir, "work-packages.yaml"), []byte(yaml), 0o644); err != nil {
		c.t.Fatal(err)
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-q", "-m", "packages")
}

// startWork starts `lockgate work` and returns it with its session, read
// from its first line, and the rest of its stderr as it comes.
func (c *cliRepo) startWork(worker string, args ...string) (*exec.Cmd, string, <-chan string) {
	c.t.Helper()
	cmd := c.cmd(worker, append([]string{"work"}, args...)...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 1000)
	sc := bufio.NewScanner(errPipe)
	session := ""
	sessionRE := regexp.MustCompile(`^lockgate work: worker .*, session ([^,]+),`)
	for sc.Scan() {
		if m := sessionRE.FindStringSubmatch(sc.Text()); m != nil {
			session = m[1]
			break
		}
	}
	if session == "" {
		c.t.Fatalf("lockgate work printed no session")
	}
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, session, lines
}

// waitFile waits for path to exist (a CMD signalling it started).
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits for process pid to be gone (or a zombie, which the
// machine's init may take its time to reap).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func alive(pid int) bool {
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// pid (comm) STATE ...: comm may hold spaces and parentheses.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
	}
	return syscall.Kill(pid, 0) == nil
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pid
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestWorkFleet: three `lockgate work` processes drain one queue of a
// clone: every package is done exactly once, CMD runs once per package,
// and no package is claimed before its dependencies are done.
func TestWorkFleet(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	var yaml strings.Builder
	yaml.WriteString("packages:\n")
	const n = 12
	deps := map[string][]string{}
	for i := range n {
		id := fmt.Sprintf("P%02d", i)
		fmt.Fprintf(&yaml, "  - id: %s\n    title: package %d\n    priority: %d\n    locks:\n      files: [src/f%02d.go, shared/s%d.go]\n", id, i, i%3, i, i%4)
		if i%4 == 3 {
			dep := fmt.Sprintf("P%02d", i-2)
			deps[id] = []string{dep}
			fmt.Fprintf(&yaml, "    depends_on: [%s]\n", dep)
		}
	}
	c.writePackages(yaml.String())
	runs := filepath.Join(t.TempDir(), "runs.txt")
	agent := `echo "$LOCKGATE_PACKAGE $LOCKGATE_SESSION" >> "$RUNS"; sleep 0.05`

	var wg sync.WaitGroup
	codes := make([]int, 3)
	outs := make([]string, 3)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := c.cmd(fmt.Sprintf("w%d", i), "work", "--", "sh", "-c", agent)
			cmd.Env = append(cmd.Env, "RUNS="+runs)
			out, err := cmd.CombinedOutput()
			codes[i], outs[i] = exitCode(err), string(out)
		}()
	}
	wg.Wait()
	for i, code := range codes {
		if code != 0 {
			t.Fatalf("loop %d exited %d:\n%s", i, code, outs[i])
		}
	}

	data, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	ran := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		ran[strings.Fields(line)[0]]++
	}
	done := map[string]int{}
	doneAt := map[string]time.Time{}
	evs := c.events()
	for _, ev := range evs {
		switch ev.Action {
		case "completed_package":
			done[ev.TaskID]++
			doneAt[ev.TaskID] = ev.Timestamp
		case "took_over_package", "released_package", "failed_package":
			t.Errorf("unexpected %s of %s", ev.Action, ev.TaskID)
		}
	}
	// The events' times are when the store changed: a claim made after
	// reading a dependency done is later than its completion.
	for _, ev := range evs {
		if ev.Action != "claimed_package" {
			continue
		}
		for _, dep := range deps[ev.TaskID] {
			if at, ok := doneAt[dep]; !ok || ev.Timestamp.Before(at) {
				t.Errorf("%s claimed at %s, before its dependency %s was done (%s)", ev.TaskID, ev.Timestamp, dep, at)
			}
		}
	}
	for i := range n {
		id := fmt.Sprintf("P%02d", i)
		if done[id] != 1 || ran[id] != 1 {
			t.Errorf("%s: done %d times, CMD ran %d times; want 1 and 1\n%s", id, done[id], ran[id], strings.Join(outs, "\n"))
		}
	}
	code, out := c.runOut("admin", "packages", "--json")
	if code != 0 || !strings.Contains(out, `"drained": true`) {
		t.Fatalf("packages --json exited %d, not drained:\n%s", code, out)
	}
}

// TestWorkKilled: a `lockgate work` killed with SIGKILL while its CMD
// runs: CMD is stopped with it (Linux), the claim comes back when it
// expires, another loop takes it over, and the dead loop's late `done`,
// run by hand as its session, is refused.
func TestWorkKilled(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.writePackages("packages:\n  - id: WP-1\n    title: one\n    locks:\n      files: [src/a.go]\n")
	dir := t.TempDir()
	started, pidFile, release := filepath.Join(dir, "started"), filepath.Join(dir, "pid"), filepath.Join(dir, "go")

	first, session, _ := c.startWork("w1", "--ttl", "2s", "--", "sh", "-c", `echo $$ > "$1"; touch "$2"; exec sleep 300`, "sh", pidFile, started)
	waitFile(t, started)
	pid := readPid(t, pidFile)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if runtime.GOOS == "linux" {
		waitGone(t, pid) // told to stop when lockgate died, not left working unclaimed
	}

	// The second loop's CMD waits for the test: meanwhile the package is
	// its, and the dead loop's late done is refused.
	second, _, lines := c.startWork("w2", "--ttl", "2s", "--", "sh", "-c", `touch "$1"; until [ -e "$2" ]; do sleep 0.05; done`, "sh", started+"2", release)
	waitFile(t, started+"2")
	code, out := c.run("w1", "--session", session, "done", "WP-1")
	if code != 6 || !strings.Contains(out, "w2") {
		t.Fatalf("late done of the dead loop exited %d, want 6 naming w2:\n%s", code, out)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr []string
	for l := range lines {
		stderr = append(stderr, l)
	}
	if err := second.Wait(); err != nil {
		t.Fatalf("second loop: %v\n%s", err, strings.Join(stderr, "\n"))
	}
	var took, done int
	for _, ev := range c.events() {
		switch {
		case ev.Action == "took_over_package" && ev.TaskID == "WP-1":
			took++
			if !strings.Contains(ev.Details, "session "+session) {
				t.Errorf("takeover names %q, want the dead loop's session %s", ev.Details, session)
			}
		case ev.Action == "completed_package":
			done++
			if ev.Worker != "w2" {
				t.Errorf("completed by %s, want w2", ev.Worker)
			}
		}
	}
	if took != 1 || done != 1 {
		t.Fatalf("%d takeovers and %d completions, want 1 and 1", took, done)
	}
}

// TestWorkSignal: SIGTERM to `lockgate work` stops CMD (and what it
// started), gives the package back and exits 130.
func TestWorkSignal(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.writePackages("packages:\n  - id: WP-1\n    title: one\n    locks:\n      files: [src/a.go]\n")
	dir := t.TempDir()
	started, pidFile := filepath.Join(dir, "started"), filepath.Join(dir, "pid")
	// CMD's child ignores nothing: the group's SIGTERM stops it too.
	loop, _, lines := c.startWork("w1", "--", "sh", "-c", `sleep 300 & echo $! > "$1"; touch "$2"; wait`, "sh", pidFile, started)
	waitFile(t, started)
	grandchild := readPid(t, pidFile)
	if err := loop.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var stderr []string
	for l := range lines {
		stderr = append(stderr, l)
	}
	if code := exitCode(loop.Wait()); code != 130 {
		t.Fatalf("lockgate work exited %d, want 130:\n%s", code, strings.Join(stderr, "\n"))
	}
	waitGone(t, grandchild)
	if !strings.Contains(strings.Join(stderr, "\n"), "gave WP-1 back: interrupted") {
		t.Errorf("stderr does not say WP-1 was given back:\n%s", strings.Join(stderr, "\n"))
	}
	code, out := c.runOut("admin", "packages", "--json")
	if code != 0 || !regexp.MustCompile(`"id": "WP-1",[^}]*"state": "ready"`).MatchString(out) {
		t.Fatalf("packages --json exited %d, WP-1 not ready:\n%s", code, out)
	}
	released := 0
	for _, ev := range c.events() {
		if ev.Action == "released_package" && ev.TaskID == "WP-1" {
			released++
		}
	}
	if released != 1 {
		t.Fatalf("%d released_package events, want 1", released)
	}
}
