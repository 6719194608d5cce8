package locktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
)

// Environment of a helper process: what it does and which store it opens.
const (
	envMode  = "LOCKTEST_HELPER"
	envStore = "LOCKTEST_STORE"
	envKeys  = "LOCKTEST_KEYS"
)

// Lines a helper writes start with this, so that the test framework's own
// output (PASS, coverage notes) is told apart.
const linePrefix = "locktest: "

// IsHelper reports whether this process is a helper started by
// RunProcessRace or StartChurn.
func IsHelper() bool { return os.Getenv(envMode) != "" }

// HelperProcess is the body of a backend's helper test, which does nothing
// (it skips) unless the test binary was started by RunProcessRace or
// StartChurn:
//
//	func TestHelperProcess(t *testing.T) {
//		locktest.HelperProcess(t, func(store string) (locks.Store, error) {
//			return filestore.Open(store)
//		})
//	}
//
// open receives the Store string of the race or churn.
func HelperProcess(t *testing.T, open func(store string) (locks.Store, error)) {
	mode := os.Getenv(envMode)
	if mode == "" {
		t.Skip("helper process for locktest.RunProcessRace and StartChurn")
	}
	s, err := open(os.Getenv(envStore))
	if err != nil {
		say("err open: %v", err)
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	switch mode {
	case "race":
		helperRace(s)
	case "churn":
		keys, err := parseKeys(os.Getenv(envKeys))
		if err != nil {
			say("err %v", err)
			t.Fatal(err)
		}
		helperChurn(s, keys)
	default:
		t.Fatalf("unknown %s=%q", envMode, mode)
	}
}

// say writes one protocol line to stdout.
func say(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	line = strings.ReplaceAll(line, "\n", " ")
	fmt.Fprintf(os.Stdout, "%s%s\n", linePrefix, line)
}

// helperRace answers "go <offset> <quoted key>" lines from stdin with one
// Acquire each, at time.Now()+offset, and says what happened.
func helperRace(s locks.Store) {
	say("ready")
	in := bufio.NewScanner(os.Stdin)
	holder := fmt.Sprintf("proc-%d", os.Getpid())
	for in.Scan() {
		f := strings.SplitN(in.Text(), " ", 3)
		if len(f) != 3 || f[0] != "go" {
			say("err bad command %q", in.Text())
			continue
		}
		offset, err1 := time.ParseDuration(f[1])
		key, err2 := strconv.Unquote(f[2])
		if err := errors.Join(err1, err2); err != nil {
			say("err bad command %q: %v", in.Text(), err)
			continue
		}
		at := time.Now().Add(offset)
		stored, prev, err := s.Acquire(context.Background(), NewLock(key, holder, at, time.Hour), at)
		var held *locks.HeldError
		switch {
		case err == nil && prev != nil:
			say("won %s %s", stored.Token, prev.Token)
		case err == nil:
			say("won %s -", stored.Token)
		case errors.As(err, &held):
			say("held %s", held.Lock.Token)
		default:
			say("err %v", err)
		}
	}
}

// helperChurn acquires, refreshes and releases keys with very short TTLs
// until it is killed, so that a kill lands in the middle of every kind of
// mutation; a record left by a killed helper expires within 20ms.
func helperChurn(s locks.Store, keys []string) {
	ctx := context.Background()
	holder := fmt.Sprintf("churn-%d", os.Getpid())
	// Stop when the parent goes away (its end of stdin closes), so that a
	// crashed test leaves no churning orphan behind.
	var stop atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop.Store(true)
	}()
	say("ready")
	for !stop.Load() {
		for _, k := range keys {
			at := time.Now()
			rec, _, err := s.Acquire(ctx, NewLock(k, holder, at, 20*time.Millisecond), at)
			if err != nil {
				var held *locks.HeldError
				if !errors.As(err, &held) {
					say("err acquire %q: %v", k, err)
				}
				continue
			}
			// Losing the lock in between (it expired and another helper
			// took it over) is normal here; anything else is not.
			rec.ExpiresAt = rec.ExpiresAt.Add(10 * time.Millisecond)
			if _, err := s.Update(ctx, rec); err != nil && !lost(err) {
				say("err update %q: %v", k, err)
			}
			if err := s.Release(ctx, k, rec.Token); err != nil && !lost(err) {
				say("err release %q: %v", k, err)
			}
		}
	}
}

