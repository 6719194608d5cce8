package journal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func newJournal(t testing.TB) *Journal {
	t.Helper()
	return Open(filepath.Join(t.TempDir(), "git", "lockgate", "events.jsonl"))
}

func TestAppendRead(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 1, 24, 10, 0, 0, 123, time.FixedZone("CET", 3600))
	tests := []struct {
		name   string
		events []Event
		check  func(t *testing.T, got []Event, raw string)
	}{
		{
			name:   "fills id and timestamp",
			events: []Event{{Worker: "w", WorkerType: "agent", Action: ActionAcquire, Key: "src/a.py"}},
			check: func(t *testing.T, got []Event, raw string) {
				if len(got) != 1 || len(got[0].ID) != 32 || got[0].Timestamp.IsZero() {
					t.Errorf("got %+v", got)
				}
				if got[0].Timestamp.Location() != time.UTC {
					t.Errorf("timestamp not UTC: %v", got[0].Timestamp)
				}
			},
		},
		{
			name:   "keeps given id and converts timestamp to UTC",
			events: []Event{{ID: "x1", Timestamp: ts, Worker: "w", WorkerType: "human", Action: ActionRelease}},
			check: func(t *testing.T, got []Event, raw string) {
				want := `{"id":"x1","timestamp":"2026-01-24T09:00:00.000000123Z","worker":"w","worker_type":"human","action":"lock_release"}` + "\n"
				if raw != want {
					t.Errorf("raw = %q\nwant  %q", raw, want)
				}
				if !got[0].Timestamp.Equal(ts) {
					t.Errorf("timestamp %v", got[0].Timestamp)
				}
			},
		},
		{
			name: "all fields, one line each, order kept",
			events: []Event{
				{Worker: "agent-abc123", WorkerType: "agent", Action: ActionClaimedActivity, ActivityID: "WI-001-A1", Details: "Starting work"},
				{Worker: "agent-abc123", WorkerType: "agent", Action: ActionCompletedTask, ActivityID: "WI-001-A1", TaskID: "WI-001-A1-T1",
					Key: "activity:WI-001-A1", Session: "s1", Details: "line\nbreak <b> & \"quotes\""},
			},
			check: func(t *testing.T, got []Event, raw string) {
				if n := strings.Count(raw, "\n"); n != 2 {
					t.Errorf("%d lines in %q", n, raw)
				}
				if !strings.Contains(raw, `<b> & \"quotes\"`) {
					t.Errorf("HTML escaped or quotes lost: %q", raw)
				}
				if got[0].Action != ActionClaimedActivity || got[1].Details != "line\nbreak <b> & \"quotes\"" || got[1].Session != "s1" {
					t.Errorf("got %+v", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(t)
			if err := j.Append(tt.events...); err != nil {
				t.Fatal(err)
			}
			got, err := j.Read(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(j.Path())
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got, string(raw))
		})
	}
}

func TestAppendFillsCallerSlice(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	evs := []Event{{Worker: "w", Action: ActionAcquire}}
	if err := j.Append(evs...); err != nil {
		t.Fatal(err)
	}
	got, err := j.Read(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].ID == "" || evs[0].ID != got[0].ID || !evs[0].Timestamp.Equal(got[0].Timestamp) {
		t.Errorf("caller sees %+v, file has %+v", evs[0], got[0])
	}
}

func TestAppendRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []Event
		want   string
	}{
		{"no action", []Event{{Worker: "w"}}, "action is empty"},
		{"no worker", []Event{{Action: ActionAcquire}}, "worker is empty"},
		{"one bad event refuses all", []Event{{Worker: "w", Action: ActionAcquire}, {Worker: "w"}}, "event 1: action is empty"},
		{"year out of range", []Event{{Worker: "w", Action: ActionAcquire, Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}, "year outside of range"},
		{"too large", []Event{{Worker: "w", Action: ActionAcquire, Details: strings.Repeat("x", MaxLineBytes)}}, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(t)
			err := j.Append(tt.events...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), j.Path()) {
				t.Fatalf("Append error = %v, want %q", err, tt.want)
			}
			if _, err := os.Stat(j.Path()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("refused append wrote the file: %v", err)
			}
		})
	}
}

func TestAppendNothing(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	if err := j.Append(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(j.Path())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty Append created the directory: %v", err)
	}
}

