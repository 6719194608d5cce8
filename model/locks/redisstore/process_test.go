package redisstore

import (
	"bufio"
	"context"
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
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/scope"
)

// Worker processes: the test binary run again with REDISSTORE_WORKER set
// runs one worker instead of the tests. Processes, not goroutines: that is
// how lockgate's users collide, each with its own connections.
const (
	envWorker = "REDISSTORE_WORKER"
	envURL    = "REDISSTORE_URL"
	envPrefix = "REDISSTORE_PREFIX"
	envID     = "REDISSTORE_ID"
	envDir    = "REDISSTORE_DIR"
	envN      = "REDISSTORE_N"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envWorker); mode != "" {
		if err := worker(mode); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func worker(mode string) error {
	n, _ := strconv.Atoi(os.Getenv(envN))
	opts := Options{Prefix: os.Getenv(envPrefix)}
	if mode == "rate" {
		opts.RateLimitPerMin, opts.RateLimitWindow = 10, time.Minute
	}
	s, err := Open(context.Background(), os.Getenv(envURL), opts)
	if err != nil {
		return err
	}
	defer s.Close()
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	in := bufio.NewReader(os.Stdin)
	switch mode {
	case "machine":
		return machine(s, os.Getenv(envID), os.Getenv(envDir), in, out)
	case "rate":
		// Start together: the parent writes a line to every worker at once.
		if _, err := in.ReadString('\n'); err != nil {
			return fmt.Errorf("waiting for go: %w", err)
		}
		return rateWorker(s, os.Getenv(envID), n, out)
	case "contend":
		if _, err := in.ReadString('\n'); err != nil {
			return fmt.Errorf("waiting for go: %w", err)
		}
		return contender(s, os.Getenv(envID), os.Getenv(envDir), n, out)
	}
	return fmt.Errorf("unknown worker %q", mode)
}

// raceKeys are the keys the machine workers race for.
func raceKeys() []string {
	keys := make([]string, 200)
	for i := range keys {
		switch i % 4 {
		case 0:
			keys[i] = fmt.Sprintf("src/pkg%02d/file%03d.go", i%10, i)
		case 1:
			keys[i] = fmt.Sprintf("task:TASK-%03d", i)
		case 2:
			keys[i] = fmt.Sprintf("api:GET /v1/r%03d", i)
		default:
			keys[i] = fmt.Sprintf("db:schema:t%03d", i)
		}
	}
	return keys
}

// machine is one worker on its own "machine". For each quoted key it reads
// it tries to take the key through a Manager, without waiting, and answers
// "won <fence>" or "held". While it holds a key it owns a marker file
// created with O_EXCL: finding the marker there means two holders at once.
func machine(s *Store, id, dir string, in *bufio.Reader, out *bufio.Writer) error {
	m := &locks.Manager{Store: s, Host: id, PID: os.Getpid()}
	me := locks.Owner{Holder: id, HolderType: scope.WorkerAgent, Session: id}
	ctx := context.Background()
	fmt.Fprintln(out, "ready")
	out.Flush()
	for {
		line, err := in.ReadString('\n')
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		k, err := strconv.Unquote(strings.TrimSpace(line))
		if err != nil {
			return fmt.Errorf("bad command %q: %w", line, err)
		}
		res, err := m.Acquire(ctx, locks.Request{Keys: []string{k}, Owner: me, TTL: time.Minute})
		if errors.As(err, new(*locks.HeldError)) {
			fmt.Fprintln(out, "held")
			out.Flush()
			continue
		}
		if err != nil {
			return err
		}
		marker := filepath.Join(dir, fmt.Sprintf("%x", k))
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("VIOLATION: two holders of %s: %w", k, err)
		}
		f.Close()
		// Hold it a moment, as a real holder would.
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		if err := os.Remove(marker); err != nil {
			return err
		}
		if _, err := m.Release(ctx, []string{k}, me, false); err != nil {
			return err
		}
		fmt.Fprintln(out, "won", res[0].Lock.Fence)
		out.Flush()
	}
}

