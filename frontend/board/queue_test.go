package board

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

func at(d time.Duration) *time.Time {
	t := t0.Add(d)
	return &t
}

// queueSnap is a board with one lock and a queue in every state.
func queueSnap() Snapshot {
	done := lock("task:WP-0", "erin", -time.Hour, 0)
	done.Action, done.ExpiresAt = session.DoneAction, locks.Never
	return Snapshot{Store: "the file store", Now: t0, StaleAfter: time.Hour, QueueFile: "work-packages.yaml",
		Locks: []locks.Entry{lock("src/a.go", "bob", -time.Minute, time.Hour), done},
		Queue: &queue.Queue{Packages: []queue.PackageStatus{
			{ID: "WP-0", State: queue.PackageDone, Holder: "erin", FinishedAt: at(-time.Hour)},
			{ID: "WP-1", Title: "the parser", State: queue.PackageClaimed, Holder: "bob", Since: at(-time.Hour), Until: at(2 * time.Hour)},
			{ID: "WP-2", Title: "the lexer", State: queue.PackageClaimed, Holder: "carol", Since: at(-time.Hour), Until: at(10 * time.Minute)},
			{ID: "WP-3", State: queue.PackageReady, WaitsFor: []string{"WP-1"},
				HeldBy: []service.LockView{{Key: "src/a.go", Holder: "bob"}}},
			{ID: "WP-4", State: queue.PackageReady, Holder: "frank", Expired: true},
			{ID: "WP-5", State: queue.PackageFailed, Holder: "dave", Reason: "tests red", FinishedAt: at(-5 * time.Minute)},
			{ID: "WP-6", State: queue.PackageFailed, Holder: "dave", Reason: "old", FinishedAt: at(-50 * time.Minute)},
			{ID: "WP-7", State: queue.PackageClaimed, Unreadable: "not JSON"},
		}},
	}
}

// The queue section: counts by state, then unreadable records, claims
// (soonest to lapse first), failures (latest first), ready packages (free
// ones first) with what they wait for; done ones only counted.
func TestQueueSection(t *testing.T) {
	out := Frame(queueSnap(), View{Sort: "expiry", Selected: -1})
	want := []string{
		`(?m)^work packages \(work-packages\.yaml\): 2 ready, 3 claimed, 1 done, 2 failed$`,
		`(?m)^  unreadable +WP-7 +\? +- +task record unreadable: not JSON$`,
		`(?m)^  claimed +WP-2 +carol +in 10m +the lexer$`,
		`(?m)^  claimed +WP-1 +bob +in 2h +the parser$`,
		`(?m)^  failed +WP-5 +dave +5m ago +failed: tests red$`,
		`(?m)^  failed +WP-6 +dave +50m ago +failed: old$`,
		`(?m)^  ready +WP-4 +- +- +free to claim \(the claim of frank lapsed\)$`,
		`(?m)^  ready +WP-3 +- +- +after WP-1 \(claimed\); src/a\.go held by bob$`,
	}
	last := -1
	for _, w := range want {
		loc := regexp.MustCompile(w).FindStringIndex(out)
		if loc == nil {
			t.Fatalf("frame lacks %s:\n%s", w, out)
		}
		if loc[0] < last {
			t.Errorf("%s is out of order:\n%s", w, out)
		}
		last = loc[0]
	}
	if strings.Contains(out, "WP-0") || strings.Contains(out, "task:WP-0") {
		t.Errorf("a done package is listed, or its record shown as a lock:\n%s", out)
	}
	if !strings.Contains(out, "— 1 live lock(s)") {
		t.Errorf("a finished package's record is counted as a lock:\n%s", out)
	}
	if strings.Index(out, "work packages (") < strings.Index(out, "src/a.go") || strings.Index(out, "recent events:") < strings.Index(out, "WP-3") {
		t.Errorf("the queue is not between the locks and the events:\n%s", out)
	}
}

// Cut to the rows it has, the section gives each state its turn and says
// how many more of which.
func TestQueueCut(t *testing.T) {
	s := Snapshot{Now: t0, QueueFile: "wp.yaml", Queue: &queue.Queue{}}
	for i := range 40 {
		p := queue.PackageStatus{ID: fmt.Sprintf("R-%02d", i), State: queue.PackageReady}
		if i%2 == 1 {
			p.WaitsFor = []string{"C-0"}
		}
		s.Queue.Packages = append(s.Queue.Packages, p)
	}
	for i := range 3 {
		s.Queue.Packages = append(s.Queue.Packages, queue.PackageStatus{ID: fmt.Sprintf("C-%d", i), State: queue.PackageClaimed,
			Holder: "bob", Until: at(time.Duration(3-i) * time.Minute)})
	}
	s.Queue.Packages = append(s.Queue.Packages, queue.PackageStatus{ID: "F-0", State: queue.PackageFailed, Reason: "r", FinishedAt: at(-time.Minute)})
	out := Frame(s, View{Packages: 7, Selected: -1})
	for _, w := range []string{"C-2 ", "C-1 ", "C-0 ", "F-0 ", "R-00 ", "R-02 ", "R-04 ", "  … 37 more (37 ready)\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("cut frame lacks %q:\n%s", w, out)
		}
	}
	// The free ones come before those that wait.
	if strings.Contains(out, "R-01 ") || strings.Contains(out, "R-06 ") {
		t.Errorf("cut frame shows more rows than it has:\n%s", out)
	}
	out = Frame(s, View{Packages: 2, Selected: -1})
	if !strings.Contains(out, "C-2 ") || !strings.Contains(out, "F-0 ") || !strings.Contains(out, "  … 42 more (2 claimed, 40 ready)\n") {
		t.Errorf("frame cut to 2 rows:\n%s", out)
	}
	// Off a terminal (no cut) every package not done is listed.
	if out := Frame(s, View{Selected: -1}); strings.Contains(out, "more (") || !strings.Contains(out, "R-39 ") {
		t.Errorf("uncut frame:\n%s", out)
	}
}

