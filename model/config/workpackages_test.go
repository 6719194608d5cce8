package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const wpName = "work-packages.yaml"

func TestWorkPackagesSpecExample(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "work-packages.yaml")
	w, err := LoadWorkPackages(path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Path != path || len(w.Packages) != 1 {
		t.Fatalf("got %+v", w)
	}
	p, ok := w.Find("WP-1")
	if !ok {
		t.Fatal("Find(WP-1) failed")
	}
	want := PackageLocks{
		Files:      []string{"src/api/users.py", "src/api/routes.py"},
		Keys:       []string{"api:GET /v1/users", "db:schema:users"},
		TTLMinutes: 120,
		Reason:     "Backend API implementation",
	}
	if p.ID != "WP-1" || p.Title != "Backend API implementation" || p.Line != 2 || !reflect.DeepEqual(p.Locks, want) {
		t.Errorf("got %+v", *p)
	}
	if _, ok := w.Find("WP-2"); ok {
		t.Error("Find(WP-2) found something")
	}
	if err := w.Validate(nil, func(string) error { return nil }); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestWorkPackagesMissingFile(t *testing.T) {
	t.Parallel()
	_, err := LoadWorkPackages(filepath.Join(t.TempDir(), "absent.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error = %v, want fs.ErrNotExist", err)
	}
}

func TestWorkPackagesLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		yaml    string
		wantIDs []string
		want    []string // problems; nil means success
	}{
		{name: "empty file", yaml: "", wantIDs: []string{}},
		{name: "empty list", yaml: "packages: []\n", wantIDs: []string{}},
		{name: "two packages", yaml: "packages:\n  - id: A\n  - id: B\n    locks: {ttl_minutes: 0}\n", wantIDs: []string{"A", "B"}},
		{name: "unknown key", yaml: "packages:\n  - id: WP-1\n    titel: x\n",
			want: []string{`work-packages.yaml:3: unknown key "titel" in packages[0]`}},
		{name: "unknown key in locks", yaml: "packages:\n  - id: WP-1\n    locks:\n      file: [a]\n",
			want: []string{`work-packages.yaml:4: unknown key "file" in packages[0].locks`}},
		{name: "unknown top-level key", yaml: "package:\n  - id: WP-1\n",
			want: []string{`work-packages.yaml:1: unknown key "package"`}},
		{name: "wrong type", yaml: "packages:\n  - id: WP-1\n    locks:\n      ttl_minutes: 2h\n",
			want: []string{`work-packages.yaml:4: packages[0].locks.ttl_minutes: expected an integer, got string "2h"`}},
		{name: "packages not a list", yaml: "packages:\n  id: WP-1\n",
			want: []string{`work-packages.yaml:2: packages: expected a list, got a mapping`}},
		{name: "duplicate ids", yaml: "packages:\n  - id: WP-1\n    title: a\n  - title: b\n    id: WP-1\n",
			want: []string{`work-packages.yaml:5: duplicate package id "WP-1" (first defined at line 2)`}},
		{name: "empty id", yaml: "packages:\n  - id: ''\n  - title: no id\n",
			want: []string{
				`work-packages.yaml:2: packages[0]: id must not be empty`,
				`work-packages.yaml:3: packages[1]: id must not be empty`,
			}},
		{name: "id with space", yaml: "packages:\n  - id: WP 1\n",
			want: []string{`work-packages.yaml:2: packages[0]: id "WP 1" must not contain whitespace`}},
		{name: "negative ttl", yaml: "packages:\n  - id: WP-1\n    locks:\n      ttl_minutes: -5\n",
			want: []string{`work-packages.yaml:4: package WP-1: locks.ttl_minutes must not be negative, got -5`}},
		{name: "ttl_minutes past the duration range", yaml: "packages:\n  - id: WP-1\n    locks:\n      ttl_minutes: 200000000000\n",
			want: []string{`work-packages.yaml:4: package WP-1: locks.ttl_minutes must be at most 153722867, got 200000000000`}},
		{name: "empty entries", yaml: "packages:\n  - id: WP-1\n    locks:\n      files:\n        -\n      keys: ['']\n",
			want: []string{
				`work-packages.yaml:5: packages[0].locks.files[0]: empty entry`,
				`work-packages.yaml:6: packages[0].locks.keys[0]: empty entry`,
			}},
		{name: "priority not an integer", yaml: "packages:\n  - id: WP-1\n    priority: high\n  - id: WP-2\n    priority: 1.5\n  - id: WP-3\n    priority: [1]\n",
			want: []string{
				`work-packages.yaml:3: packages[0].priority: expected an integer, got string "high"`,
				`work-packages.yaml:5: packages[1].priority: expected an integer, got number 1.5`,
				`work-packages.yaml:7: packages[2].priority: expected an integer, got a list`,
			}},
		{name: "priority out of range", yaml: "packages:\n  - id: WP-1\n    priority: 9223372036854775808\n",
			want: []string{`work-packages.yaml:3: packages[0].priority: integer 9223372036854775808 out of range`}},
		{name: "dependencies", yaml: "packages:\n  - id: A\n  - id: B\n    depends_on: [A]\n  - id: C\n    priority: -3\n    depends_on:\n      - A\n      - B\n",
			wantIDs: []string{"A", "B", "C"}},
		{name: "depends_on not a list", yaml: "packages:\n  - id: A\n  - id: B\n    depends_on: A\n",
			want: []string{`work-packages.yaml:4: packages[1].depends_on: expected a list, got string "A"`}},
		{name: "unknown dependency", yaml: "packages:\n  - id: WP-1\n  - id: WP-2\n    depends_on:\n      - WP-1\n      - WP-9\n",
			want: []string{`work-packages.yaml:6: package WP-2: depends_on[1]: no package "WP-9" in the file`}},
		{name: "dependency on itself", yaml: "packages:\n  - id: WP-1\n    depends_on: [WP-1]\n",
			want: []string{`work-packages.yaml:3: package WP-1: depends_on[0]: a package cannot depend on itself`}},
		{name: "duplicate dependency", yaml: "packages:\n  - id: WP-1\n  - id: WP-2\n    depends_on:\n      - WP-1\n      - WP-1\n",
			want: []string{`work-packages.yaml:6: package WP-2: depends_on[1]: "WP-1" listed twice (first at line 5)`}},
		{name: "empty dependency", yaml: "packages:\n  - id: WP-1\n    depends_on: ['', ~]\n",
			want: []string{
				`work-packages.yaml:3: package WP-1: depends_on[0]: empty entry`,
				`work-packages.yaml:3: package WP-1: depends_on[1]: empty entry`,
			}},
		{name: "dependency of a package without id", yaml: "packages:\n  - title: x\n    depends_on: [WP-9]\n",
			want: []string{
				`work-packages.yaml:2: packages[0]: id must not be empty`,
				`work-packages.yaml:3: package packages[0]: depends_on[0]: no package "WP-9" in the file`,
			}},
		{name: "dependency id needing quotes", yaml: "packages:\n  - id: \"W\\e1\"\n    depends_on: [\"W\\e1\"]\n",
			want: []string{`work-packages.yaml:3: package "W\x1b1": depends_on[0]: a package cannot depend on itself`}},
		{name: "cycle of two", yaml: "packages:\n  - id: WP-1\n    depends_on: [WP-2]\n  - id: WP-2\n    depends_on: [WP-1]\n",
			want: []string{`work-packages.yaml:3: package WP-1: depends_on: dependency cycle WP-1 → WP-2 → WP-1`}},
		{name: "cycle of three behind a package outside it", yaml: `packages:
  - id: WP-0
    depends_on: [WP-2]
  - id: WP-1
    depends_on: [WP-0, WP-3]
  - id: WP-2
    depends_on: [WP-4]
  - id: WP-3
    depends_on:
      - WP-5
      - WP-2
  - id: WP-4
    depends_on:
      - WP-3
  - id: WP-5
`,
			want: []string{`work-packages.yaml:7: package WP-2: depends_on: dependency cycle WP-2 → WP-4 → WP-3 → WP-2`}},
		{name: "shortest cycle named", yaml: `packages:
  - id: A
    depends_on: [B, C]
  - id: B
    depends_on: [D]
  - id: C
    depends_on: [A]
  - id: D
    depends_on: [A]
`,
			want: []string{`work-packages.yaml:3: package A: depends_on: dependency cycle A → C → A`}},
		{name: "two cycles", yaml: `packages:
  - {id: A, depends_on: [B]}
  - {id: B, depends_on: [A]}
  - {id: C, depends_on: [D]}
  - {id: D, depends_on: [E]}
  - {id: E, depends_on: [C]}
`,
			want: []string{
				`work-packages.yaml:2: package A: depends_on: dependency cycle A → B → A`,
				`work-packages.yaml:4: package C: depends_on: dependency cycle C → D → E → C`,
			}},
		{name: "long cycle shortened", yaml: "packages:\n" + chain(12, true),
			want: []string{`work-packages.yaml:2: package P0: depends_on: dependency cycle P0 → P1 → P2 → P3 → P4 → P5 → P6 → P7 → P8 → … (12 packages in all) → P0`}},
		{name: "ttl", yaml: "packages:\n  - id: WP-1\n    locks: {ttl: 15s}\n  - id: WP-2\n    locks: {ttl: 0}\n", wantIDs: []string{"WP-1", "WP-2"}},
		{name: "ttl and ttl_minutes", yaml: "packages:\n  - id: WP-1\n    locks:\n      ttl: 15s\n      ttl_minutes: 3\n",
			want: []string{`work-packages.yaml:5: package WP-1: locks.ttl and locks.ttl_minutes are both set: keep one`}},
		{name: "negative ttl duration", yaml: "packages:\n  - id: WP-1\n    locks:\n      ttl: -5m\n",
			want: []string{`work-packages.yaml:4: package WP-1: locks.ttl must not be negative, got -5m0s`}},
		{name: "ttl not a duration", yaml: "packages:\n  - id: WP-1\n    locks:\n      ttl: 15\n",
			want: []string{`work-packages.yaml:4: packages[0].locks.ttl: invalid duration "15": use a duration such as 30m, 8h or 2d`}},
		{name: "syntax error", yaml: "packages:\n  - id: [\n",
			want: []string{`work-packages.yaml:2: invalid YAML: did not find expected node content`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, err := LoadWorkPackagesBytes(wpName, []byte(tt.yaml))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("error: %v", err)
				}
				ids := []string{}
				for _, p := range w.Packages {
					ids = append(ids, p.ID)
				}
				if !reflect.DeepEqual(ids, tt.wantIDs) {
					t.Errorf("ids = %q, want %q", ids, tt.wantIDs)
				}
				return
			}
			if got := problemStrings(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestWorkPackagesValidate(t *testing.T) {
	t.Parallel()
	const src = `packages:
  - id: WP-1
    locks:
      files:
        - src/ok.py
        - /abs.py
      keys: ["api:GET /v1/users", "queue:x"]
  - id: WP-2
    locks:
      keys:
        - "bad key"
`
	w, err := LoadWorkPackagesBytes(wpName, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	check := func(k string) error {
		switch {
		case strings.HasPrefix(k, "/"):
			return fmt.Errorf("invalid path %q: must be repo-relative", k)
		case strings.HasPrefix(k, "queue:"):
			return errors.New(`namespace "queue" is not permitted`)
		case strings.Contains(k, " ") && !strings.HasPrefix(k, "api:"):
			return fmt.Errorf("invalid key %q", k)
		}
		return nil
	}
	tests := []struct {
		name  string
		check func(string) error
		want  []string
	}{
		{name: "all pass", check: func(string) error { return nil }},
		{name: "failures with lines", check: check, want: []string{
			`work-packages.yaml:6: package WP-1: locks.files[1]: invalid path "/abs.py": must be repo-relative`,
			`work-packages.yaml:7: package WP-1: locks.keys[1]: namespace "queue" is not permitted`,
			`work-packages.yaml:11: package WP-2: locks.keys[0]: invalid key "bad key"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := w.Validate(nil, tt.check)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if got := problemStrings(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// chain is n packages P0…P(n-1), each depending on the next; the last on
// P0 when closed.
func chain(n int, closed bool) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {id: P%d", i)
		switch {
		case i+1 < n:
			fmt.Fprintf(&b, ", depends_on: [P%d]", i+1)
		case closed:
			b.WriteString(", depends_on: [P0]")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

func TestWorkPackagesLongChain(t *testing.T) {
	t.Parallel()
	src := "packages:\n" + chain(MaxWorkPackages, false)
	if _, err := LoadWorkPackagesBytes(wpName, []byte(src)); err != nil {
		t.Fatalf("open chain: %v", err)
	}
	_, err := LoadWorkPackagesBytes(wpName, []byte("packages:\n"+chain(MaxWorkPackages, true)))
	want := []string{fmt.Sprintf(`work-packages.yaml:2: package P0: depends_on: dependency cycle P0 → P1 → P2 → P3 → P4 → P5 → P6 → P7 → P8 → … (%d packages in all) → P0`, MaxWorkPackages)}
	if got := problemStrings(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("closed chain:\n got %q\nwant %q", got, want)
	}
}

func TestWorkPackageTTL(t *testing.T) {
	t.Parallel()
	const src = `packages:
  - id: none
  - id: ttl
    locks: {ttl: 15s}
  - id: days
    locks: {ttl: 2d}
  - id: minutes
    locks: {ttl_minutes: 120}
  - id: zero
    locks: {ttl: 0s}
  - id: zero-minutes
    locks: {ttl_minutes: 0}
`
	w, err := LoadWorkPackagesBytes(wpName, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{
		"none": 0, "ttl": 15 * time.Second, "days": 48 * time.Hour,
		"minutes": 2 * time.Hour, "zero": 0, "zero-minutes": 0,
	}
	for id, ttl := range want {
		p, ok := w.Find(id)
		if !ok {
			t.Fatalf("no package %s", id)
		}
		if got := p.TTL(); got != ttl {
			t.Errorf("%s: TTL() = %v, want %v", id, got, ttl)
		}
	}
}

func TestWorkPackagesClaimOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "empty", yaml: "", want: []string{}},
		{name: "file order without priorities", yaml: "packages:\n  - id: C\n  - id: A\n  - id: B\n", want: []string{"C", "A", "B"}},
		{name: "higher first, ties in file order", yaml: `packages:
  - {id: low, priority: -1}
  - {id: zero-1}
  - {id: high-1, priority: 5}
  - {id: mid, priority: 2}
  - {id: zero-2, priority: 0}
  - {id: high-2, priority: 5}
`, want: []string{"high-1", "high-2", "mid", "zero-1", "zero-2", "low"}},
		{name: "dependencies do not reorder", yaml: "packages:\n  - {id: A, depends_on: [B]}\n  - {id: B}\n", want: []string{"A", "B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, err := LoadWorkPackagesBytes(wpName, []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, p := range w.ClaimOrder() {
				got = append(got, p.ID)
				if q, _ := w.Find(p.ID); q != p {
					t.Errorf("ClaimOrder()'s %s is a copy, not the package of the list", p.ID)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ClaimOrder() = %q, want %q", got, tt.want)
			}
		})
	}
}

// fullPackages is n packages with every field set: three files, a key,
// a dependency, a priority, a TTL and a reason.
func fullPackages(n int) string {
	var b strings.Builder
	b.WriteString("packages:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {id: P%d, title: t%d, priority: %d", i, i, i%3)
		if i > 0 {
			fmt.Fprintf(&b, ", depends_on: [P%d]", i-1)
		}
		fmt.Fprintf(&b, ", locks: {files: [a/%d.go, b/%d.go, c/%d.go], keys: [\"api:%d\"], ttl: 1h, reason: r}}\n", i, i, i, i)
	}
	return b.String()
}

func TestWorkPackagesLargestFile(t *testing.T) {
	t.Parallel()
	src := fullPackages(MaxWorkPackages)
	if len(src) > MaxWorkPackagesBytes {
		t.Fatalf("the test's file is %d bytes, over the limit", len(src))
	}
	w, err := LoadWorkPackagesBytes(wpName, []byte(src))
	if err != nil {
		t.Fatalf("%d packages in %d bytes refused: %.300v", MaxWorkPackages, len(src), err)
	}
	if len(w.Packages) != MaxWorkPackages {
		t.Fatalf("%d packages read, want %d", len(w.Packages), MaxWorkPackages)
	}
	last := w.Packages[MaxWorkPackages-1]
	if len(last.Locks.Files) != 3 || last.DependsOn[0] != fmt.Sprintf("P%d", MaxWorkPackages-2) {
		t.Errorf("last package = %+v", last)
	}
}

func TestWorkPackagesAliasBomb(t *testing.T) {
	t.Parallel()
	// Each level doubles: 2^30 values if expanded naively.
	var b strings.Builder
	b.WriteString("packages:\n  - {id: P0, locks: &a0 {files: [x.go, y.go]}}\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "  - {id: P%d, locks: &a%d {<<: [*a%d, *a%d]}}\n", i, i, i-1, i-1)
	}
	// Refused, not expanded: a decoder that expanded it would not end
	// (the package's -timeout fails it) or run out of memory.
	_, err := LoadWorkPackagesBytes(wpName, []byte(b.String()))
	if err == nil {
		t.Fatal("alias bomb accepted")
	}
	if !strings.Contains(err.Error(), "too deeply aliased") {
		t.Errorf("error = %.300v", err)
	}
}
