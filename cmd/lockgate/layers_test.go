package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const module = "github.com/lockgate/lockgate"

// layers maps a layer's directory (a top-level directory of the module,
// "frontend") to what its packages may not import, as directories of the
// module ("model/locks/filestore", "service").
type layers map[string][]string

// TestLayers holds three descriptions of the layers to each other: the
// layer-* depguard rules of .golangci.yml (what lint enforces), the layer
// table of docs/architecture.md (what people read) and the imports of
// every Go file of the module (what is).
func TestLayers(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	lint, err := lintLayers(filepath.Join(root, ".golangci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := docLayers(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lint) < 4 {
		t.Fatalf(".golangci.yml has %d layer rules, want the four layers: %v", len(lint), lint)
	}
	for _, d := range disagreements(lint, doc) {
		t.Errorf(".golangci.yml and docs/architecture.md disagree: %s", d)
	}
	broken, err := brokenLayers(root, lint)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Errorf("%s", b)
	}
}

// TestLayersCatchDisagreement feeds the comparison and the import check
// descriptions that differ, so that TestLayers cannot pass by reading
// nothing.
func TestLayersCatchDisagreement(t *testing.T) {
	t.Parallel()
	lint := layers{"model": {"frontend", "service"}, "internal": {"model"}}
	doc := layers{"model": {"frontend"}, "service": {"frontend"}}
	got := disagreements(lint, doc)
	want := []string{
		`layer "internal": .golangci.yml forbids [model], docs/architecture.md lists no such layer`,
		`layer "model": .golangci.yml forbids [frontend service], docs/architecture.md [frontend]`,
		`layer "service": docs/architecture.md forbids [frontend], .golangci.yml has no rule for it`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("disagreements:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "model", "x", "x.go")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package x\n\nimport _ \"" + module + "/service/outcome\"\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	broken, err := brokenLayers(dir, lint)
	if err != nil {
		t.Fatal(err)
	}
	if len(broken) != 1 || !strings.Contains(broken[0], "model/x/x.go imports "+module+"/service/outcome") {
		t.Fatalf("brokenLayers = %q, want the model file importing the service", broken)
	}
}

// lintLayers reads the layer-* depguard rules: each names one layer by a
// files glob "**/<dir>/**" and denies packages of the module.
func lintLayers(file string) (layers, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read lint config: %w", err)
	}
	var cfg struct {
		Linters struct {
			Settings struct {
				Depguard struct {
					Rules map[string]struct {
						Files []string `yaml:"files"`
						Deny  []struct {
							Pkg string `yaml:"pkg"`
						} `yaml:"deny"`
					} `yaml:"rules"`
				} `yaml:"depguard"`
			} `yaml:"settings"`
		} `yaml:"linters"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	out := layers{}
	for name, rule := range cfg.Linters.Settings.Depguard.Rules {
		if !strings.HasPrefix(name, "layer-") {
			continue
		}
		if len(rule.Files) != 1 || !strings.HasPrefix(rule.Files[0], "**/") || !strings.HasSuffix(rule.Files[0], "/**") {
			return nil, fmt.Errorf("%s: rule %s: files %q, want one glob \"**/<dir>/**\"", file, name, rule.Files)
		}
		dir := strings.TrimSuffix(strings.TrimPrefix(rule.Files[0], "**/"), "/**")
		var deny []string
		for _, d := range rule.Deny {
			rel, ok := strings.CutPrefix(d.Pkg, module+"/")
			if !ok {
				return nil, fmt.Errorf("%s: rule %s denies %s, outside the module", file, name, d.Pkg)
			}
			deny = append(deny, rel)
		}
		slices.Sort(deny)
		out[dir] = deny
	}
	return out, nil
}

// tableRow is a row of the layer table: | name | `dir/` | `a`, `b/` |.
var tableRow = regexp.MustCompile("^\\|[^|]+\\|\\s*`([a-z/]+)/`\\s*\\|([^|]*)\\|\\s*$")

var codeSpan = regexp.MustCompile("`([^`]+)`")

// docLayers reads the table of docs/architecture.md whose header is
// "| layer | directory | may not import |".
func docLayers(file string) (layers, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read architecture: %w", err)
	}
	out := layers{}
	in := false
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "| layer | directory | may not import |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			m := tableRow.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("%s: layer table row %q is not | layer | `dir/` | `pkg`, … |", file, line)
			}
			var deny []string
			for _, c := range codeSpan.FindAllStringSubmatch(m[2], -1) {
				deny = append(deny, strings.TrimSuffix(c[1], "/"))
			}
			slices.Sort(deny)
			out[m[1]] = deny
		case in:
			return out, nil
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no layer table (| layer | directory | may not import |)", file)
	}
	return out, nil
}

// disagreements lists each layer the two descriptions see differently.
func disagreements(lint, doc layers) []string {
	var dirs, out []string
	for d := range lint {
		dirs = append(dirs, d)
	}
	for d := range doc {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	for _, dir := range slices.Compact(dirs) {
		l, inLint := lint[dir]
		d, inDoc := doc[dir]
		switch {
		case !inDoc:
			out = append(out, fmt.Sprintf("layer %q: .golangci.yml forbids %v, docs/architecture.md lists no such layer", dir, l))
		case !inLint:
			out = append(out, fmt.Sprintf("layer %q: docs/architecture.md forbids %v, .golangci.yml has no rule for it", dir, d))
		case !slices.Equal(l, d):
			out = append(out, fmt.Sprintf("layer %q: .golangci.yml forbids %v, docs/architecture.md %v", dir, l, d))
		}
	}
	return out
}

// brokenLayers lists every import of a Go file under root (tests included)
// that its layer forbids, and every package outside the layers but for
// cmd/, the binary, which sits on top of them all.
func brokenLayers(root string, ls layers) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			// bench/ is a module of its own; testdata holds no package.
			if rel == "bench" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		top, _, nested := strings.Cut(rel, "/")
		deny, inLayer := ls[top]
		if !inLayer {
			if nested && top != "cmd" {
				out = append(out, fmt.Sprintf("%s: in no layer (.golangci.yml's layer-* rules)", rel))
			}
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("parse %s: %w", rel, err)
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", rel, spec.Path.Value, err)
			}
			for _, d := range deny {
				if p := module + "/" + d; imp == p || strings.HasPrefix(imp, p+"/") {
					out = append(out, fmt.Sprintf("%s imports %s: layer %s/ may not import %s", rel, imp, top, d))
				}
			}
		}
		return nil
	})
	return out, err
}
