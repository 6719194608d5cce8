package planner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/scope"
)

func testPolicy(t testing.TB) *scope.Compiled {
	t.Helper()
	c, err := scope.Compile(scope.Policy{
		UserOwned: []string{"DESIGN_DOCUMENT.md"},
		Core:      []string{"bridge/loop.py", "bridge/loop_pkg/**"},
		Profiles: map[string]scope.Profile{
			"backfill":        {Allow: []string{"tests/**", "docs/**", ".github/**"}},
			"backfill-bridge": {Allow: []string{"tests/**", "docs/**", "bridge/**", ".github/**"}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func bf(id, typ string, paths ...string) Task {
	return Task{ID: id, Type: typ, Backfill: true, TouchedPaths: paths}
}

func task(id string, paths ...string) Task {
	return Task{ID: id, Type: "feature", TouchedPaths: paths}
}

func TestMake(t *testing.T) {
	t.Parallel()
	pol := testPolicy(t)
	utilX := FileKey("src/x/util.py")
	utilY := FileKey("src/y/util.py")
	tests := []struct {
		name   string
		tasks  []Task
		cfg    Config
		status map[string]string   // id -> status
		locks  map[string][]string // id -> keys that must be among its locks
		absent map[string][]string // id -> keys that must not be among its locks
		reason map[string]string   // id -> substring of the reason
	}{
		{
			name:   "lint and docs backfills run together",
			tasks:  []Task{bf("L", "lint", "tests/test_a.py"), bf("D", "docs", "docs/a.md")},
			cfg:    Config{Policy: pol},
			status: map[string]string{"L": StatusReady, "D": StatusReady},
			locks:  map[string][]string{"L": {"backfill:type:lint"}, "D": {"backfill:type:docs"}},
		},
		{
			name:   "two lint backfills serialize",
			tasks:  []Task{bf("L1", "lint", "tests/test_a.py"), bf("L2", "lint", "tests/test_b.py")},
			cfg:    Config{Policy: pol},
			status: map[string]string{"L1": StatusReady, "L2": StatusWaiting},
			reason: map[string]string{"L2": "lock backfill:type:lint overlaps backfill:type:lint of ready task L1"},
		},
		{
			name:   "core file never backfilled",
			tasks:  []Task{bf("B", "lint", "bridge/loop.py"), bf("P", "docs", "bridge/loop_pkg/x.py")},
			cfg:    Config{Policy: pol},
			status: map[string]string{"B": StatusRejected, "P": StatusRejected},
			reason: map[string]string{"B": "bridge/loop.py: rule core"},
		},
		{
			name:   "core file never backfilled even with allow bridge",
			tasks:  []Task{bf("B", "lint", "bridge/loop.py"), bf("O", "docs", "bridge/other.py")},
			cfg:    Config{Policy: pol, AllowBridge: true},
			status: map[string]string{"B": StatusRejected, "O": StatusReady},
			reason: map[string]string{"B": "bridge/loop.py: rule core"},
		},
		{
			name:   "bridge needs allow bridge",
			tasks:  []Task{bf("O", "docs", "bridge/other.py")},
			cfg:    Config{Policy: pol},
			status: map[string]string{"O": StatusRejected},
			reason: map[string]string{"O": "bridge/other.py: rule profile"},
		},
		{
			name:   "user owned never backfilled",
			tasks:  []Task{bf("U", "docs", "DESIGN_DOCUMENT.md")},
			cfg:    Config{Policy: pol, AllowBridge: true},
			status: map[string]string{"U": StatusRejected},
			reason: map[string]string{"U": "rule user_owned"},
		},
		{
			name:   "backfill pattern rejected",
			tasks:  []Task{bf("G", "lint", "tests/**")},
			cfg:    Config{Policy: pol},
			status: map[string]string{"G": StatusRejected},
			reason: map[string]string{"G": "tests/**: rule pattern"},
		},
		{
			name:   "non backfill task not scope checked",
			tasks:  []Task{task("F", "bridge/loop.py")},
			cfg:    Config{Policy: pol},
			status: map[string]string{"F": StatusReady},
		},
		{
			name:   "hot basename shared across directories",
			tasks:  []Task{task("A", "src/api.py"), task("B", "lib/api.py"), task("C", "src/other.py")},
			cfg:    Config{HotFiles: []string{"api.py"}},
			status: map[string]string{"A": StatusReady, "B": StatusWaiting, "C": StatusReady},
			locks:  map[string][]string{"A": {"hot:api.py"}, "B": {"hot:api.py"}},
			absent: map[string][]string{"C": {"hot:api.py"}},
			reason: map[string]string{"B": "lock hot:api.py overlaps hot:api.py of ready task A"},
		},
		{
			name:   "hot path pattern",
			tasks:  []Task{task("A", "bridge/board_writer.py"), task("B", "tools/board_writer.py"), task("C", "src/**")},
			cfg:    Config{HotFiles: []string{"bridge/*_writer.py", "src/**/api.py"}},
			status: map[string]string{"A": StatusReady, "B": StatusReady, "C": StatusReady},
			locks:  map[string][]string{"A": {"hot:board_writer.py"}, "C": {"hot:api.py"}},
			absent: map[string][]string{"B": {"hot:board_writer.py"}},
		},
		{
			name: "shared file gets file key",
			tasks: []Task{
				task("A", "src/x/util.py", "src/a.py"),
				task("B", "src/x/util.py"),
				task("C", "src/y/util.py"),
			},
			status: map[string]string{"A": StatusReady, "B": StatusWaiting, "C": StatusReady},
			locks:  map[string][]string{"A": {utilX}, "B": {utilX}},
			absent: map[string][]string{"C": {utilX, utilY}, "A": {FileKey("src/a.py")}},
		},
		{
			name:   "file key after normalization",
			tasks:  []Task{task("A", "./src/x/util.py"), task("B", "src//x/util.py")},
			status: map[string]string{"A": StatusReady, "B": StatusWaiting},
			locks:  map[string][]string{"A": {utilX, "src/x/util.py"}, "B": {utilX}},
		},
		{
			name:   "rejected task does not share files",
			tasks:  []Task{bf("R", "lint", "bridge/loop.py"), task("A", "bridge/loop.py")},
			cfg:    Config{Policy: pol},
			status: map[string]string{"R": StatusRejected, "A": StatusReady},
			absent: map[string][]string{"A": {FileKey("bridge/loop.py")}},
		},
		{
			name:   "held lock makes a task wait",
			tasks:  []Task{task("A", "src/a.py"), task("B", "src/b.py"), {ID: "C", Keys: []string{"db:migration-slot"}}},
			cfg:    Config{Held: []HeldLock{{Key: "src/a.py", Holder: "w1"}, {Key: "db:migration-slot", Holder: "w2"}}},
			status: map[string]string{"A": StatusWaiting, "B": StatusReady, "C": StatusWaiting},
			reason: map[string]string{"A": "lock src/a.py overlaps src/a.py held by w1", "C": "held by w2"},
		},
		{
			name:   "held pattern makes a task wait",
			tasks:  []Task{task("A", "src/a.py"), task("B", "lib/b.py")},
			cfg:    Config{Held: []HeldLock{{Key: "src/**", Holder: "w1"}}},
			status: map[string]string{"A": StatusWaiting, "B": StatusReady},
			reason: map[string]string{"A": "overlaps src/** held by w1"},
		},
		{
			name: "patterns against paths and patterns",
			tasks: []Task{
				task("A", "src/x/a.py"),
				task("P", "src/**/*.py"),
				task("Q", "lib/*.go"),
				task("R", "lib/**"),
				task("S", "docs/a.md"),
			},
			status: map[string]string{"A": StatusReady, "P": StatusWaiting, "Q": StatusReady, "R": StatusWaiting, "S": StatusReady},
			locks:  map[string][]string{"P": {FileKey("src/x/a.py")}, "R": {pairKey("lib/*.go", "lib/**")}},
			reason: map[string]string{
				"P": "overlaps " + FileKey("src/x/a.py") + " of ready task A",
				"R": "overlaps " + pairKey("lib/*.go", "lib/**") + " of ready task Q",
			},
		},
		{
			name:   "pattern covering another task's file shares its file key",
			tasks:  []Task{task("A", "src/x/util.py", "src/x/a.py"), task("P", "src/x/*.py"), task("B", "src/y/util.py")},
			status: map[string]string{"A": StatusReady, "P": StatusWaiting, "B": StatusReady},
			locks:  map[string][]string{"A": {utilX, FileKey("src/x/a.py")}, "P": {utilX, FileKey("src/x/a.py")}},
			absent: map[string][]string{"B": {utilX, utilY}, "P": {utilY, FileKey("src/x/*.py")}},
		},
		{
			name:   "files under one pattern keep apart from each other",
			tasks:  []Task{task("A", "src/a/x.py"), task("B", "src/b/y.py"), task("P", "src/**")},
			status: map[string]string{"A": StatusReady, "B": StatusReady, "P": StatusWaiting},
			locks:  map[string][]string{"A": {FileKey("src/a/x.py")}, "B": {FileKey("src/b/y.py")}, "P": {FileKey("src/a/x.py"), FileKey("src/b/y.py")}},
			absent: map[string][]string{"A": {FileKey("src/b/y.py")}, "B": {FileKey("src/a/x.py")}},
		},
		{
			name:   "pattern covering no declared file",
			tasks:  []Task{task("A", "src/a.py"), task("P", "lib/**"), task("Q", "src/*.go")},
			status: map[string]string{"A": StatusReady, "P": StatusReady, "Q": StatusReady},
			absent: map[string][]string{"A": {FileKey("src/a.py")}, "P": {FileKey("lib/**")}, "Q": {FileKey("src/*.go")}},
		},
		{
			name:   "equal patterns share the pattern's key",
			tasks:  []Task{task("P1", "gen/**"), task("P2", "./gen//**"), task("P3", "gen/**", "gen/x.txt")},
			status: map[string]string{"P1": StatusReady, "P2": StatusWaiting, "P3": StatusWaiting},
			locks: map[string][]string{
				"P1": {FileKey("gen/**"), FileKey("gen/x.txt")},
				"P2": {FileKey("gen/**"), FileKey("gen/x.txt")},
				"P3": {FileKey("gen/**"), FileKey("gen/x.txt")},
			},
		},
		{
			name: "overlapping patterns share a pair key",
			tasks: []Task{
				task("P", "src/**"),
				task("Q", "src/x/*.py"),
				task("R", "lib/*.go"),
				task("S", "**/api.py"),
			},
			status: map[string]string{"P": StatusReady, "Q": StatusWaiting, "R": StatusReady, "S": StatusWaiting},
			locks: map[string][]string{
				"P": {pairKey("src/**", "src/x/*.py"), pairKey("**/api.py", "src/**")},
				"Q": {pairKey("src/x/*.py", "src/**"), pairKey("**/api.py", "src/x/*.py")},
				"S": {pairKey("**/api.py", "src/**"), pairKey("**/api.py", "src/x/*.py")},
			},
			absent: map[string][]string{"R": {pairKey("lib/*.go", "src/**"), pairKey("**/api.py", "lib/*.go")}},
		},
		{
			name:   "sibling patterns under a wider one keep apart",
			tasks:  []Task{task("A", "src/a/**"), task("B", "src/b/**"), task("W", "src/**")},
			cfg:    Config{Held: []HeldLock{{Key: "src/c.py", Holder: "w1"}}},
			status: map[string]string{"A": StatusReady, "B": StatusReady, "W": StatusWaiting},
			locks:  map[string][]string{"W": {pairKey("src/**", "src/a/**"), pairKey("src/**", "src/b/**")}},
			absent: map[string][]string{"A": {pairKey("src/a/**", "src/b/**"), pairKey("src/**", "src/b/**")}, "B": {pairKey("src/**", "src/a/**")}},
		},
		{
			name:   "a task's own pattern and file are not shared",
			tasks:  []Task{task("A", "src/**", "src/a.py"), task("B", "lib/b.py")},
			status: map[string]string{"A": StatusReady, "B": StatusReady},
			absent: map[string][]string{"A": {FileKey("src/a.py"), FileKey("src/**")}},
		},
		{
			name:   "rejected pattern task shares nothing",
			tasks:  []Task{bf("G", "lint", "tests/**"), task("A", "tests/a.py")},
			cfg:    Config{Policy: pol},
			status: map[string]string{"G": StatusRejected, "A": StatusReady},
			absent: map[string][]string{"A": {FileKey("tests/a.py")}},
		},
		{
			name: "logical keys and api templates",
			tasks: []Task{
				{ID: "A", Keys: []string{"api:GET /v1/users/{id}"}},
				{ID: "B", Keys: []string{"api:GET /v1/users/42"}},
				{ID: "C", Keys: []string{"api:GET /v1/orders/42"}},
			},
			status: map[string]string{"A": StatusReady, "B": StatusWaiting, "C": StatusReady},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Make(&Input{Tasks: tc.tasks}, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]TaskPlan{}
			for _, tp := range p.Tasks {
				byID[tp.ID] = tp
				if !slices.IsSorted(tp.Locks) || !slices.IsSorted(tp.Injected) {
					t.Errorf("%s: locks or injected not sorted: %v %v", tp.ID, tp.Locks, tp.Injected)
				}
			}
			for id, want := range tc.status {
				if got := byID[id].Status; got != want {
					t.Errorf("%s: status %q (%s), want %q", id, got, byID[id].Reason, want)
				}
			}
			for id, keys := range tc.locks {
				for _, k := range keys {
					if !slices.Contains(byID[id].Locks, k) {
						t.Errorf("%s: locks %v lack %s", id, byID[id].Locks, k)
					}
				}
			}
			for id, keys := range tc.absent {
				for _, k := range keys {
					if slices.Contains(byID[id].Locks, k) {
						t.Errorf("%s: locks %v contain %s", id, byID[id].Locks, k)
					}
				}
			}
			for id, sub := range tc.reason {
				if !strings.Contains(byID[id].Reason, sub) {
					t.Errorf("%s: reason %q lacks %q", id, byID[id].Reason, sub)
				}
			}
			var ready []string
			for _, tp := range p.Tasks {
				if tp.Status == StatusReady {
					ready = append(ready, tp.ID)
				}
			}
			if !slices.Equal(ready, p.Ready) && !(len(ready) == 0 && len(p.Ready) == 0) {
				t.Errorf("Ready %v, want %v", p.Ready, ready)
			}
		})
	}
}

func TestFileKeyDistinct(t *testing.T) {
	t.Parallel()
	x, y := FileKey("src/x/util.py"), FileKey("src/y/util.py")
	if x == y || !strings.HasPrefix(x, "file:util.py:") || len(x) != len("file:util.py:")+12 {
		t.Fatalf("FileKey: %s, %s", x, y)
	}
}

func TestCooldown(t *testing.T) {
	t.Parallel()
	pol := testPolicy(t)
	// Cycle 10: a lint backfill touches a core file and is rejected; the
	// rejection carries the task's type.
	in := &Input{Tasks: []Task{bf("R", "lint", "tests/a.py", "bridge/loop.py")}}
	p, err := Make(in, Config{Policy: pol, Cycle: 10})
	if err != nil {
		t.Fatal(err)
	}
	rej := Rejections(in, p)
	want := Rejection{Path: "bridge/loop.py", Type: "lint"}
	if p.Tasks[0].Status != StatusRejected || !rej[want] || len(rej) != 1 {
		t.Fatalf("cycle 10: %+v, rejections %v", p.Tasks[0], rej)
	}
	typed := map[Rejection]int{want: 10}
	untyped := map[Rejection]int{{Path: "bridge/loop.py"}: 10}
	// The path is then in scope (no policy here); a backfill touching it is
	// skipped for exactly 5 cycles when the rejection applies to its type.
	tests := []struct {
		name   string
		cool   map[Rejection]int
		cycles int // CooldownCycles
		cycle  int
		task   Task
		want   string
		reason string
	}{
		{name: "same type at cycle 10", cool: typed, cycle: 10, task: bf("N", "lint", "bridge/loop.py"), want: StatusCooldown,
			reason: "path bridge/loop.py rejected for a lint backfill at cycle 10; skipped until cycle 15"},
		{name: "same type at cycle 11", cool: typed, cycle: 11, task: bf("N", "lint", "bridge/loop.py"), want: StatusCooldown},
		{name: "same type at cycle 14", cool: typed, cycle: 14, task: bf("N", "lint", "bridge/loop.py"), want: StatusCooldown},
		{name: "same type at cycle 15", cool: typed, cycle: 15, task: bf("N", "lint", "bridge/loop.py"), want: StatusReady},
		{name: "same type at cycle 20", cool: typed, cycle: 20, task: bf("N", "lint", "bridge/loop.py"), want: StatusReady},
		{name: "other type not cooled", cool: typed, cycle: 11, task: bf("N", "docs", "bridge/loop.py"), want: StatusReady},
		{name: "other path not cooled", cool: typed, cycle: 11, task: bf("N", "lint", "tests/b.py"), want: StatusReady},
		{name: "non backfill not cooled", cool: typed, cycle: 11, task: task("N", "bridge/loop.py"), want: StatusReady},
		{name: "untyped cools every type", cool: untyped, cycle: 12, task: bf("N", "docs", "bridge/loop.py"), want: StatusCooldown,
			reason: "path bridge/loop.py rejected at cycle 10 (task type not recorded: every backfill type waits); skipped until cycle 15"},
		{name: "untyped ends at cycle 15", cool: untyped, cycle: 15, task: bf("N", "docs", "bridge/loop.py"), want: StatusReady},
		{
			name:  "longest cooldown reported",
			cool:  map[Rejection]int{{Path: "bridge/loop.py"}: 8, {Path: "bridge/loop.py", Type: "lint"}: 11},
			cycle: 12, task: bf("N", "lint", "bridge/loop.py"), want: StatusCooldown,
			reason: "rejected for a lint backfill at cycle 11; skipped until cycle 16",
		},
		{name: "recorded path canonicalized", cool: map[Rejection]int{{Path: "./bridge//loop.py", Type: "lint"}: 10}, cycle: 12,
			task: bf("N", "lint", "bridge/loop.py"), want: StatusCooldown},
		{name: "cooldown cycles 2", cool: typed, cycles: 2, cycle: 12, task: bf("N", "lint", "bridge/loop.py"), want: StatusReady},
		{name: "cooldown disabled", cool: typed, cycles: -1, cycle: 10, task: bf("N", "lint", "bridge/loop.py"), want: StatusReady},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Make(&Input{Tasks: []Task{tc.task}}, Config{Cycle: tc.cycle, Cooldown: tc.cool, CooldownCycles: tc.cycles})
			if err != nil {
				t.Fatal(err)
			}
			got := p.Tasks[0]
			if got.Status != tc.want {
				t.Fatalf("status %q (%s), want %q", got.Status, got.Reason, tc.want)
			}
			if !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("reason %q, want %q", got.Reason, tc.reason)
			}
			if tc.want == StatusCooldown && len(p.Ready) != 0 {
				t.Errorf("ready %v", p.Ready)
			}
		})
	}
}

func TestCooldownsReported(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cool  map[Rejection]int
		cycle int
		want  []Cooldown
	}{
		{name: "none", want: []Cooldown{}},
		{
			name:  "active sorted, expired left out",
			cool:  map[Rejection]int{{Path: "src/b.py", Type: "lint"}: 9, {Path: "src/a.py", Type: "lint"}: 8, {Path: "src/a.py"}: 7, {Path: "src/old.py"}: 2},
			cycle: 10,
			want: []Cooldown{
				{Rejection: Rejection{Path: "src/a.py"}, Since: 7, Until: 12},
				{Rejection: Rejection{Path: "src/a.py", Type: "lint"}, Since: 8, Until: 13},
				{Rejection: Rejection{Path: "src/b.py", Type: "lint"}, Since: 9, Until: 14},
			},
		},
		{
			name:  "later of two records of one path",
			cool:  map[Rejection]int{{Path: "./src/a.py", Type: "docs"}: 6, {Path: "src/a.py", Type: "docs"}: 9},
			cycle: 10,
			want:  []Cooldown{{Rejection: Rejection{Path: "src/a.py", Type: "docs"}, Since: 9, Until: 14}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Make(&Input{Tasks: []Task{task("A", "src/z.py")}}, Config{Cycle: tc.cycle, Cooldown: tc.cool})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Cooldowns, tc.want) {
				t.Fatalf("cooldowns %+v, want %+v", p.Cooldowns, tc.want)
			}
		})
	}
}

