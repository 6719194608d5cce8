package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/scope"
)

func testPolicy(t testing.TB) *scope.Compiled {
	t.Helper()
	c, err := scope.Compile(scope.Policy{
		UserOwned: []string{"DESIGN_DOCUMENT.md"},
		Core:      []string{"bridge/loop.py", "bridge/loop_pkg/**"},
		Profiles: map[string][]string{
			"backfill":        {"tests/**", "docs/**", ".github/**"},
			"backfill-bridge": {"tests/**", "docs/**", "bridge/**", ".github/**"},
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
			reason: map[string]string{"P": "overlaps src/x/a.py of ready task A", "R": "overlaps lib/*.go of ready task Q"},
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
	// Cycle 10: the backfill touches a core file and is rejected.
	p, err := Make(&Input{Tasks: []Task{bf("R", "lint", "tests/a.py", "bridge/loop.py")}}, Config{Policy: pol, Cycle: 10})
	if err != nil {
		t.Fatal(err)
	}
	rej := Rejections(p)
	if p.Tasks[0].Status != StatusRejected || !rej["bridge/loop.py"] || len(rej) != 1 {
		t.Fatalf("cycle 10: %+v, rejections %v", p.Tasks[0], rej)
	}
	cool := map[string]int{}
	for path := range rej {
		cool[path] = 10
	}
	// The path is then allowed (say the policy changed); a backfill
	// touching it is skipped for exactly 5 cycles.
	tests := []struct {
		name  string
		cycle int
		want  string
	}{
		{name: "cycle 10", cycle: 10, want: StatusCooldown},
		{name: "cycle 11", cycle: 11, want: StatusCooldown},
		{name: "cycle 14", cycle: 14, want: StatusCooldown},
		{name: "cycle 15", cycle: 15, want: StatusReady},
		{name: "cycle 20", cycle: 20, want: StatusReady},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := &Input{Tasks: []Task{bf("N", "lint", "bridge/loop.py"), task("F", "bridge/loop.py")}}
			p, err := Make(in, Config{Cycle: tc.cycle, Cooldown: cool, CooldownCycles: 5})
			if err != nil {
				t.Fatal(err)
			}
			got := p.Tasks[0]
			if got.Status != tc.want {
				t.Fatalf("status %q (%s), want %q", got.Status, got.Reason, tc.want)
			}
			if tc.want == StatusCooldown {
				want := "path bridge/loop.py rejected at cycle 10; skipped until cycle 15"
				if got.Reason != want {
					t.Errorf("reason %q, want %q", got.Reason, want)
				}
				// A non-backfill task is not cooled down.
				if p.Tasks[1].Status != StatusReady {
					t.Errorf("feature task: %+v", p.Tasks[1])
				}
			}
		})
	}
}

func TestMakeErrors(t *testing.T) {
	t.Parallel()
	noBackfill, err := scope.Compile(scope.Policy{Profiles: map[string][]string{"docs": {"docs/**"}}})
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
// ten is a backfill.
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
			case j == 2 && i%25 == 0:
				t.TouchedPaths = append(t.TouchedPaths, fmt.Sprintf("gen/t%d/**", i))
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
				Cooldown: map[string]int{"tests/test_30.py": 10},
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
