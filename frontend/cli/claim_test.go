package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestClaimUntitled: a claimed package without a title is named by its id
// alone, not followed by empty parentheses.
func TestClaimUntitled(t *testing.T) {
	r := gittest.New(t)
	r.Write("work-packages.yaml", "packages:\n  - id: WP-1\n    locks:\n      files: [a.go]\n")
	r.Commit("init")
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"-C", r.Dir, "--as", "alice", "--color", "never", "claim", "WP-1"},
		Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	if code != 0 || out.String() != "WP-1\n" || !strings.Contains(errOut.String(), "\nclaimed WP-1: 2 locks in ") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want WP-1 claimed without a title", code, out.String(), errOut.String())
	}
}
