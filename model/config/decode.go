package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/lockgate/lockgate/internal/duration"
)

// maxNodes bounds the work done on one document: every value and every
// mapping key decoded counts, each time an alias expands it, so that alias
// chains ("billion laughs") cannot make decoding explode.
const maxNodes = 100_000

// maxWorkPackageNodes is the same bound for a work packages file, whose
// largest (MaxWorkPackages packages) holds far more values than any
// .lockgate.yaml: up to 100 a package.
const maxWorkPackageNodes = 100 * MaxWorkPackages

// parseDocument parses data as at most one YAML document. It returns the
// document's root node, or nil for an empty document (no content, only
// comments, or an explicit null).
func parseDocument(ps *problems, data []byte) (root *yaml.Node) {
	defer func() {
		// yaml.v3 reports errors through panics it recovers itself; anything
		// else escaping it must not crash the caller.
		if r := recover(); r != nil {
			root = nil
			ps.add(WholeFile, 0, "cannot parse YAML: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		yamlProblem(ps, data, err)
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		ps.add(extra.Line, extra.Column, "multiple YAML documents: the file must hold exactly one")
		return nil
	case errors.Is(err, io.EOF):
	default:
		yamlProblem(ps, data, err)
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	root = doc.Content[0]
	if isNull(root) {
		return nil
	}
	return root
}

// yamlLineRE is compiled on first use: every process links this package,
// few parse a broken file.
var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// yamlProblem converts a yaml.v3 syntax error into a Problem with a line.
// yaml.v3 omits the position of errors on the first line and of
// encoding errors; those are recovered here as far as possible.
func yamlProblem(ps *problems, data []byte, err error) {
	msg := err.Error()
	if line, text, ok := splitYAMLError(msg); ok {
		ps.add(line, 0, "invalid YAML: %s", text)
		return
	}
	text := strings.TrimPrefix(msg, "yaml: ")
	// Encoding errors: find the offending byte ourselves.
	if line := badByteLine(data); line > 0 {
		ps.add(line, 0, "invalid YAML: %s", text)
		return
	}
	if strings.HasPrefix(text, "unknown anchor ") {
		name := strings.TrimSuffix(strings.TrimPrefix(text, "unknown anchor '"), "' referenced")
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 && name != "" {
			ps.add(1+bytes.Count(data[:i], []byte("\n")), 0, "invalid YAML: %s", text)
			return
		}
	}
	// yaml.v3 drops the position when it is on the first line (its lines
	// are 0-based internally and 0 means "unknown"): parse again shifted by
	// one line to learn it.
	if line, ok := shiftedLine(data); ok {
		ps.add(line, 0, "invalid YAML: %s", text)
		return
	}
	ps.add(WholeFile, 0, "invalid YAML: %s", text)
}

func splitYAMLError(msg string) (int, string, bool) {
	m := yamlLineRE().FindStringSubmatch(strings.SplitN(msg, "\n", 2)[0])
	if m == nil {
		return 0, "", false
	}
	var line int
	if _, err := fmt.Sscanf(m[1], "%d", &line); err != nil || line < 1 {
		return 0, "", false
	}
	return line, m[2], true
}

func shiftedLine(data []byte) (line int, ok bool) {
	defer func() {
		if recover() != nil {
			line, ok = 0, false
		}
	}()
	shifted := append([]byte("\n"), data...)
	dec := yaml.NewDecoder(bytes.NewReader(shifted))
	for i := 0; i < 2; i++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == nil {
			continue
		}
		if l, _, ok := splitYAMLError(err.Error()); ok {
			return max(l-1, 1), true
		}
		return 0, false
	}
	return 0, false
}

// badByteLine returns the 1-based line of the first byte yaml.v3 refuses to
// read (invalid UTF-8, control characters), or 0.
func badByteLine(data []byte) int {
	if bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}) {
		data = data[3:]
	} else if bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) {
		return 0 // UTF-16: positions are not byte positions
	}
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return line
		}
		switch {
		case r == '\n':
			line++
		case r == '\t' || r == '\r':
		case r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0x9F && r != 0x85) ||
			(r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF:
			return line
		}
		i += size
	}
	return 0
}

// isNull reports whether n is a null scalar (`~`, `null`, or nothing).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// decoder fills Go values from a YAML node tree, strictly: every unknown key
// and wrong type becomes a Problem, and decoding goes on to find the rest.
type decoder struct {
	ps     *problems
	pos    map[string]int                    // value path ("hooks.require_lock", "scope.core[2]") -> line
	budget int                               // values left to decode
	limit  int                               // the budget it started with, for the message
	active map[*yaml.Node]bool               // alias targets being expanded, to stop cycles
	fields map[reflect.Type]map[string][]int // fieldIndex of each struct type met
}

