package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	importsBegin = "<!-- imports: generated from `go list` by `make docs`; TestArchitectureImportsCurrent -->"
	importsEnd   = "<!-- end of imports -->"
)

// TestArchitectureImportsCurrent holds the import table of
// docs/architecture.md to the packages' real imports (tests left out):
// a package added, moved or importing another without the table being
// regenerated fails here. `make docs` regenerates it
// (LOCKGATE_UPDATE_DOCS=1).
func TestArchitectureImportsCurrent(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var table strings.Builder
	table.WriteString(importsBegin + "\n\n| package | imports (lockgate's own) |\n|---|---|\n")
	rows := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue
		}
		var deps []string
		for _, imp := range fields[1:] {
			if d, ok := strings.CutPrefix(imp, module+"/"); ok {
				deps = append(deps, "`"+d+"`")
			}
		}
		fmt.Fprintf(&table, "| `%s` | %s |\n", pkg, strings.Join(deps, ", "))
		rows++
	}
	table.WriteString("\n" + importsEnd)
	if rows < 20 {
		t.Fatalf("go list named %d of lockgate's packages, want them all:\n%s", rows, out)
	}
	file := filepath.Join(root, "docs", "architecture.md")
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(importsBegin)), bytes.Index(doc, []byte(importsEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no import table between %q and %q", file, importsBegin, importsEnd)
	}
	cur := string(doc[i : j+len(importsEnd)])
	if cur == table.String() {
		return
	}
	if os.Getenv("LOCKGATE_UPDATE_DOCS") == "1" {
		updated := append(append(append([]byte(nil), doc[:i]...), table.String()...), doc[j+len(importsEnd):]...)
		if err := os.WriteFile(file, updated, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("docs/architecture.md's import table is not the packages' imports: run `make docs`")
}