func lost(err error) bool {
	return errors.Is(err, locks.ErrTokenMismatch) || errors.Is(err, locks.ErrNotFound)
}

func parseKeys(s string) ([]string, error) {
	var keys []string
	for _, q := range strings.Split(s, "\n") {
		if q == "" {
			continue
		}
		k, err := strconv.Unquote(q)
		if err != nil {
			return nil, fmt.Errorf("bad %s entry %s: %w", envKeys, q, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func quoteKeys(keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strconv.Quote(k))
		b.WriteByte('\n')
	}
	return b.String()
}

// helper is one started helper process.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // protocol lines, closed at EOF
}

func startHelper(t *testing.T, test, mode, store string, env ...string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v=false", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), envMode+"="+mode, envStore+"="+store)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	h := &helper{cmd: cmd, stdin: stdin, lines: make(chan string, 64)}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), linePrefix); ok {
				h.lines <- line
			}
		}
		// Drain what the scanner could not take, so the child never blocks.
		_, _ = io.Copy(io.Discard, stdout)
	}()
	return h
}

// next returns the helper's next protocol line.
func (h *helper) next(timeout time.Duration) (string, error) {
	select {
	case line, ok := <-h.lines:
		if !ok {
			return "", fmt.Errorf("helper %d exited", h.cmd.Process.Pid)
		}
		return line, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("helper %d said nothing for %s", h.cmd.Process.Pid, timeout)
	}
}

func (h *helper) waitReady(t *testing.T) {
	t.Helper()
	line, err := h.next(time.Minute)
	if err != nil || line != "ready" {
		t.Fatalf("helper did not start: %q, %v (does %s call locktest.HelperProcess?)", line, err, h.cmd.Args[1])
	}
}

// ProcessRace describes a race between OS processes for one key.
type ProcessRace struct {
	// Procs is the number of helper processes (default 16).
	Procs int
	// Rounds is the number of races (default 1); each races on its own key,
	// Key + "#" + round.
	Rounds int
	// Key is the prefix of the keys raced on.
	Key string
	// Takeover: before each round, Setup's store gets a record of the key
	// that has expired by the time the helpers race for it.
	Takeover bool
	// Test names the test function that calls HelperProcess.
	Test string
	// Store is handed to HelperProcess's open in each helper.
	Store string
}