func TestReadSince(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	base := time.Date(2026, 1, 24, 10, 0, 0, 0, time.UTC)
	var evs []Event
	for i := 0; i < 5; i++ {
		evs = append(evs, Event{Worker: "w", Action: ActionRefresh, Timestamp: base.Add(time.Duration(i) * time.Minute), Details: strconv.Itoa(i)})
	}
	// File order is kept even when it is not time order.
	evs[3], evs[4] = evs[4], evs[3]
	if err := j.Append(evs...); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		since time.Time
		want  string
	}{
		{"zero is all", time.Time{}, "01243"},
		{"inclusive", base.Add(2 * time.Minute), "243"},
		{"other zone", base.Add(3 * time.Minute).In(time.FixedZone("X", -5*3600)), "43"},
		{"future", base.Add(time.Hour), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := j.Read(tt.since)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, ev := range got {
				b.WriteString(ev.Details)
			}
			if b.String() != tt.want {
				t.Errorf("Read(%v) = %q, want %q", tt.since, b.String(), tt.want)
			}
		})
	}
}

func TestReadMissing(t *testing.T) {
	t.Parallel()
	got, err := newJournal(t).Read(time.Time{})
	if err != nil || len(got) != 0 {
		t.Fatalf("Read = %v, %v", got, err)
	}
}

const goodLine = `{"id":"a","timestamp":"2026-01-24T10:00:00Z","worker":"w","worker_type":"agent","action":"lock_acquire"}`

func TestScanCorrupt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		content  string
		wantN    int // events delivered before the error
		wantLine int // 0: no error
		wantMsg  string
	}{
		{"good", goodLine + "\n" + goodLine + "\n", 2, 0, ""},
		{"blank lines skipped", "\n" + goodLine + "\n  \n" + goodLine + "\r\n", 2, 0, ""},
		{"complete last line without newline", goodLine + "\n" + goodLine, 2, 0, ""},
		{"seed format without id", `{"timestamp":"2026-01-24T10:30:00Z","worker":"agent-abc123","worker_type":"agent","action":"completed_task","activity_id":"WI-001-A1","task_id":"WI-001-A1-T1","details":"Implemented feature X"}` + "\n", 1, 0, ""},
		{"unknown fields ignored", `{"timestamp":"2026-01-24T10:00:00Z","worker":"w","action":"x","future":[1,2]}` + "\n", 1, 0, ""},
		{"torn last line", goodLine + "\n" + goodLine[:40], 1, 2, "torn write"},
		{"torn middle line", goodLine + "\n" + goodLine[:40] + "\n" + goodLine + "\n", 1, 2, "unexpected end of JSON input"},
		{"not json", goodLine + "\nhello\n", 1, 2, "not a JSON object"},
		{"json array", "[1]\n", 0, 1, "not a JSON object"},
		{"null", "null\n", 0, 1, "not a JSON object"},
		{"no action", `{"timestamp":"2026-01-24T10:00:00Z","worker":"w"}` + "\n", 0, 1, "no action"},
		{"no timestamp", `{"worker":"w","action":"x"}` + "\n", 0, 1, "no timestamp"},
		{"bad timestamp", `{"timestamp":"yesterday","worker":"w","action":"x"}` + "\n", 0, 1, "cannot parse"},
		{"wrong type", `{"timestamp":"2026-01-24T10:00:00Z","worker":5,"action":"x"}` + "\n", 0, 1, "cannot unmarshal"},
		{"trailing garbage", goodLine + "x\n", 0, 1, "invalid character"},
		{"two objects on a line", goodLine + goodLine + "\n", 0, 1, "invalid character"},
		{"line too long", goodLine + "\n" + strings.Repeat(" ", MaxLineBytes+10) + "\n", 1, 2, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			j := newJournal(t)
			if err := os.MkdirAll(filepath.Dir(j.Path()), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(j.Path(), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			n := 0
			err := j.Scan(func(int, Event) error { n++; return nil })
			if n != tt.wantN {
				t.Errorf("%d events before the error, want %d", n, tt.wantN)
			}
			if tt.wantLine == 0 {
				if err != nil {
					t.Fatalf("Scan: %v", err)
				}
				return
			}
			var ce *CorruptLineError
			if !errors.As(err, &ce) {
				t.Fatalf("Scan error = %v (%T), want *CorruptLineError", err, err)
			}
			if ce.Line != tt.wantLine || ce.Path != j.Path() || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error = %v (line %d), want line %d and %q", err, ce.Line, tt.wantLine, tt.wantMsg)
			}
			if want := fmt.Sprintf("%s:%d: ", j.Path(), tt.wantLine); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
			if _, rerr := j.Read(time.Time{}); rerr == nil {
				t.Error("Read ignored the corrupt line")
			}
		})
	}
}

