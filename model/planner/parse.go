package planner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// Task is one pending task of the planner input.
type Task struct {
	// ID names the task; unique and non-empty.
	ID string `yaml:"id" json:"id"`
	// Type is the task type (lint, docs, feature...); for a backfill task
	// it names the backfill:type: key and must match [a-z0-9_-]+.
	Type string `yaml:"type" json:"type"`
	// Backfill marks a backfill task: scope-checked, cooled down after a
	// rejection, serialized with backfills of the same type.
	Backfill bool `yaml:"backfill" json:"backfill"`
	// TouchedPaths are the repo-relative paths or doublestar patterns the
	// task will change; each is also one of its locks.
	TouchedPaths []string `yaml:"touched_paths" json:"touched_paths"`
	// Keys are further lock keys (api:, db:, ...) the task needs.
	Keys []string `yaml:"keys" json:"keys,omitempty"`
}

// Input is a planner input file.
type Input struct {
	Tasks []Task `yaml:"tasks"`
}

// Limits on a planner input: a larger file is refused before it is parsed.
const (
	MaxInputBytes = 2 << 20
	MaxTasks      = 10_000
	// maxErrors bounds the problems one error message lists.
	maxErrors = 20
	// MaxAliasValues bounds the values aliases add to an input: a few
	// lines naming a long list again and again (*L) must not become more
	// paths than a file of MaxInputBytes could hold.
	MaxAliasValues = 100_000
)

// lineRE finds the line number in yaml.v3 error messages. Compiled on
// first use, not at the start of every lockgate process.
var lineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:yaml: )?line (\d+): `) })

// Parse reads a planner input file. name is used in error messages, which
// have the form "name:line: message". Unknown fields, empty or duplicate
// ids, a task with neither touched_paths nor keys, an invalid path or key
// and a backfill task without a valid type are errors. The returned tasks
// carry canonical paths and keys (lockkey). Keys in a namespace that is not
// among lockkey.DefaultNamespaces are kept as written: the lock store checks
// them against locks.namespaces.
func Parse(name string, data []byte) (*Input, error) {
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("%s: file larger than %d MiB, the most lockgate reads: refused unread", name, MaxInputBytes>>20)
	}
	if err := checkAliases(name, data); err != nil {
		return nil, err
	}
	var in Input
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&in); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s:1: empty input, want a tasks: list", name)
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return nil, yamlError(name, err)
		}
		return nil, fmt.Errorf("%s:%d: more than one YAML document", name, line)
	}
	if len(in.Tasks) > MaxTasks {
		return nil, fmt.Errorf("%s:1: %d tasks, more than the %d lockgate plans at once", name, len(in.Tasks), MaxTasks)
	}
	lines := taskLines(data)
	lineOf := func(i int) int {
		if i < len(lines) {
			return lines[i]
		}
		return 1
	}
	seen := make(map[string]int, len(in.Tasks))
	for i := range in.Tasks {
		t := &in.Tasks[i]
		if prev, dup := seen[t.ID]; dup && t.ID != "" {
			return nil, fmt.Errorf("%s:%d: duplicate task id %q (first at line %d)", name, lineOf(i), t.ID, lineOf(prev))
		}
		seen[t.ID] = i
		if err := normalizeTask(t); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, lineOf(i), err)
		}
	}
	return &in, nil
}

// checkAliases refuses data whose aliases expand to more than
// MaxAliasValues values, naming the alias that goes over. Syntax errors
// are left to the decoder, which reports them.
func checkAliases(name string, data []byte) error {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil {
		return nil
	}
	sizes := map[*yaml.Node]int{} // values a node stands for, aliases expanded
	var size func(n *yaml.Node) int
	size = func(n *yaml.Node) int {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
			if n == nil {
				return 1
			}
		}
		if v, ok := sizes[n]; ok {
			return v
		}
		sizes[n] = MaxAliasValues + 1 // an anchor that contains itself
		v := 1
		for _, c := range n.Content {
			v = min(v+size(c), MaxAliasValues+1)
		}
		sizes[n] = v
		return v
	}
	added := 0
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Kind == yaml.AliasNode {
			if added += size(n); added > MaxAliasValues {
				return fmt.Errorf("%s:%d: aliases expand to more than %d values; write the lists out, or split the input", name, n.Line, MaxAliasValues)
			}
			return nil
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(&doc)
}

// Patterns of yaml.v3's decoding errors, which speak of Go types.
var (
	unknownFieldRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^field (.+) not found in type planner\.(Input|Task)$`)
	})
	wrongTypeRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")
	})
)