// newDecoder decodes at most limit values (maxNodes, maxWorkPackageNodes).
func newDecoder(ps *problems, limit int) *decoder {
	return &decoder{ps: ps, pos: map[string]int{}, budget: limit, limit: limit, active: map[*yaml.Node]bool{}}
}

var (
	durationType   = reflect.TypeOf(Duration(0))
	workerListType = reflect.TypeOf(WorkerList(nil))
)

// where names a path for messages.
func where(path string) string {
	if path == "" {
		return "top level"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe says what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!str":
		return "string " + quote(n.Value)
	case "!!int":
		return "integer " + n.Value
	case "!!float":
		return "number " + n.Value
	case "!!bool":
		return "boolean " + n.Value
	case "!!timestamp":
		return "timestamp " + n.Value
	}
	return fmt.Sprintf("%s value %s", n.ShortTag(), quote(n.Value))
}

// resolve follows aliases to the node they name. ok is false (and a problem
// recorded) for a cycle. The caller must call release(target) when done.
func (d *decoder) enterAlias(n *yaml.Node, path string) (*yaml.Node, bool) {
	target := n.Alias
	if target == nil {
		d.ps.add(n.Line, n.Column, "%s: alias *%s names nothing", where(path), n.Value)
		return nil, false
	}
	if d.active[target] {
		d.ps.add(n.Line, n.Column, "%s: alias *%s refers to itself", where(path), n.Value)
		return nil, false
	}
	d.active[target] = true
	return target, true
}

// spend counts one node against the budget; false once it is exhausted.
func (d *decoder) spend(n *yaml.Node) bool {
	if d.budget <= 0 {
		return false
	}
	d.budget--
	if d.budget == 0 {
		d.ps.add(n.Line, n.Column, "document too large or too deeply aliased (more than %d values)", d.limit)
		return false
	}
	return true
}

// decode stores n into v (addressable), reporting problems under path. A
// null leaves v as it was (the default); null list entries become zero
// values, which validation then reports as empty.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if !d.spend(n) {
		return
	}
	if n.Kind == yaml.AliasNode {
		target, ok := d.enterAlias(n, path)
		if !ok {
			return
		}
		d.decode(target, v, path)
		delete(d.active, target)
		return
	}
	if isNull(n) {
		return // keep the default
	}
	if v.Type() == durationType {
		d.decodeDuration(n, v, path)
		return
	}
	if v.Type() == workerListType && n.Kind == yaml.ScalarNode {
		// One worker id stands for a list of one.
		if s, ok := d.scalar(n, path, "a worker id or a list of them"); ok {
			v.Set(reflect.ValueOf(WorkerList{s}))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.String:
		if s, ok := d.scalar(n, path, "a string"); ok {
			v.SetString(s)
		}
	case reflect.Int:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			d.ps.add(n.Line, n.Column, "%s: expected an integer, got %s", where(path), describe(n))
			return
		}
		var i int
		if err := n.Decode(&i); err != nil {
			d.ps.add(n.Line, n.Column, "%s: integer %s out of range", where(path), n.Value)
			return
		}
		v.SetInt(int64(i))
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			d.ps.add(n.Line, n.Column, "%s: expected true or false, got %s", where(path), describe(n))
			return
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			d.ps.add(n.Line, n.Column, "%s: expected true or false, got %s", where(path), describe(n))
			return
		}
		v.SetBool(b)
	default:
		d.ps.add(n.Line, n.Column, "%s: cannot decode into %s", where(path), v.Type())
	}
}

// scalar returns the text of a plain scalar (string, number, boolean).
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str", "!!int", "!!float", "!!bool", "!!timestamp":
			return n.Value, true
		}
	}
	d.ps.add(n.Line, n.Column, "%s: expected %s, got %s", where(path), want, describe(n))
	return "", false
}

func (d *decoder) decodeDuration(n *yaml.Node, v reflect.Value, path string) {
	s, ok := d.scalar(n, path, "a duration such as 30m or 8h")
	if !ok {
		return
	}
	dur, err := parseDuration(s)
	if err != nil {
		d.ps.add(n.Line, n.Column, "%s: %v", where(path), err)
		return
	}
	v.SetInt(int64(dur))
}

// pair is one key/value of a mapping.
type pair struct{ key, val *yaml.Node }

