package diffpath

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/patches/*.golden from the parser's output")

// TestParsePatchGolden parses every fixture in testdata/patches and compares
// with its .golden file: one change per line (see formatChanges), or the
// error.
func TestParsePatchGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "patches", "*.patch"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".patch")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := ParsePatch(bytes.NewReader(data))
			got := formatChanges(changes)
			if err != nil {
				got = "error: " + err.Error() + "\n"
			}
			golden := strings.TrimSuffix(f, ".patch") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./diffpath -update to create it)", err)
			}
			if got != string(want) {
				t.Fatalf("ParsePatch(%s):\ngot:\n%swant:\n%s", f, got, want)
			}
		})
	}
}
