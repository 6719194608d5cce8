package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestArgumentCounts: a command that takes no arguments, or exactly one,
// refuses others before it loads anything (exit 2), naming itself.
func TestArgumentCounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"version", "x"}, "lockgate: version takes no arguments\n"},
		{[]string{"ports", "list", "x"}, "lockgate: ports list takes no arguments\n"},
		{[]string{"-C", "/nonexistent", "ports", "allocate", "x"}, "lockgate: ports allocate takes no arguments\n"},
		{[]string{"workflow", "sync", "x"}, "lockgate: workflow sync takes no arguments\n"},
		{[]string{"store", "show", "x"}, "lockgate: store show takes no arguments\n"},
		{[]string{"init", "x"}, "lockgate: init takes no arguments\n"},
		{[]string{"mcp", "x"}, "lockgate: mcp takes no arguments\n"},
		{[]string{"pause"}, "lockgate: pause: give exactly one FEATURE\n"},
		{[]string{"unpause", "a", "b"}, "lockgate: unpause: give exactly one FEATURE\n"},
		{[]string{"pause", "status"}, "lockgate: pause status: give exactly one FEATURE\n"},
		{[]string{"pause", "wait", "a", "b", "--timeout", "1s"}, "lockgate: pause wait: give exactly one FEATURE\n"},
		{[]string{"plan"}, "lockgate: plan: give the TASKS.yaml file\n"},
		{[]string{"lock", "release"}, "lockgate: lock release: give at least one KEY\n"},
		{[]string{"lock", "check"}, "lockgate: lock check: give at least one KEY or PATH\n"},
		{[]string{"guard", "edit"}, "lockgate: guard edit: give at least one PATH\n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			code := Main(context.Background(), append([]string{"--color", "never"}, tt.args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
			if code != 2 || errOut.String() != tt.want || out.Len() != 0 {
				t.Fatalf("exit %d, stderr %q, stdout %q; want exit 2 and %q", code, errOut.String(), out.String(), tt.want)
			}
		})
	}
}

// TestReply: a result goes to stdout as JSON under --json, else as the
// text the command prints.
func TestReply(t *testing.T) {
	t.Parallel()
	for _, json := range []bool{false, true} {
		var out bytes.Buffer
		a := &app{stdio: Stdio{Out: &out}, globals: Globals{JSON: json}}
		if err := a.reply(map[string]int{"n": 1}, func() { out.WriteString("one\n") }); err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "one\n", true: "{\n  \"n\": 1\n}\n"}[json]
		if out.String() != want {
			t.Fatalf("--json %v: %q, want %q", json, out.String(), want)
		}
	}
}

// TestEditDistance: the Levenshtein distance the flag suggestions use.
func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"wait", "", 4}, {"", "ttl", 3}, {"wiat", "wait", 2}, {"wai", "wait", 1}, {"kitten", "sitting", 3}, {"reason", "reason", 0}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