// rateWorker makes n acquisitions of its own keys in the session both rate
// workers share and prints "ok" or "rate" for each.
func rateWorker(s *Store, id string, n int, out io.Writer) error {
	ctx := context.Background()
	for i := range n {
		now := time.Now()
		rec := locktest.NewLock(fmt.Sprintf("task:%s-%d", id, i), id, now, time.Hour)
		rec.Session = "shared-session"
		_, _, err := s.Acquire(ctx, rec, now)
		var limited *locks.RateLimitedError
		switch {
		case err == nil:
			fmt.Fprintln(out, "ok")
		case errors.As(err, &limited):
			fmt.Fprintln(out, "rate")
		default:
			return err
		}
	}
	return nil
}

// runWorkers starts len(ids) workers, lets them go at once, and returns
// their output lines, failing t if one fails.
func runWorkers(t *testing.T, mode string, ids []string, env ...string) [][]string {
	t.Helper()
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   strings.Builder
	}
	procs := make([]*proc, len(ids))
	for i, id := range ids {
		p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		p.cmd.Env = append(os.Environ(), append(env, envWorker+"="+mode, envID+"="+id)...)
		p.cmd.Stdout, p.cmd.Stderr = &p.out, os.Stderr
		var err error
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	for _, p := range procs {
		_, _ = io.WriteString(p.stdin, "go\n")
	}
	out := make([][]string, len(procs))
	for i, p := range procs {
		err := p.cmd.Wait()
		out[i] = strings.Split(strings.TrimSpace(p.out.String()), "\n")
		if err != nil {
			t.Fatalf("worker %s: %v\n%s", ids[i], err, p.out.String())
		}
	}
	return out
}

// machineProc is a running machine worker.
type machineProc struct {
	id    string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

func startMachine(t *testing.T, id string, env []string) *machineProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, envWorker+"=machine", envID+"="+id)...)
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
		t.Fatal(err)
	}
	p := &machineProc{id: id, cmd: cmd, stdin: stdin, lines: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	if got := p.next(t); got != "ready" {
		t.Fatalf("machine %s: %q", id, got)
	}
	return p
}

func (p *machineProc) next(t *testing.T) string {
	t.Helper()
	if !p.lines.Scan() {
		_ = p.cmd.Wait()
		t.Fatalf("machine %s exited: %v", p.id, p.lines.Err())
	}
	line := p.lines.Text()
	if strings.HasPrefix(line, "ERROR") {
		t.Fatalf("machine %s: %s", p.id, line)
	}
	return line
}

