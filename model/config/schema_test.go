package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"
)

// The JSON Schemas of .lockgate.yaml and work-packages.yaml, for editors
// (a YAML language server validates and completes a file against one).
// They are generated from the types the strict decoder reads, by its own
// rules (fieldIndex, the scalars it takes, a null keeping the default),
// so that they accept what lockgate accepts; what the decoder checks
// beyond a value's shape (a key's grammar, a duration's, ranges) is
// `lockgate config validate`'s. This file generates them: the generator
// is a test, so that neither the schema library nor its tables are linked
// into lockgate itself. `make docs` writes them (LOCKGATE_UPDATE_DOCS=1).
var schemaFiles = []struct {
	file, title string
	root        reflect.Type
}{
	{"../../docs/schema/lockgate.schema.json", "lockgate policy (.lockgate.yaml)", reflect.TypeOf(Config{})},
	{"../../docs/schema/work-packages.schema.json", "lockgate work packages (work-packages.yaml)", reflect.TypeOf(WorkPackages{})},
}

func TestSchemasCurrent(t *testing.T) {
	t.Parallel()
	for _, f := range schemaFiles {
		got := schemaJSON(t, f.title, f.root)
		if os.Getenv("LOCKGATE_UPDATE_DOCS") == "1" {
			if err := os.WriteFile(f.file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatalf("%v: run `make docs`", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not the schema of the types lockgate decodes: run `make docs`", f.file)
		}
	}
}

// TestSchemasJudgeAsLockgate validates documents against the schemas as
// an editor would: the starter policy, a policy using every section, and
// a work packages file pass, as lockgate loads them; a mistyped key, a
// value of the wrong kind and an unknown section fail, as lockgate
// refuses them.
func TestSchemasJudgeAsLockgate(t *testing.T) {
	t.Parallel()
	starter, err := os.ReadFile("../../service/starter.lockgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	packages, err := os.ReadFile("testdata/work-packages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	full := `version: 1
locks: {store: git, per_branch: true, release_on_merge: true, agents_clear_human: false}
scope: {core: ["go.mod"]}
workflow: {auto_commit: true, branch: lockgate/workflow}
trust: {pushers: {alice.smith: alice}}
`
	tests := []struct {
		name   string
		schema int
		doc    string
		ok     bool
	}{
		{"starter policy", 0, string(starter), true},
		{"every section", 0, full, true},
		{"null keeps the default", 0, "version: 1\nlocks:\n", true},
		{"mistyped key", 0, "version: 1\nlocks: {per_brnach: true}\n", false},
		{"wrong kind", 0, "version: 1\nlocks: {per_branch: [yes]}\n", false},
		{"unknown section", 0, "version: 1\nlockz: {}\n", false},
		{"work packages", 1, string(packages), true},
		{"work package with an unknown key", 1, "packages:\n  - id: a\n    owner: bob\n", false},
	}
	var resolved []*jsonschema.Resolved
	for _, f := range schemaFiles {
		var s jsonschema.Schema
		if err := json.Unmarshal(schemaJSON(t, f.title, f.root), &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", f.file, err)
		}
		resolved = append(resolved, rs)
	}
	for _, tc := range tests {
		var doc any
		if err := yaml.Unmarshal([]byte(tc.doc), &doc); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		err := resolved[tc.schema].Validate(jsonValue(doc))
		if (err == nil) != tc.ok {
			t.Errorf("%s: schema says %v, want ok=%v", tc.name, err, tc.ok)
		}
		var lerr error
		if tc.schema == 0 {
			_, lerr = LoadBytes(".lockgate.yaml", []byte(tc.doc))
		} else {
			_, lerr = LoadWorkPackagesBytes("work-packages.yaml", []byte(tc.doc))
		}
		if (lerr == nil) != tc.ok {
			t.Errorf("%s: lockgate says %v, want ok=%v (the test's own case is wrong)", tc.name, lerr, tc.ok)
		}
	}
}

// jsonValue is a YAML document as JSON would hold it: mappings with
// string keys, integers as float64.
func jsonValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case int:
		return float64(x)
	}
	return v
}

func schemaJSON(t *testing.T, title string, root reflect.Type) []byte {
	t.Helper()
	s := schemaOf(root)
	s.Schema = "https://json-schema.org/draft/2020-12/schema"
	s.Title = title
	s.Description = "Generated from lockgate's decoder by `make docs`; lockgate config validate checks the values further."
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// schemaOf is what the decoder (decoder.decode) takes into a value of
// type t.
func schemaOf(t reflect.Type) *jsonschema.Schema {
	orNull := func(types ...string) []string { return append(types, "null") }
	switch {
	case t == durationType:
		return &jsonschema.Schema{Types: orNull("string"), Description: "a duration such as 90s, 30m, 8h, 2d or 1w"}
	case t == workerListType:
		return &jsonschema.Schema{Types: orNull("string", "array"), Items: &jsonschema.Schema{Types: []string{"string"}},
			Description: "a worker id, or a list of them"}
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &jsonschema.Schema{Types: orNull("object"), Properties: map[string]*jsonschema.Schema{},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
		fields := fieldIndex(t)
		for _, name := range slices.Sorted(maps.Keys(fields)) {
			s.Properties[name] = schemaOf(t.FieldByIndex(fields[name]).Type)
		}
		return s
	case reflect.Slice:
		return &jsonschema.Schema{Types: orNull("array"), Items: schemaOf(t.Elem())}
	case reflect.Map:
		return &jsonschema.Schema{Types: orNull("object"), AdditionalProperties: schemaOf(t.Elem())}
	case reflect.String:
		// decoder.scalar: any scalar but null is read as its text.
		return &jsonschema.Schema{Types: orNull("string", "number", "boolean")}
	case reflect.Int:
		return &jsonschema.Schema{Types: orNull("integer")}
	case reflect.Bool:
		return &jsonschema.Schema{Types: orNull("boolean")}
	}
	panic(fmt.Sprintf("schemaOf: the decoder reads no %s (%s)", t, strings.ToLower(t.Kind().String())))
}
