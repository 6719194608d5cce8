package cli

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestGroupUsage: every command group (a command with subcommands and no
// run of its own) prints one usage line, "lockgate GROUP [command]", in
// its help: not its own use line beside it, which names no command that
// runs.
func TestGroupUsage(t *testing.T) {
	t.Parallel()
	var groups [][]string
	var walk func(path []string, cmds map[string]*command)
	walk = func(path []string, cmds map[string]*command) {
		for _, name := range slices.Sorted(maps.Keys(cmds)) {
			c := cmds[name]
			p := append(slices.Clip(path), name)
			if len(c.sub) > 0 && c.run == nil {
				groups = append(groups, p)
			}
			walk(p, c.sub)
		}
	}
	walk(nil, commands())
	if len(groups) < 8 {
		t.Fatalf("found %d command groups (%v), want lock, workflow, ports, guard, hook, session, store and serve user at least", len(groups), groups)
	}
	for _, g := range groups {
		t.Run(strings.Join(g, " "), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			code := Main(context.Background(), append(slices.Clip(g), "--help"), Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut.String())
			}
			_, rest, ok := strings.Cut(out.String(), "\nUsage:\n")
			if !ok {
				t.Fatalf("no Usage: section in\n%s", out.String())
			}
			usage, _, _ := strings.Cut(rest, "\n\n")
			want := "  lockgate " + strings.Join(g, " ") + " [command]"
			if usage != want {
				t.Errorf("usage lines:\n%s\nwant:\n%s", usage, want)
			}
		})
	}
}

// TestRunnableUsage: a command that runs keeps its own use line: a
// subcommand of a group, and a command that runs and has subcommands
// (pause), which prints the line of its subcommands too.
func TestRunnableUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pause", "--help"}, "\nUsage:\n  lockgate pause FEATURE [--reason R] [--ttl D]\n  lockgate pause [command]\n\n"},
		{[]string{"lock", "release", "--help"}, "\nUsage:\n  lockgate lock release KEY... [--force] [--branch B]\n\n"},
		{[]string{"serve", "user", "add", "--help"}, "\nUsage:\n  lockgate serve user add NAME\n\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			if code := Main(context.Background(), tt.args, Stdio{In: strings.NewReader(""), Out: &out, Err: &out}); code != 0 {
				t.Fatalf("exit %d: %s", code, out.String())
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("%s:\n%s\nwant it to contain:\n%s", strings.Join(tt.args, " "), out.String(), tt.want)
			}
		})
	}
}