// Two processes standing for two machines (their own worker ids, hosts,
// connections) race over 200 keys: never two holders of a key (a marker
// file each holder creates with O_EXCL), and each key's fences are unique
// across both and grow within each. In even rounds both are handed the
// same key at the same moment (they block on a pipe read, so they start
// within microseconds), in odd rounds each goes in its own order.
func TestTwoMachinesRace(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	prefix := freshPrefix(t)
	env := []string{envURL + "=" + srv.URL(), envPrefix + "=" + prefix, envDir + "=" + t.TempDir()}
	rounds := 6
	if testing.Short() {
		rounds = 2
	}
	procs := []*machineProc{
		startMachine(t, "agent-a@machine-1", env),
		startMachine(t, "agent-b@machine-2", env),
	}
	fences := map[string][]uint64{} // key -> fences of all its grants
	last := make([]map[string]uint64, len(procs))
	for i := range last {
		last[i] = map[string]uint64{}
	}
	wins := make([]int, len(procs))
	sameStep, contended := 0, 0
	for round := range rounds {
		orders := make([][]string, len(procs))
		for i := range orders {
			orders[i] = raceKeys()
			if round%2 == 1 {
				rand.Shuffle(len(orders[i]), func(a, b int) { orders[i][a], orders[i][b] = orders[i][b], orders[i][a] })
			}
		}
		for j := range orders[0] {
			for i, p := range procs {
				if _, err := fmt.Fprintln(p.stdin, strconv.Quote(orders[i][j])); err != nil {
					t.Fatal(err)
				}
			}
			held := 0
			for i, p := range procs {
				line := p.next(t)
				if line == "held" {
					held++
					continue
				}
				f := strings.Fields(line)
				fence, err := strconv.ParseUint(f[len(f)-1], 10, 64)
				if len(f) != 2 || f[0] != "won" || err != nil {
					t.Fatalf("machine %s: %q", p.id, line)
				}
				key := orders[i][j]
				if fence <= last[i][key] {
					t.Fatalf("machine %s: fence of %s went from %d to %d", p.id, key, last[i][key], fence)
				}
				last[i][key] = fence
				fences[key] = append(fences[key], fence)
				wins[i]++
			}
			if round%2 == 0 {
				sameStep++
				if held > 0 {
					contended++
				}
				if held == len(procs) {
					t.Fatalf("round %d: nobody won %s", round, orders[0][j])
				}
			}
		}
	}
	for key, fs := range fences {
		slices.Sort(fs)
		if len(slices.Compact(slices.Clone(fs))) != len(fs) {
			t.Fatalf("%s: a fence was granted twice: %v", key, fs)
		}
	}
	t.Logf("grants per machine %v; %d of %d same-key steps contended", wins, contended, sameStep)
	if len(fences) != 200 {
		t.Fatalf("%d keys were ever granted, want all 200", len(fences))
	}
	// Both started within microseconds, and a grant takes two round trips
	// and a hold: most same-key steps must have been real races.
	if contended < sameStep/2 {
		t.Errorf("only %d of %d same-key steps were contended: the race tested little", contended, sameStep)
	}
	s := open(t, srv.URL(), Options{Prefix: prefix})
	if entries, err := s.List(context.Background()); err != nil || len(entries) != 0 {
		t.Fatalf("locks left after the race: %d, %v", len(entries), err)
	}
}

// TestHelperProcess is the body of locktest's helper processes.
func TestHelperProcess(t *testing.T) {
	locktest.HelperProcess(t, func(store string) (locks.Store, error) {
		url, prefix, _ := strings.Cut(store, " ")
		return Open(context.Background(), url, Options{Prefix: prefix})
	})
}

func TestProcessRace(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts 16 processes")
	}
	srv := redistest.Start(t, redistest.Options{})
	prefix := freshPrefix(t)
	locktest.RunProcessRace(t, open(t, srv.URL(), Options{Prefix: prefix}), locktest.ProcessRace{
		Procs: 16, Rounds: 50, Key: "src/race.go", Test: "TestHelperProcess", Store: srv.URL() + " " + prefix,
	})
}

func TestProcessTakeoverRace(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts 16 processes")
	}
	srv := redistest.Start(t, redistest.Options{})
	prefix := freshPrefix(t)
	locktest.RunProcessRace(t, open(t, srv.URL(), Options{Prefix: prefix}), locktest.ProcessRace{
		Procs: 16, Rounds: 20, Key: "task:TASK-001", Takeover: true, Test: "TestHelperProcess", Store: srv.URL() + " " + prefix,
	})
}

// TestSIGKILL: each mutation is one script, so a process killed in the
// middle of one leaves no record half written.
func TestSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and kills 20 processes")
	}
	srv := redistest.Start(t, redistest.Options{})
	prefix := freshPrefix(t)
	locktest.RunKillChurn(t, open(t, srv.URL(), Options{Prefix: prefix}), locktest.KillChurn{Test: "TestHelperProcess", Store: srv.URL() + " " + prefix, Kills: 10})
}

// Two processes of one session share its rate limit (10 per minute).
func TestRateLimitSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	prefix := freshPrefix(t)
	out := runWorkers(t, "rate", []string{"p1", "p2"}, envURL+"="+srv.URL(), envPrefix+"="+prefix, envN+"=8")
	var ok, limited int
	var mu sync.Mutex
	for _, lines := range out {
		for _, l := range lines {
			mu.Lock()
			switch l {
			case "ok":
				ok++
			case "rate":
				limited++
			default:
				t.Fatalf("worker said %q", l)
			}
			mu.Unlock()
		}
	}
	if ok != 10 || limited != 6 {
		t.Fatalf("%d granted, %d rate limited; want 10 and 6", ok, limited)
	}
}