func TestScanStopsOnCallbackError(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	if err := j.Append(Event{Worker: "w", Action: "a"}, Event{Worker: "w", Action: "b"}); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	var lines []int
	err := j.Scan(func(line int, ev Event) error { lines = append(lines, line); return stop })
	if !errors.Is(err, stop) || len(lines) != 1 || lines[0] != 1 {
		t.Fatalf("Scan = %v, lines %v", err, lines)
	}
}

// TestAppendAfterTornLine: a crash left half a line; the next append must not
// glue its event to it, and the damage is reported, not hidden.
func TestAppendAfterTornLine(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	if err := j.Append(Event{Worker: "w", Action: "first"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"id":"torn","timest`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := j.Append(Event{Worker: "w", Action: "third"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	err = j.Scan(func(_ int, ev Event) error { got = append(got, ev.Action); return nil })
	var ce *CorruptLineError
	if !errors.As(err, &ce) || ce.Line != 2 {
		t.Fatalf("Scan error = %v, want corrupt line 2", err)
	}
	raw, _ := os.ReadFile(j.Path())
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("file has %d lines: %q", len(lines), raw)
	}
	if ev, err := ParseLine([]byte(lines[2])); err != nil || ev.Action != "third" {
		t.Errorf("event after the torn line: %+v, %v", ev, err)
	}
}

// TestAppendDoesNotParseFile shows that Append never reads the journal: a
// file full of garbage does not slow or stop it.
func TestAppendDoesNotParseFile(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	if err := os.MkdirAll(filepath.Dir(j.Path()), 0o755); err != nil {
		t.Fatal(err)
	}
	garbage := bytes.Repeat([]byte("not json at all\n"), 1<<16)
	if err := os.WriteFile(j.Path(), garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(Event{Worker: "w", Action: ActionAcquire}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(j.Path())
	if !bytes.HasPrefix(raw, garbage) || bytes.Count(raw, []byte("\n")) != 1<<16+1 {
		t.Error("existing content changed")
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := Open(j.Path()).Append(Event{Worker: fmt.Sprint("g", w), Action: ActionAcquire, Details: strconv.Itoa(i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	checkJournal(t, j, workers, each, "g")
}

// checkJournal verifies that j holds exactly workers*each valid events with
// unique ids, and that each worker's events appear in its own order.
func checkJournal(t testing.TB, j *Journal, workers, each int, prefix string) {
	t.Helper()
	seen := map[string]bool{}
	next := map[string]int{}
	n := 0
	err := j.Scan(func(line int, ev Event) error {
		n++
		if seen[ev.ID] {
			return fmt.Errorf("line %d: duplicate id %s", line, ev.ID)
		}
		seen[ev.ID] = true
		if !strings.HasPrefix(ev.Worker, prefix) {
			return fmt.Errorf("line %d: unexpected worker %q", line, ev.Worker)
		}
		if want := strconv.Itoa(next[ev.Worker]); ev.Details != want {
			return fmt.Errorf("line %d: worker %s event %s, want %s", line, ev.Worker, ev.Details, want)
		}
		next[ev.Worker]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != workers*each || len(next) != workers {
		t.Fatalf("%d events from %d workers, want %d from %d", n, len(next), workers*each, workers)
	}
	raw, err := os.ReadFile(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if lines := bytes.Count(raw, []byte("\n")); lines != workers*each || raw[len(raw)-1] != '\n' {
		t.Fatalf("%d newline-terminated lines, want %d", lines, workers*each)
	}
}

const (
	helperEnv      = "LOCKGATE_JOURNAL_HELPER"
	helperPathEnv  = "LOCKGATE_JOURNAL_HELPER_PATH"
	helperStartEnv = "LOCKGATE_JOURNAL_HELPER_START"
	helperCountEnv = "LOCKGATE_JOURNAL_HELPER_COUNT"
)

// TestMain lets the test binary act as one appending worker process for
// the multi-process test and benchmark (with helperEnv set).
func TestMain(m *testing.M) {
	if branch := os.Getenv(rotatorEnv); branch != "" {
		os.Exit(appendAndRotate(os.Getenv(helperPathEnv), branch))
	}
	if worker := os.Getenv(helperEnv); worker != "" {
		os.Exit(appendAsWorker(worker))
	}
	os.Exit(m.Run())
}

func appendAsWorker(worker string) int {
	count, _ := strconv.Atoi(os.Getenv(helperCountEnv))
	start, _ := strconv.ParseInt(os.Getenv(helperStartEnv), 10, 64)
	time.Sleep(time.Until(time.Unix(0, start)))
	j := Open(os.Getenv(helperPathEnv))
	for i := 0; i < count; i++ {
		ev := Event{Worker: worker, WorkerType: "agent", Action: ActionAcquire, Key: "k" + strconv.Itoa(i), Details: strconv.Itoa(i)}
		if err := j.Append(ev); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	return 0
}

// runWorkers starts procs appending processes of each events, all at once.
func runWorkers(t testing.TB, j *Journal, procs, each int) {
	t.Helper()
	start := time.Now().Add(500 * time.Millisecond).UnixNano()
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			helperEnv+"=proc"+strconv.Itoa(p),
			helperPathEnv+"="+j.Path(),
			helperStartEnv+"="+strconv.FormatInt(start, 10),
			helperCountEnv+"="+strconv.Itoa(each),
		)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, cmd.Stdout)
		}
	}
}

// TestMultiProcess: 16 processes × 200 appends lose and mangle nothing.
func TestMultiProcess(t *testing.T) {
	t.Parallel()
	const procs, each = 16, 200
	j := newJournal(t)
	runWorkers(t, j, procs, each)
	if t.Failed() {
		return
	}
	checkJournal(t, j, procs, each, "proc")
}

// TestAppendWritten: events appended without the flush are in the file,
// line for line as Append writes them, and Sync flushes (a missing journal
// has nothing to flush).
func TestAppendWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := Open(filepath.Join(dir, "sub", "events.jsonl"))
	if err := j.Sync(); err != nil {
		t.Fatalf("Sync of a missing journal: %v", err)
	}
	a := []Event{{ID: "1", Timestamp: time.Unix(1, 0), Worker: "w", WorkerType: "agent", Action: ActionAcquire, Key: "a"}}
	b := []Event{{ID: "2", Timestamp: time.Unix(2, 0), Worker: "w", WorkerType: "agent", Action: ActionRelease, Key: "a"}}
	if err := j.AppendWritten(a...); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(b...); err != nil {
		t.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	ref := Open(filepath.Join(dir, "ref.jsonl"))
	if err := ref.Append(append(a, b...)...); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(j.Path())
	want, _ := os.ReadFile(ref.Path())
	if string(got) != string(want) {
		t.Fatalf("AppendWritten wrote\n%s\nwant\n%s", got, want)
	}
	if err := j.AppendWritten(Event{Worker: "w", Action: "x", Details: strings.Repeat("x", MaxLineBytes)}); err == nil {
		t.Fatal("AppendWritten took an oversized event")
	}
}

// TestReadSkipping: lines that are not events are returned beside the
// events, which all still come back, whatever the damage and wherever.
func TestReadSkipping(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	if err := os.MkdirAll(filepath.Dir(j.Path()), 0o755); err != nil {
		t.Fatal(err)
	}
	content := goodLine + "\n" +
		`{"id":"torn","timestamp":"2026-11-23T1` + "\n" +
		goodLine + "\n" +
		strings.Repeat("x", MaxLineBytes+10) + "\n" +
		"\n" +
		goodLine + "\n" +
		`{"id":"end","timestamp":"2026`
	if err := os.WriteFile(j.Path(), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, bad, err := j.ReadSkipping(time.Time{})
	if err != nil {
		t.Fatalf("ReadSkipping: %v", err)
	}
	if len(evs) != 3 {
		t.Fatalf("%d events, want 3", len(evs))
	}
	var got []string
	for _, ce := range bad {
		if ce.Path != j.Path() {
			t.Errorf("line %d: path %q, want %q", ce.Line, ce.Path, j.Path())
		}
		got = append(got, fmt.Sprintf("%d:%v", ce.Line, ce.Torn))
	}
	if want := []string{"2:false", "4:false", "7:true"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("skipped lines %v, want %v", got, want)
	}
	if evs, _, err := j.ReadSkipping(time.Now().Add(time.Hour)); err != nil || len(evs) != 0 {
		t.Fatalf("since the future: %d events, %v", len(evs), err)
	}
}

func TestReadFrom(t *testing.T) {
	t.Parallel()
	j := newJournal(t)
	actions := func(evs []Event) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, ev.Action)
		}
		return out
	}
	if evs, end, head, err := j.ReadFrom(0, ""); err != nil || len(evs) != 0 || end != 0 || head != "" {
		t.Fatalf("no journal: %v, %d, %v", evs, end, err)
	}
	if err := j.Append(Event{Worker: "w", Action: "a"}, Event{Worker: "w", Action: "b"}); err != nil {
		t.Fatal(err)
	}
	evs, end, head, err := j.ReadFrom(0, "")
	if err != nil || !reflect.DeepEqual(actions(evs), []string{"a", "b"}) {
		t.Fatalf("ReadFrom(0) = %v, %v", actions(evs), err)
	}
	if fi, _ := os.Stat(j.Path()); end != fi.Size() {
		t.Fatalf("end %d, want the size %d", end, fi.Size())
	}
	// A corrupt line is skipped, and end stops before it (it is read
	// again, so that a reader from end sees it); a torn last line is read
	// past but not counted: once completed by the next append it is a
	// line of its own.
	f, err := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("garbage\n{\"id\":\"torn\",\"timest"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := j.Append(Event{Worker: "w", Action: "c"}); err != nil {
		t.Fatal(err)
	}
	evs, end2, head2, err := j.ReadFrom(end, head)
	if err != nil || !reflect.DeepEqual(actions(evs), []string{"c"}) {
		t.Fatalf("ReadFrom(%d) = %v, %v", end, actions(evs), err)
	}
	if head2 != head || end2 != end {
		t.Fatalf("the segment's name changed from %q to %q, or end moved past the corrupt line (%d, %d)", head, head2, end, end2)
	}
	if evs, again, _, err := j.ReadFrom(end2, head); err != nil || !reflect.DeepEqual(actions(evs), []string{"c"}) || again != end2 {
		t.Fatalf("ReadFrom(end) = %v, %d, %v", actions(evs), again, err)
	}
	// ReadAfter reads from the mark as ReadSkipping does: the corrupt
	// lines named by their line in the file.
	after, bad, decoded, ok, err := j.ReadAfter(end2, head)
	if err != nil || !ok || decoded != 1 || len(after) != 1 || len(bad) != 2 || bad[0].Line != 3 || bad[0].Path != j.Path() {
		t.Fatalf("ReadAfter = %v, %+v, %d, %v, %v", actions(after), bad, decoded, ok, err)
	}
	if _, _, _, ok, err := j.ReadAfter(end2, "another"); ok || err != nil {
		t.Fatalf("ReadAfter with another segment's mark: %v, %v", ok, err)
	}
	// An offset the journal cannot have given reads it all.
	for _, off := range []int64{end2 + 100, end - 3, -1} {
		if evs, _, _, err := j.ReadFrom(off, head); err != nil || !reflect.DeepEqual(actions(evs), []string{"a", "b", "c"}) {
			t.Errorf("ReadFrom(%d) = %v, %v; want every event", off, actions(evs), err)
		}
	}
	// A complete last line without its newline is read, and read again.
	f, err = os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(goodLine); err != nil {
		t.Fatal(err)
	}
	f.Close()
	evs, end3, _, err := j.ReadFrom(end2, head)
	if err != nil || len(evs) != 2 || end3 != end2 {
		t.Fatalf("a last line without newline: %v, end %d (want %d), %v", actions(evs), end3, end2, err)
	}
}

// DoneCommit reads the commit of a completed_package event from its field,
// and from the details of an event of an earlier version.
func TestDoneCommit(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"field", Event{Action: ActionDone, Commit: sha, Details: "commit " + sha + ": title"}, sha},
		{"field only", Event{Action: ActionDone, Commit: sha, Details: "title"}, sha},
		{"earlier version", Event{Action: ActionDone, Details: "commit " + sha + ": fix: the parser"}, sha},
		{"sha-256", Event{Action: ActionDone, Details: "commit " + strings.Repeat("ab", 32) + ": t"}, strings.Repeat("ab", 32)},
		{"no commit", Event{Action: ActionDone, Details: "commit messages: a title"}, ""},
		{"short", Event{Action: ActionDone, Details: "commit 0123abc: title"}, ""},
		{"title only", Event{Action: ActionDone, Details: "title"}, ""},
		{"another action", Event{Action: ActionClaim, Commit: sha}, ""},
		{"failed", Event{Action: ActionPackageFailed, Details: "commit " + sha + ": t"}, ""},
	}
	for _, tt := range tests {
		if got := tt.ev.DoneCommit(); got != tt.want {
			t.Errorf("%s: DoneCommit() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
