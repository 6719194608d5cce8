package mcpserver

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzToolArguments: a tool's arguments are accepted only as one JSON
// object (or nothing) with the required fields, and what is accepted
// survives a round trip through its type.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		`{"file_path":"a.py","reason":"r","ttl_minutes":5,"keys":["b.py"]}`,
		`{"paths":["a.py"],"profile":"backfill"}`,
		`{"file_path":42}`, `{"paths":null}`, `{"ttl":1}`, `{"a":1} {}`,
		`null`, `[]`, ``, `"x"`, `{"keys":[1]}`, "\xff",
	} {
		f.Add(s)
	}
	acquireSchema, err := jsonschema.For[acquireIn](nil)
	if err != nil {
		f.Fatal(err)
	}
	checkChangeSchema, err := jsonschema.For[checkChangeIn](nil)
	if err != nil || !slices.Contains(checkChangeSchema.Required, "paths") {
		f.Fatalf("check_change schema %v: %v", checkChangeSchema, err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw := json.RawMessage(s)
		blank := strings.TrimSpace(s) == "" || strings.TrimSpace(s) == "null"
		if in, err := decodeArguments[acquireIn](raw, acquireSchema); err == nil {
			var fields map[string]any
			if !blank && json.Unmarshal(raw, &fields) != nil {
				t.Fatalf("accepted %q", s)
			}
			for f := range fields {
				if acquireSchema.Properties[f] == nil {
					t.Fatalf("accepted %q with field %q", s, f)
				}
			}
			b, _ := json.Marshal(in)
			again, err := decodeArguments[acquireIn](b, acquireSchema)
			if b2, _ := json.Marshal(again); err != nil || string(b2) != string(b) {
				t.Fatalf("%q: %s does not survive a round trip: %s, %v", s, b, b2, err)
			}
		}
		if _, err := decodeArguments[checkChangeIn](raw, checkChangeSchema); err == nil {
			var fields map[string]json.RawMessage
			if json.Unmarshal(raw, &fields) != nil || fields["paths"] == nil {
				t.Fatalf("accepted %q without paths", s)
			}
		}
	})
}
