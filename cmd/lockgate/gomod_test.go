package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `go install github.com/lockgate/lockgate/cmd/lockgate@VERSION` refuses a
// module whose go.mod has replace (or exclude) directives: users install
// lockgate that way, so go.mod must have none.
func TestGoModInstallable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == "replace" || f[0] == "exclude") {
			t.Errorf("go.mod:%d: %q: go install MODULE@VERSION refuses a module with %s directives", i+1, line, f[0])
		}
	}
}
