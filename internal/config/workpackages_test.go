package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
		{name: "empty entries", yaml: "packages:\n  - id: WP-1\n    locks:\n      files:\n        -\n      keys: ['']\n",
			want: []string{
				`work-packages.yaml:5: packages[0].locks.files[0]: empty entry`,
				`work-packages.yaml:6: packages[0].locks.keys[0]: empty entry`,
			}},
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