// yamlError rewrites a yaml.v3 error as "name:line: message", in words
// of the input rather than of Go types.
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msgs = te.Errors
	}
	more := 0
	if len(msgs) > maxErrors {
		msgs, more = msgs[:maxErrors], len(msgs)-maxErrors
	}
	out := make([]string, len(msgs), len(msgs)+1)
	for i, m := range msgs {
		line := "1"
		if sub := lineRE().FindStringSubmatch(m); sub != nil {
			line = sub[1]
			m = m[len(sub[0]):]
		}
		m = strings.TrimPrefix(m, "yaml: ")
		out[i] = fmt.Sprintf("%s:%s: %s", name, line, plainYAML(m))
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("%s: … and %d more problems", name, more))
	}
	return errors.New(strings.Join(out, "\n"))
}

// plainYAML says what a yaml.v3 decoding message means for the input.
func plainYAML(m string) string {
	if sub := unknownFieldRE().FindStringSubmatch(m); sub != nil {
		if sub[2] == "Task" {
			return fmt.Sprintf("unknown task field %q; want %s", sub[1], fieldNames(reflect.TypeFor[Task]()))
		}
		return fmt.Sprintf("unknown field %q; want %s", sub[1], fieldNames(reflect.TypeFor[Input]()))
	}
	if sub := wrongTypeRE().FindStringSubmatch(m); sub != nil {
		got := map[string]string{"seq": "a list", "map": "a mapping"}[sub[1]]
		switch {
		case sub[2] != "":
			got = strconv.Quote(sub[2])
		case got == "":
			got = "a " + sub[1]
		}
		want := map[string]string{
			"string": "a string", "bool": "true or false", "[]string": "a list",
			"[]planner.Task": "a list", "planner.Input": "a mapping with a tasks: list",
			"planner.Task": "a task (a mapping with id and touched_paths or keys)",
		}[sub[3]]
		if want == "" {
			want = "another kind of value"
		}
		return fmt.Sprintf("want %s, got %s", want, got)
	}
	if m == "document contains excessive aliasing" {
		return "aliases expand too much; write the lists out, or split the input"
	}
	return m
}

// fieldNames lists the YAML fields of struct type t.
func fieldNames(t reflect.Type) string {
	var names []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			names = append(names, tag)
		}
	}
	return strings.Join(names, ", ")
}

// taskLines returns the line of every item of the tasks: sequence, in
// order. Parse only calls it after a successful decode.
func taskLines(data []byte) []int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "tasks" {
			continue
		}
		var lines []int
		for _, it := range m.Content[i+1].Content {
			lines = append(lines, it.Line)
		}
		return lines
	}
	return nil
}

// normalizeTask validates t and rewrites its paths and keys canonically.
func normalizeTask(t *Task) error {
	if strings.TrimSpace(t.ID) == "" {
		return errors.New("task with an empty id")
	}
	if len(t.TouchedPaths) == 0 && len(t.Keys) == 0 {
		return fmt.Errorf("task %s: no touched_paths and no keys: nothing to lock", t.ID)
	}
	if t.Backfill && !lockkey.IsWord(t.Type) {
		return fmt.Errorf("task %s: backfill task type %q must match [a-z0-9_-]+ (it names backfill:type:<type>)", t.ID, t.Type)
	}
	for i, p := range t.TouchedPaths {
		if ns := lockkey.Namespace(p); ns != "" {
			return fmt.Errorf("task %s: touched_paths[%d]: %q is a %s: key, not a path; list it under keys", t.ID, i, p, ns)
		}
		k, err := lockkey.Parse(p, nil)
		if err != nil {
			return fmt.Errorf("task %s: touched_paths[%d]: %w", t.ID, i, err)
		}
		t.TouchedPaths[i] = k.Canonical
	}
	for i, s := range t.Keys {
		c, err := lockkey.Canonical(s, nil)
		if err != nil {
			var ke *lockkey.Error
			if errors.As(err, &ke) && ke.NotPermitted {
				continue // a site namespace: left to the store
			}
			return fmt.Errorf("task %s: keys[%d]: %w", t.ID, i, err)
		}
		t.Keys[i] = c
	}
	return nil
}
