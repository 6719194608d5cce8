package journal

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// rotatorEnv makes the test binary a process that appends events
// and rotates the journal, forever, writing the events of each segment
// it rotates to the file it names (a stand-in for the workflow branch)
// first, and the id of each event appended to stdout once appended.
const rotatorEnv = "LOCKGATE_JOURNAL_HELPER_ROTATE"

func appendAndRotate(path, branch string) int {
	j := Open(path)
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		ev := Event{Worker: "rotator", Action: ActionAcquire, Key: "k" + strconv.Itoa(i)}
		evs := []Event{ev}
		if err := j.Append(evs...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		fmt.Fprintln(out, evs[0].ID)
		out.Flush()
		_, err := j.Rotate(512, func(evs []Event) (bool, error) {
			f, err := os.OpenFile(branch, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			if err != nil {
				return false, err
			}
			defer f.Close()
			for _, ev := range evs {
				fmt.Fprintln(f, ev.ID)
			}
			return true, f.Sync()
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
}

// lockedBuffer is a bytes.Buffer a process writes to while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Len() int { return len(l.String()) }

// segmentIDs returns the ids of the lines of the file at path, failing
// on a line that is not an event, but the last one when torn is allowed
// (a write cut by the kill).
func segmentIDs(t *testing.T, path string, torn bool) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	lines := strings.SplitAfter(string(data), "\n")
	for i, line := range lines {
		if line == "" {
			continue
		}
		ev, err := ParseLine([]byte(line))
		if err != nil {
			if torn && i == len(lines)-1 && !strings.HasSuffix(line, "\n") {
				continue
			}
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		ids = append(ids, ev.ID)
	}
	return ids
}

// Processes appending while the journal is rotated under them lose no
// event and write none twice: each is in exactly one of the rotated
// segments and the current one, and the previous segment is the last
// one rotated.
func TestRotateWhileProcessesAppend(t *testing.T) {
	t.Parallel()
	const procs, each = 6, 300
	j := newJournal(t)
	var rotatedIDs []string
	var last []Event
	rotations := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			var seen []Event
			ok, err := j.Rotate(8<<10, func(evs []Event) (bool, error) {
				seen = evs
				return true, nil
			})
			if err != nil {
				t.Error(err)
				return
			}
			if ok {
				rotations++
				last = seen
				for _, ev := range seen {
					rotatedIDs = append(rotatedIDs, ev.ID)
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	runWorkers(t, j, procs, each)
	close(stop)
	wg.Wait()
	if t.Failed() {
		return
	}
	if rotations < 3 {
		t.Fatalf("%d rotations, want several", rotations)
	}
	count := map[string]int{}
	for _, id := range rotatedIDs {
		count[id]++
	}
	for _, id := range segmentIDs(t, j.Path(), false) {
		count[id]++
	}
	if len(count) != procs*each {
		t.Fatalf("%d distinct events, want %d", len(count), procs*each)
	}
	for id, n := range count {
		if n != 1 {
			t.Fatalf("event %s is %d times in the segments", id, n)
		}
	}
	prev := segmentIDs(t, j.PreviousPath(), false)
	if len(prev) != len(last) || len(prev) == 0 || prev[0] != last[0].ID {
		t.Fatalf("the previous segment holds %d events, the last rotation %d", len(prev), len(last))
	}
	// Readers read both segments: the previous one, then the current.
	all, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if want := len(prev) + len(segmentIDs(t, j.Path(), false)); len(all) != want {
		t.Fatalf("Read: %d events, want %d", len(all), want)
	}
}

// A journal with an event that is not on the branch is not rotated, and
// keeps it; one under the size is not even read.
func TestRotateKeepsEventsNotOnTheBranch(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	if ok, err := j.Rotate(1, func([]Event) (bool, error) { return true, nil }); ok || err != nil {
		t.Fatalf("no journal: %v, %v", ok, err)
	}
	evs := []Event{{Worker: "w", Action: "a"}, {Worker: "w", Action: "b"}}
	if err := j.Append(evs...); err != nil {
		t.Fatal(err)
	}
	asked := 0
	onBranch := func(got []Event) (bool, error) {
		asked++
		return len(got) == 2 && got[1].ID == evs[1].ID && false, nil
	}
	if ok, err := j.Rotate(1<<20, onBranch); ok || err != nil || asked != 0 {
		t.Fatalf("under the size: %v, %v, asked %d", ok, err, asked)
	}
	if ok, err := j.Rotate(1, onBranch); ok || err != nil || asked != 1 {
		t.Fatalf("not on the branch: %v, %v, asked %d", ok, err, asked)
	}
	if ids := segmentIDs(t, j.Path(), false); len(ids) != 2 || ids[1] != evs[1].ID {
		t.Fatalf("journal after a refused rotation: %v", ids)
	}
	if _, err := os.Stat(j.PreviousPath()); !os.IsNotExist(err) {
		t.Fatalf("a previous segment appeared: %v", err)
	}
	// The mark of a segment does not read another: after a rotation, an
	// offset of the old segment reads the new one from its start.
	_, end, head, err := j.ReadFrom(0, "")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := j.Rotate(1, func([]Event) (bool, error) { return true, nil }); !ok || err != nil {
		t.Fatalf("rotate: %v, %v", ok, err)
	}
	more := make([]Event, 10)
	for i := range more {
		more[i] = Event{Worker: "w", Action: "c" + strconv.Itoa(i)}
	}
	if err := j.Append(more...); err != nil {
		t.Fatal(err)
	}
	got, _, _, err := j.ReadFrom(end, head)
	if err != nil || len(got) != len(more) {
		t.Fatalf("ReadFrom the old segment's mark: %d events, %v; want %d", len(got), err, len(more))
	}
}

// A process killed (SIGKILL) at any moment while it appends and rotates
// leaves a journal whose every line is an event, but for a torn last
// one, and that, with what it had rotated, holds every event it had
// appended.
func TestRotateKilled(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	branch := j.Path() + ".branch"
	var appended []string
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for round := range 6 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), rotatorEnv+"="+branch, helperPathEnv+"="+j.Path())
		var out, errOut lockedBuffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Until it has appended (a busy machine starts it slowly), then
		// a while more.
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) && cmd.ProcessState == nil {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if errOut.Len() > 0 {
			t.Fatalf("round %d: %s", round, errOut.String())
		}
		appended = append(appended, strings.Fields(out.String())...)
		have := map[string]bool{}
		for _, path := range []string{branch, j.PreviousPath(), j.Path()} {
			var ids []string
			if path == branch {
				data, _ := os.ReadFile(branch)
				ids = strings.Fields(string(data))
			} else {
				ids = segmentIDs(t, path, path == j.Path())
			}
			for _, id := range ids {
				have[id] = true
			}
		}
		for _, id := range appended {
			if !have[id] {
				t.Fatalf("round %d: event %s was appended and is nowhere", round, id)
			}
		}
		if _, _, err := j.ReadSkipping(time.Time{}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if len(appended) == 0 {
		t.Fatal("no event appended")
	}
}