func TestRejectionString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Rejection
		want string
	}{
		{name: "typed", r: Rejection{Path: "src/a.py", Type: "lint"}, want: "src/a.py (lint backfills)"},
		{name: "untyped", r: Rejection{Path: "src/a.py"}, want: "src/a.py (backfills of any type)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.r.String(); got != tc.want {
				t.Fatalf("%q, want %q", got, tc.want)
			}
		})
	}
}

func TestMakeErrors(t *testing.T) {
	t.Parallel()
	noBackfill, err := scope.Compile(scope.Policy{Profiles: map[string]scope.Profile{"docs": {Allow: []string{"docs/**"}}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tasks []Task
		cfg   Config
		want  string
	}{
		{name: "duplicate id", tasks: []Task{task("A", "a"), task("A", "b")}, want: `duplicate task id "A"`},
		{name: "empty id", tasks: []Task{task("", "a")}, want: "empty id"},
		{name: "nothing to lock", tasks: []Task{{ID: "A"}}, want: "nothing to lock"},
		{name: "bad backfill type", tasks: []Task{bf("A", "Lint", "tests/a.py")}, want: "backfill task type"},
		{name: "undefined profile", tasks: []Task{bf("A", "lint", "tests/a.py")}, cfg: Config{Policy: noBackfill}, want: `profile "backfill"`},
		{name: "bad hot file", tasks: []Task{task("A", "a")}, cfg: Config{HotFiles: []string{"src/[a"}}, want: "scope.hot_files"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Make(&Input{Tasks: tc.tasks}, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMakeDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	in := &Input{Tasks: []Task{task("A", "./src/a.py")}}
	if _, err := Make(in, Config{}); err != nil {
		t.Fatal(err)
	}
	if in.Tasks[0].TouchedPaths[0] != "./src/a.py" {
		t.Fatalf("input modified: %v", in.Tasks[0].TouchedPaths)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		yaml    string
		wantErr string
		check   func(*testing.T, *Input)
	}{
		{
			name: "spec example",
			yaml: "tasks:\n" +
				"  - {id: T-1, type: lint, backfill: true, touched_paths: [tests/test_a.py]}\n" +
				"  - {id: T-2, type: feature, backfill: false, touched_paths: [./src/api.py], keys: [\"api:GET /v1/a\"]}\n",
			check: func(t *testing.T, in *Input) {
				if len(in.Tasks) != 2 || in.Tasks[1].TouchedPaths[0] != "src/api.py" || in.Tasks[1].Keys[0] != "api:GET /v1/a" || !in.Tasks[0].Backfill {
					t.Fatalf("%+v", in)
				}
			},
		},
		{
			name:  "site namespace kept",
			yaml:  "tasks:\n  - id: A\n    keys: [queue:billing]\n",
			check: func(t *testing.T, in *Input) { _ = in },
		},
		{name: "unknown field", yaml: "tasks:\n  - id: A\n    touched: [a]\n", wantErr: "tasks.yaml:3: "},
		{name: "syntax error", yaml: "tasks:\n  - id: A\n    touched_paths: [a\n", wantErr: "tasks.yaml:"},
		{name: "wrong type", yaml: "tasks:\n  - id: A\n    backfill: maybe\n    touched_paths: [a]\n", wantErr: "tasks.yaml:3: "},
		{name: "duplicate id", yaml: "tasks:\n  - {id: A, touched_paths: [a]}\n  - {id: A, touched_paths: [b]}\n", wantErr: `tasks.yaml:3: duplicate task id "A" (first at line 2)`},
		{name: "empty id", yaml: "tasks:\n  - {id: A, touched_paths: [a]}\n  - {id: '', touched_paths: [b]}\n", wantErr: "tasks.yaml:3: task with an empty id"},
		{name: "missing id", yaml: "tasks:\n  - {touched_paths: [b]}\n", wantErr: "tasks.yaml:2: task with an empty id"},
		{name: "nothing to lock", yaml: "tasks:\n  - id: A\n    touched_paths: []\n", wantErr: "tasks.yaml:2: task A: no touched_paths and no keys"},
		{name: "bad path", yaml: "tasks:\n  - {id: A, touched_paths: [/etc/passwd]}\n", wantErr: "tasks.yaml:2: task A: touched_paths[0]: "},
		{name: "key as path", yaml: "tasks:\n  - {id: A, touched_paths: ['db:users']}\n", wantErr: "list it under keys"},
		{name: "bad key", yaml: "tasks:\n  - {id: A, keys: ['api:get /v1']}\n", wantErr: "tasks.yaml:2: task A: keys[0]: "},
		{name: "backfill without type", yaml: "tasks:\n  - {id: A, backfill: true, touched_paths: [tests/a.py]}\n", wantErr: "tasks.yaml:2: task A: backfill task type"},
		{name: "empty", yaml: "", wantErr: "tasks.yaml:1: empty input"},
		{name: "two documents", yaml: "tasks: []\n---\ntasks: []\n", wantErr: "tasks.yaml:2: more than one YAML document"},
		{name: "unknown top-level field", yaml: "defs: [a]\ntasks: []\n", wantErr: `tasks.yaml:1: unknown field "defs"; want tasks`},
		{name: "unknown task field says which", yaml: "tasks:\n  - id: A\n    touched: [a]\n", wantErr: `tasks.yaml:3: unknown task field "touched"; want id, type, backfill, touched_paths, keys`},
		{name: "list for a string", yaml: "tasks:\n  - id: [A]\n    touched_paths: [a]\n", wantErr: "tasks.yaml:2: want a string, got a list"},
		{name: "mapping for a list", yaml: "tasks:\n  - id: A\n    touched_paths: {a: b}\n", wantErr: "tasks.yaml:3: want a list, got a mapping"},
		{name: "word for a bool", yaml: "tasks:\n  - id: A\n    backfill: maybe\n    touched_paths: [a]\n", wantErr: "tasks.yaml:3: want true or false, got \"maybe\""},
		{name: "tasks not a list", yaml: "tasks: 3\n", wantErr: "tasks.yaml:1: want a list, got \"3\""},
		{name: "top level not a mapping", yaml: "- a\n", wantErr: "tasks.yaml:1: want a mapping with a tasks: list, got a list"},
		{name: "alias expansion budget", yaml: aliasBomb(100, 2000), wantErr: "aliases expand to more than 100000 values"},
		{name: "aliases within the budget", yaml: aliasBomb(20, 2000), check: func(t *testing.T, in *Input) {
			if len(in.Tasks) != 20 || len(in.Tasks[19].TouchedPaths) != 2000 {
				t.Fatalf("%d tasks", len(in.Tasks))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in, err := Parse("tasks.yaml", []byte(tc.yaml))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, in)
		})
	}
}

// aliasBomb is tasks tasks that each name, through one alias, the list of
// paths paths of the first: a small file that expands to tasks*paths
// values.
func aliasBomb(tasks, paths int) string {
	var b strings.Builder
	b.WriteString("tasks:\n  - id: T-0\n    type: lint\n    touched_paths: &L [")
	for i := range paths {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "src/f%d.py", i)
	}
	b.WriteString("]\n")
	for i := 1; i < tasks; i++ {
		fmt.Fprintf(&b, "  - {id: T-%d, type: lint, backfill: false, touched_paths: *L}\n", i)
	}
	return b.String()
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("tasks:\n  - {id: T-1, type: lint, backfill: true, touched_paths: [tests/test_a.py]}\n"))
	f.Add([]byte("tasks:\n  - {id: A, touched_paths: ['src/**'], keys: ['api:GET /v1/{id}']}\n  - {id: B, touched_paths: [src/api.py]}\n"))
	pol := testPolicy(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Parse("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml:") {
				t.Fatalf("error without name: %v", err)
			}
			return
		}
		p, err := Make(in, Config{Policy: pol, HotFiles: []string{"api.py", "src/**/x.py"}, Held: []HeldLock{{Key: "src/**", Holder: "w"}}})
		if err != nil {
			return // e.g. nothing: Parse validated the tasks, but keep Make honest
		}
		if len(p.Tasks) != len(in.Tasks) {
			t.Fatalf("%d plans for %d tasks", len(p.Tasks), len(in.Tasks))
		}
	})
}

// benchInput builds n tasks of 20 paths each: most paths are private to a
// task, a few are shared with neighbours, some are hot files, one task in
// ten is a backfill; one task in 50 lists a pattern covering the next
// task's files, and one in 20 a pattern overlapping another task's.
func benchInput(n int) *Input {
	in := &Input{Tasks: make([]Task, n)}
	for i := range in.Tasks {
		t := Task{ID: fmt.Sprintf("T-%d", i), Type: "feature"}
		for j := 0; j < 20; j++ {
			switch {
			case j == 0:
				t.TouchedPaths = append(t.TouchedPaths, fmt.Sprintf("src/shared/mod%d/util.py", i%50))
			case j == 1 && i%7 == 0:
				t.TouchedPaths = append(t.TouchedPaths, fmt.Sprintf("pkg%d/api.py", i%13))
			case j == 2 && i%50 == 25:
				t.TouchedPaths = append(t.TouchedPaths, fmt.Sprintf("src/pkg%d/task%d/*.py", (i+1)%31, i+1))
			case j == 3 && i%40 == 3:
				t.TouchedPaths = append(t.TouchedPaths, fmt.Sprintf("gen/g%d/**", i/40))
			case j == 3 && i%40 == 23:
				t.TouchedPaths = append(t.TouchedPaths, fmt.Sprintf("gen/g%d/*.txt", i/40))
			default:
				t.TouchedPaths = append(t.TouchedPaths, fmt.Sprintf("src/pkg%d/task%d/file%d.py", i%31, i, j))
			}
		}
		if i%10 == 0 {
			t.Backfill, t.Type = true, []string{"lint", "docs", "tests"}[i%3]
			t.TouchedPaths = []string{fmt.Sprintf("tests/test_%d.py", i), fmt.Sprintf("docs/d%d.md", i%40)}
		}
		if i%5 == 0 {
			t.Keys = []string{fmt.Sprintf("api:GET /v1/r%d/{id}", i%9), fmt.Sprintf("db:schema:t%d", i%17)}
		}
		in.Tasks[i] = t
	}
	return in
}

func BenchmarkMake(b *testing.B) {
	pol := testPolicy(b)
	for _, n := range []int{500, 2000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			in := benchInput(n)
			cfg := Config{
				Policy:   pol,
				HotFiles: []string{"api.py", "board_writer.py", "src/shared/**/config.py"},
				Held:     []HeldLock{{Key: "src/pkg3/**", Holder: "w1"}, {Key: "db:schema:t4", Holder: "w2"}},
				Cycle:    12,
				Cooldown: map[Rejection]int{{Path: "tests/test_30.py", Type: "tests"}: 10, {Path: "docs/d3.md"}: 11},
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := Make(in, cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/task")
		})
	}
}

func TestKeyNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		key  string
		want string // prefix up to the hash
	}{
		{name: "file", key: FileKey("src/x/util.py"), want: "file:util.py:"},
		{name: "top-level file", key: FileKey("Makefile"), want: "file:Makefile:"},
		{name: "pattern with literal basename", key: FileKey("src/**/api.py"), want: "file:api.py:"},
		{name: "pattern named after its directory", key: FileKey("gen/t5/**"), want: "file:t5:"},
		{name: "pattern skips wildcard directories", key: FileKey("src/*/x*/*.py"), want: "file:src:"},
		{name: "pattern without literal element", key: FileKey("**/*.py"), want: "file:glob:"},
		{name: "brace pattern", key: FileKey("src/{a,b}.py"), want: "file:src:"},
		{name: "pair named after the narrower pattern", key: pairKey("src/**", "src/x/*.py"), want: "file:x:"},
		{name: "pair of equally narrow patterns", key: pairKey("lib/**", "lib/*.go"), want: "file:lib:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.HasPrefix(tc.key, tc.want) || len(tc.key) != len(tc.want)+12 {
				t.Fatalf("key %q, want %q and 12 hex digits", tc.key, tc.want)
			}
			if lockkey.IsPattern(tc.key) {
				t.Errorf("key %q reads as a pattern", tc.key)
			}
			if c, err := lockkey.Canonical(tc.key, nil); err != nil || c != tc.key {
				t.Errorf("Canonical(%q) = %q, %v", tc.key, c, err)
			}
		})
	}
	if pairKey("a/**", "a/*.go") != pairKey("a/*.go", "a/**") {
		t.Error("pairKey depends on the order of its patterns")
	}
	keys := []string{FileKey("src/**"), FileKey("src/x/**"), pairKey("src/**", "src/x/**"), pairKey("src/**", "src/y/**")}
	if len(slices.Compact(slices.Sorted(slices.Values(keys)))) != len(keys) {
		t.Errorf("keys collide: %v", keys)
	}
}