// RunProcessRace starts race.Procs copies of the test binary and has them
// acquire one key at the same moment, race.Rounds times; it fails t unless
// every round has exactly one winner and every loser saw the winner as the
// holder. s, a store on the same data as the helpers', sets up takeover
// rounds and checks the winner's record.
func RunProcessRace(t *testing.T, s locks.Store, race ProcessRace) {
	t.Helper()
	procs := orDefault(race.Procs, 16)
	rounds := orDefault(race.Rounds, 1)
	helpers := make([]*helper, procs)
	for i := range helpers {
		helpers[i] = startHelper(t, race.Test, "race", race.Store)
	}
	defer func() {
		for _, h := range helpers {
			_ = h.stdin.Close()
		}
		for _, h := range helpers {
			for range h.lines {
			}
			if err := h.cmd.Wait(); err != nil {
				t.Errorf("helper %d: %v", h.cmd.Process.Pid, err)
			}
		}
	}()
	for _, h := range helpers {
		h.waitReady(t)
	}
	for round := range rounds {
		key := fmt.Sprintf("%s#%d", race.Key, round)
		offset := time.Duration(0)
		var old locks.Lock
		if race.Takeover {
			t0 := time.Now()
			old = mustAcquire(t, s, NewLock(key, "expired", t0, time.Minute), t0)
			offset = 2 * time.Minute
		}
		cmd := fmt.Sprintf("go %s %s\n", offset, strconv.Quote(key))
		// Write to all helpers first, then read: they are all blocked in a
		// read, so they start within microseconds of each other.
		for _, h := range helpers {
			if _, err := io.WriteString(h.stdin, cmd); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		var won, held []string
		for _, h := range helpers {
			line, err := h.next(time.Minute)
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			switch f := strings.Fields(line); {
			case len(f) == 3 && f[0] == "won":
				won = append(won, f[1])
				if race.Takeover && f[2] != old.Token {
					t.Errorf("round %d: winner replaced %s, not the expired record %s", round, f[2], old.Token)
				}
				if !race.Takeover && f[2] != "-" {
					t.Errorf("round %d: winner on a free key replaced %s", round, f[2])
				}
			case len(f) == 2 && f[0] == "held":
				held = append(held, f[1])
			default:
				t.Fatalf("round %d: helper %d: %s", round, h.cmd.Process.Pid, line)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d of %d processes won %q, want exactly 1", round, len(won), procs, key)
		}
		for _, tok := range held {
			if tok != won[0] {
				t.Fatalf("round %d: a loser saw holder token %s, the winner has %s", round, tok, won[0])
			}
		}
		got, err := s.Get(context.Background(), key)
		if err != nil || got.Token != won[0] {
			t.Fatalf("round %d: stored record %+v, %v; want the winner's (token %s)", round, got, err, won[0])
		}
	}
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Churn is a helper process looping over Acquire, Update and Release.
type Churn struct {
	h    *helper
	mu   sync.Mutex
	errs []string
	done chan struct{}
}

// StartChurn starts a helper process (running the test named test) that
// acquires, refreshes and releases keys, with TTLs of a few milliseconds,
// until Kill. It returns once the helper has opened its store.
func StartChurn(t *testing.T, test, store string, keys []string) *Churn {
	t.Helper()
	h := startHelper(t, test, "churn", store, envKeys+"="+quoteKeys(keys))
	h.waitReady(t)
	c := &Churn{h: h, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for line := range h.lines {
			c.mu.Lock()
			c.errs = append(c.errs, line)
			c.mu.Unlock()
		}
	}()
	return c
}

// Kill kills the helper with SIGKILL (where there are signals) and waits for
// it. It returns the errors the helper reported before it died.
func (c *Churn) Kill() error {
	_ = c.h.cmd.Process.Kill()
	<-c.done // EOF on its stdout: everything it said has been read
	_ = c.h.cmd.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) > 0 {
		return errors.New(strings.Join(c.errs, "\n"))
	}
	return nil
}

// KillChurn configures RunKillChurn.
type KillChurn struct {
	// Test is the helper test that runs HelperProcess; Store names the
	// store to it (as in ProcessRace).
	Test, Store string
	// Kills is how many pairs of helpers are killed.
	Kills int
}

// RunKillChurn kills processes with SIGKILL in the middle of acquiring,
// refreshing and releasing, two at a time so that kills also land in
// takeovers of the other's expired locks. After every kill each record s
// lists is whole and each key reads back or is absent; at the end every
// key can be taken and given back: no half-written record, no lock of the
// store left behind by the dead.
func RunKillChurn(t *testing.T, s locks.Store, k KillChurn) {
	t.Helper()
	ctx := context.Background()
	keys := []string{"src/a.go", "src/**", "task:TASK-001", "docs/" + strings.Repeat("Long", 60) + ".md"}
	for i := range k.Kills {
		a := StartChurn(t, k.Test, k.Store, keys)
		b := StartChurn(t, k.Test, k.Store, keys)
		time.Sleep(time.Duration(2+rand.IntN(30)) * time.Millisecond)
		if err := a.Kill(); err != nil {
			t.Fatalf("kill %d: helper reported: %v", i, err)
		}
		time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
		if err := b.Kill(); err != nil {
			t.Fatalf("kill %d: helper reported: %v", i, err)
		}
		entries, err := s.List(ctx)
		if err != nil {
			t.Fatalf("kill %d: List: %v", i, err)
		}
		for _, e := range entries {
			if e.Err != nil {
				t.Fatalf("kill %d: %s: %v", i, e.Name, e.Err)
			}
		}
		for _, key := range keys {
			if _, err := s.Get(ctx, key); err != nil && !errors.Is(err, locks.ErrNotFound) {
				t.Fatalf("kill %d: Get(%q): %v", i, key, err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	later := time.Now().Add(time.Hour)
	for _, key := range keys {
		rec, _, err := s.Acquire(ctx, NewLock(key, "survivor", later, time.Hour), later)
		if err != nil {
			t.Fatalf("Acquire(%q) after the kills: %v", key, err)
		}
		if err := s.Release(ctx, key, rec.Token); err != nil {
			t.Fatalf("Release(%q) after the kills: %v", key, err)
		}
	}
}