// pairs returns the entries of mapping n with `<<` merge keys applied:
// explicit keys first win over merged ones, and among merged mappings the
// earlier one wins. Duplicate explicit keys and non-string keys are reported
// and skipped.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	var explicit, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if !d.spend(k) {
			break
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, d.mergePairs(val, path)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.ps.add(k.Line, k.Column, "%s: keys must be strings, got %s", where(path), describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.ps.add(k.Line, k.Column, "duplicate key %s in %s (first at line %d)", quote(k.Value), where(path), first.Line)
			continue
		}
		seen[k.Value] = k
		explicit = append(explicit, pair{k, val})
	}
	out := make([]pair, 0, len(explicit)+len(merged))
	for _, p := range merged {
		if _, ok := seen[p.key.Value]; ok {
			continue
		}
		seen[p.key.Value] = p.key
		out = append(out, p)
	}
	return append(out, explicit...)
}

// mergePairs returns the entries a `<<` value contributes.
func (d *decoder) mergePairs(val *yaml.Node, path string) []pair {
	if !d.spend(val) {
		return nil
	}
	switch val.Kind {
	case yaml.AliasNode:
		target, ok := d.enterAlias(val, path)
		if !ok {
			return nil
		}
		defer delete(d.active, target)
		return d.mergePairs(target, path)
	case yaml.MappingNode:
		return d.pairs(val, path)
	case yaml.SequenceNode:
		var out []pair
		have := map[string]bool{}
		for _, item := range val.Content {
			if item.Kind == yaml.SequenceNode {
				d.ps.add(item.Line, item.Column, "%s: << takes a mapping or a list of mappings", where(path))
				continue
			}
			for _, p := range d.mergePairs(item, path) {
				if !have[p.key.Value] {
					have[p.key.Value] = true
					out = append(out, p)
				}
			}
		}
		return out
	}
	d.ps.add(val.Line, val.Column, "%s: << takes a mapping or a list of mappings, got %s", where(path), describe(val))
	return nil
}

// fieldIndex maps YAML names to struct field index paths: the `yaml` tag
// name, else the lowercased field name (yaml.v3's rule); the fields of an
// embedded struct tagged `yaml:",inline"` as the struct's own. `yaml:"-"`
// and unexported fields are skipped.
func fieldIndex(t reflect.Type) map[string][]int {
	m := make(map[string][]int, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct && opts == "inline" {
			for n, idx := range fieldIndex(f.Type) {
				m[n] = append([]int{i}, idx...)
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = []int{i}
	}
	return m
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.ps.add(n.Line, n.Column, "%s: expected a mapping, got %s", where(path), describe(n))
		return
	}
	fields, ok := d.fields[v.Type()]
	if !ok {
		// Once per type: a work packages file has thousands of one struct.
		fields = fieldIndex(v.Type())
		if d.fields == nil {
			d.fields = map[reflect.Type]map[string][]int{}
		}
		d.fields[v.Type()] = fields
	}
	for _, p := range d.pairs(n, path) {
		i, ok := fields[p.key.Value]
		if !ok {
			if path == "" {
				d.ps.add(p.key.Line, p.key.Column, "unknown key %s", quote(p.key.Value))
			} else {
				d.ps.add(p.key.Line, p.key.Column, "unknown key %s in %s", quote(p.key.Value), path)
			}
			continue
		}
		child := join(path, p.key.Value)
		d.pos[child] = p.key.Line
		d.decode(p.val, v.FieldByIndex(i), child)
	}
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.ps.add(n.Line, n.Column, "%s: expected a list, got %s", where(path), describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		child := fmt.Sprintf("%s[%d]", path, i)
		d.pos[child] = item.Line
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(item, elem, child)
		s = reflect.Append(s, elem)
	}
	v.Set(s)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.ps.add(n.Line, n.Column, "%s: expected a mapping, got %s", where(path), describe(n))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	for _, p := range d.pairs(n, path) {
		child := join(path, p.key.Value)
		d.pos[child] = p.key.Line
		key := reflect.ValueOf(p.key.Value).Convert(v.Type().Key())
		elem := reflect.New(v.Type().Elem()).Elem()
		if old := v.MapIndex(key); old.IsValid() {
			elem.Set(old)
		}
		d.decode(p.val, elem, child)
		v.SetMapIndex(key, elem)
	}
}

// parseDuration accepts what every duration flag does: Go durations plus
// days and weeks ("90s", "30m", "8h", "2d", "1w").
func parseDuration(s string) (time.Duration, error) {
	dur, err := duration.Parse(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid duration %s: use a duration such as 30m, 8h or 2d", quote(s))
	}
	return dur, nil
}