// TestSharedKeysFollowOverlap checks on random task sets that two
// schedulable tasks share a file: key exactly when one of them lists a
// path or pattern that may overlap (lockkey.Overlap) one the other lists.
func TestSharedKeysFollowOverlap(t *testing.T) {
	t.Parallel()
	vocab := []string{
		"src/a.py", "src/b.py", "src/x/util.py", "src/y/util.py", "lib/api.py", "docs/a.md", "gen/out.txt", "api.py",
		"src/**", "src/x/*.py", "src/*.py", "**/api.py", "lib/**", "gen/**", "**/*.md", "src/{a,b}.py",
		"src/[ab].py", "docs/*.md", "**", "src/x/**", "src/y/**", "*.py", "src/*/util.py", "s*/**",
		"src/**/util.py", "**/*til.py", "**/x/util.py", "lib/*.go", "**/{api,util}.py",
	}
	tests := []struct {
		name string
		seed uint64
	}{
		{name: "seed 1", seed: 1},
		{name: "seed 2", seed: 2},
		{name: "seed 3", seed: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(tc.seed, 0))
			for round := 0; round < 300; round++ {
				in := &Input{}
				for i := range 2 + rng.IntN(5) {
					var paths []string
					for range 1 + rng.IntN(3) {
						paths = append(paths, vocab[rng.IntN(len(vocab))])
					}
					in.Tasks = append(in.Tasks, task(fmt.Sprintf("T%d", i), paths...))
				}
				p, err := Make(in, Config{})
				if err != nil {
					t.Fatal(err)
				}
				for i := range in.Tasks {
					for j := i + 1; j < len(in.Tasks); j++ {
						overlap := false
						for _, x := range in.Tasks[i].TouchedPaths {
							for _, y := range in.Tasks[j].TouchedPaths {
								overlap = overlap || lockkey.Overlap(x, y)
							}
						}
						shared := ""
						for _, k := range p.Tasks[i].Injected {
							if strings.HasPrefix(k, "file:") && slices.Contains(p.Tasks[j].Injected, k) {
								shared = k
							}
						}
						if overlap != (shared != "") {
							t.Fatalf("round %d: %v and %v: overlap %v, shared key %q\n%+v\n%+v", round,
								in.Tasks[i].TouchedPaths, in.Tasks[j].TouchedPaths, overlap, shared, p.Tasks[i], p.Tasks[j])
						}
					}
				}
			}
		})
	}
}

func TestRejectionKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		r     Rejection
		key   string
		parse string // when set, parsed instead of key
		ok    bool
	}{
		{name: "typed", r: Rejection{Path: "src/a.py", Type: "lint"}, key: "lint:src/a.py", ok: true},
		{name: "untyped", r: Rejection{Path: "src/a.py"}, key: ":src/a.py", ok: true},
		{name: "path with colon", r: Rejection{Path: "src/a:b.py", Type: "docs"}, key: "docs:src/a:b.py", ok: true},
		{name: "untyped path that looks typed", r: Rejection{Path: "lint:x.py"}, key: ":lint:x.py", ok: true},
		{name: "bare path", r: Rejection{Path: "src/a.py"}, parse: "src/a.py", ok: true},
		{name: "bare path with colon", r: Rejection{Path: "src/a:b.py"}, parse: "src/a:b.py", ok: true},
		{name: "empty", parse: "", ok: false},
		{name: "type without path", parse: "lint:", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.parse
			if in == "" && tc.key != "" {
				if got := tc.r.Key(); got != tc.key {
					t.Fatalf("Key() = %q, want %q", got, tc.key)
				}
				in = tc.key
			}
			got, ok := ParseRejection(in)
			if ok != tc.ok || (ok && got != tc.r) {
				t.Fatalf("ParseRejection(%q) = %+v, %v; want %+v, %v", in, got, ok, tc.r, tc.ok)
			}
		})
	}
}

func FuzzParseRejection(f *testing.F) {
	for _, s := range []string{"lint:src/a.py", ":src/a.py", "src/a.py", "docs:a:b", "Lint:x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, ok := ParseRejection(v)
		if !ok {
			return
		}
		if r.Path == "" || (r.Type != "" && !ValidType(r.Type)) {
			t.Fatalf("ParseRejection(%q) = %+v", v, r)
		}
		if back, ok := ParseRejection(r.Key()); !ok || back != r {
			t.Fatalf("round trip of %+v: %+v, %v", r, back, ok)
		}
	})
}
