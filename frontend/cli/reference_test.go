package cli

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// referenceFile is the command-line reference, generated from the command
// tree: every command's help, as `lockgate COMMAND --help` prints it.
const referenceFile = "../../docs/cli.md"

// TestCLIReferenceCurrent holds docs/cli.md to the command tree: a
// command, flag or help text changed without regenerating it fails here.
// `make docs` regenerates it (LOCKGATE_UPDATE_DOCS=1).
func TestCLIReferenceCurrent(t *testing.T) {
	t.Parallel()
	got := cliReference(t)
	if os.Getenv("LOCKGATE_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(referenceFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referenceFile)
	if err != nil {
		t.Fatalf("%v: run `make docs`", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("docs/cli.md is not the command tree's help (line %d: %q, the tree says %q): run `make docs`", i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("docs/cli.md has %d lines, the command tree's help %d: run `make docs`", len(wl), len(gl))
	}
}

// cliReference renders the help of lockgate and of every command under
// it, depth first, in name order.
func cliReference(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("# Command-line reference\n\n" +
		"Every command's help, as `lockgate COMMAND --help` prints it. Generated\n" +
		"from the command tree by `make docs`; a test fails when it is not\n" +
		"current. What the commands do, with examples: the other pages here\n" +
		"and the [README](../README.md).\n")
	help := func(path []string) {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append(slices.Clip(path), "--help"), Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
		if code != 0 {
			t.Fatalf("lockgate %s --help: exit %d: %s", strings.Join(path, " "), code, errOut.String())
		}
		fmt.Fprintf(&b, "\n## %s\n\n```text\n%s```\n", strings.TrimSpace("lockgate "+strings.Join(path, " ")), out.String())
	}
	help(nil)
	var walk func(path []string, cmds map[string]*command)
	walk = func(path []string, cmds map[string]*command) {
		for _, name := range slices.Sorted(maps.Keys(cmds)) {
			p := append(slices.Clip(path), name)
			help(p)
			walk(p, cmds[name].sub)
		}
	}
	walk(nil, commands())
	return b.Bytes()
}