// What a ready package waits for: dependencies not done, with their
// states, and the locks in its way, with their holders.
func TestQueueWaitsFor(t *testing.T) {
	state := map[string]queue.PackageState{"A": queue.PackageReady, "B": queue.PackageFailed}
	for _, c := range []struct {
		p    queue.PackageStatus
		want string
	}{
		{queue.PackageStatus{}, "free to claim"},
		{queue.PackageStatus{Expired: true, Holder: "bob"}, "free to claim (the claim of bob lapsed)"},
		{queue.PackageStatus{WaitsFor: []string{"A", "B"}}, "after A (ready), B (failed)"},
		{queue.PackageStatus{HeldBy: []service.LockView{{Key: "x.go", Holder: "bob"}, {Key: "api:users", Holder: "carol"}}},
			"x.go held by bob, api:users held by carol"},
		{queue.PackageStatus{WaitsFor: []string{"Z"}, HeldBy: []service.LockView{{Key: "x.go", Holder: "bob"}}},
			"after Z (unknown); x.go held by bob"},
	} {
		if got := waitsFor(c.p, state); got != c.want {
			t.Errorf("waitsFor(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

// A work packages file that cannot be used is named in the section, and
// the locks stay in view; without a file there is no section.
func TestQueueProblem(t *testing.T) {
	s := queueSnap()
	s.Queue, s.QueueProblem = nil, "work-packages.yaml:7: duplicate package id \"WP-1\" (first defined at line 2)"
	out := Frame(s, View{Selected: -1})
	if !strings.Contains(out, "work packages (work-packages.yaml): not shown: work-packages.yaml:7: duplicate package id \"WP-1\"") ||
		!strings.Contains(out, "src/a.go") {
		t.Errorf("frame with an invalid file:\n%s", out)
	}
	s.QueueFile, s.QueueProblem = "", ""
	if out := Frame(s, View{Selected: -1}); strings.Contains(out, "work packages") || !strings.Contains(out, "src/a.go") {
		t.Errorf("frame without a file:\n%s", out)
	}
}

// Text from the file and the store cannot steer the terminal.
func TestQueueEscapes(t *testing.T) {
	evil := "WP\x1b[31m\u202e"
	s := Snapshot{Now: t0, QueueFile: "wp\x1b].yaml", Queue: &queue.Queue{Packages: []queue.PackageStatus{
		{ID: evil, State: queue.PackageClaimed, Holder: "bob\a", Title: "t\x1b[2J", Until: at(time.Hour)},
		{ID: evil + "2", State: queue.PackageFailed, Holder: "x", Reason: "r\x1b[H\n", FinishedAt: at(0)},
		{ID: evil + "3", State: queue.PackageReady, WaitsFor: []string{evil}, HeldBy: []service.LockView{{Key: "k\x1b", Holder: "h\x9b"}}},
		{ID: evil + "4", State: queue.PackageClaimed, Unreadable: "bad\x1b"},
	}}}
	out := Frame(s, View{Selected: -1})
	if strings.ContainsAny(out, "\x1b\a\u202e\u009b") {
		t.Errorf("raw control characters in the frame: %q", out)
	}
	if !strings.Contains(out, `WP\x1b[31m\u202e`) {
		t.Errorf("the id is not shown escaped: %q", out)
	}
	s.Queue, s.QueueProblem = nil, "wp.yaml:1: id \x1b[31m"
	if out := Frame(s, View{Selected: -1}); strings.Contains(out, "\x1b") {
		t.Errorf("raw control characters in the problem line: %q", out)
	}
}

// The full screen divides its lines between the locks and the queue.
func TestLayout(t *testing.T) {
	s := queueSnap() // 1 lock, 7 packages listed
	v := layout(s, View{}, 40)
	if v.Packages != 7 || v.Height != 40-fixedLines-3-7 {
		t.Errorf("roomy screen: %+v", v)
	}
	for i := range 100 {
		s.Locks = append(s.Locks, lock(fmt.Sprintf("f%03d.go", i), "bob", 0, time.Hour))
	}
	if v := layout(s, View{}, 40); v.Packages != (40-fixedLines-3)/3 || v.Height != 40-fixedLines-3-v.Packages {
		t.Errorf("crowded screen: %+v", v)
	}
	if v := layout(s, View{}, 10); v.Packages != 1 || v.Height != 3 {
		t.Errorf("tiny screen: %+v", v)
	}
	s.QueueFile = ""
	if v := layout(s, View{}, 40); v.Packages != 0 || v.Height != 40-fixedLines {
		t.Errorf("no queue: %+v", v)
	}
}

// TestQueueFitsWidth: on a narrow screen a package row's last column
// (title, what it waits for, why it failed) is cut to fit.
func TestQueueFitsWidth(t *testing.T) {
	s := queueSnap()
	s.Queue.Packages[1].Title = strings.Repeat("a long title ", 8)
	for _, width := range []int{110, 80} {
		for _, l := range strings.Split(Frame(s, View{Sort: "expiry", Selected: -1, Width: width}), "\n") {
			if strings.Contains(l, "WP-") && len([]rune(l)) > width {
				t.Errorf("width %d: a row of %d columns: %q", width, len([]rune(l)), l)
			}
		}
	}
}
