package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// runIn runs the lockgate binary in dir with stdin and returns its exit
// code and stderr.
func runIn(t *testing.T, r *gittest.Repo, stdin string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(lockgateBinary(t), args...)
	cmd.Dir = r.Dir
	cmd.Env = append(append([]string(nil), r.Env...), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, stderr.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), stderr.String()
	}
	t.Fatalf("run lockgate: %v", err)
	return -1, ""
}

// generate writes lines made by line(i) to path until it holds size bytes.
func generate(t *testing.T, path, head string, size int, line func(i int) string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len() < size; i++ {
		b.WriteString(line(i))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// bounded fails unless the output is short: a few lines, each short.
func bounded(t *testing.T, what, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 30 || len(out) > 8<<10 {
		t.Fatalf("%s: %d lines, %d bytes of output, want a few short lines; starts:\n%.2000s", what, len(lines), len(out), out)
	}
}

// TestBoundedConfig: a huge or hostile .lockgate.yaml is refused with exit 2
// and a few lines of problems, by commands and hooks alike.
func TestBoundedConfig(t *testing.T) {
	t.Parallel()
	unknownKeys := func(i int) string { return fmt.Sprintf("unknown_key_%d: value\n", i) }
	cases := []struct {
		name  string
		write func(path string)
		want  string
	}{
		{"larger than the limit", func(p string) { generate(t, p, "version: 1\n", 3<<20, unknownKeys) }, "larger than 1 MiB"},
		{"many problems", func(p string) { generate(t, p, "version: 1\n", 600<<10, unknownKeys) }, "more problems"},
		{"alias bomb", func(p string) {
			var b strings.Builder
			b.WriteString("version: 1\nm: &m {")
			for i := range 200 {
				fmt.Fprintf(&b, "u%d: 1, ", i)
			}
			b.WriteString("}\nscope:\n  profiles:\n")
			for i := range 50000 {
				fmt.Fprintf(&b, "    p%d: *m\n", i)
			}
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "more problems"},
		{"long key", func(p string) {
			// An explicit key (?) may be as long as it likes.
			generate(t, p, "version: 1\nscope:\n  profiles:\n    ? ", 200<<10, func(int) string { return "x " })
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString("\n    : {allow: [/abs]}\n"); err != nil {
				t.Fatal(err)
			}
		}, "invalid profile name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			tc.write(filepath.Join(r.Dir, ".lockgate.yaml"))
			for _, args := range [][]string{{"lock", "list"}, {"validate"}, {"hook", "pre-commit"}} {
				code, out := runIn(t, r, "", []string{"LOCKGATE_WORKER=w"}, args...)
				if args[0] == "hook" {
					if code == 0 {
						t.Fatalf("%v passed with a broken config: %s", args, out)
					}
				} else if code != 2 {
					t.Fatalf("%v: exit %d, want 2; stderr:\n%.2000s", args, code, out)
				}
				if !strings.Contains(out, tc.want) {
					t.Fatalf("%v: stderr lacks %q:\n%.2000s", args, tc.want, out)
				}
				bounded(t, strings.Join(args, " "), out)
			}
		})
	}
}

// TestBoundedWorkPackagesAndTasks: the work packages file and a planner
// input are refused, fast and briefly, beyond their size and entry limits.
func TestBoundedWorkPackagesAndTasks(t *testing.T) {
	t.Parallel()
	pkg := func(i int) string { return fmt.Sprintf("- {id: p%d, locks: {keys: [\"api:GET /x%d\"]}}\n", i, i) }
	task := func(i int) string { return fmt.Sprintf("- {id: t%d, keys: [\"api:GET /x%d\"]}\n", i, i) }
	cases := []struct {
		name, file, head string
		size             int
		line             func(int) string
		args             []string
		want             string
	}{
		{"packages file too large", "work-packages.yaml", "packages:\n", 3 << 20, pkg, []string{"claim"}, "larger than 2 MiB"},
		{"too many packages", "work-packages.yaml", "packages:\n", 20_000 * 45, pkg, []string{"claim"}, "more than the 10,000"},
		{"packages through validate", "work-packages.yaml", "packages:\n", 3 << 20, pkg, []string{"validate", "work-packages.yaml"}, "larger than 2 MiB"},
		{"tasks file too large", "TASKS.yaml", "tasks:\n", 3 << 20, task, []string{"plan", "TASKS.yaml"}, "larger than 2 MiB"},
		{"too many tasks", "TASKS.yaml", "tasks:\n", 12_000 * 40, task, []string{"plan", "TASKS.yaml"}, "more than the 10000"},
		{"unknown task fields", "TASKS.yaml", "tasks:\n", 200 << 10, func(i int) string { return fmt.Sprintf("- {id: t%d, keys: [a], bogus: 1}\n", i) },
			[]string{"plan", "TASKS.yaml"}, "more problems"},
		{"agent settings too large", ".claude/settings.json", `{"x": "`, 2 << 20, func(int) string { return "xxxxxxxx" },
			[]string{"init", "--agent", "claude-code", "--no-install"}, "larger than 1 MiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			generate(t, filepath.Join(r.Dir, tc.file), tc.head, tc.size, tc.line)
			code, out := runIn(t, r, "", []string{"LOCKGATE_WORKER=w"}, tc.args...)
			if code != 2 || !strings.Contains(out, tc.want) {
				t.Fatalf("%v: exit %d, want 2 and %q; stderr:\n%.2000s", tc.args, code, tc.want, out)
			}
			bounded(t, tc.name, out)
		})
	}
}

// TestLongIdentityAndInput: worker ids, sessions, reasons, task ids and keys
// beyond their limits are refused (exit 2), and the refusal does not echo
// them whole.
func TestLongIdentityAndInput(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	huge := strings.Repeat("x", 100<<10)
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"worker id", []string{"LOCKGATE_WORKER=" + huge}, []string{"lock", "acquire", "a.py"}, "longer than 256 bytes"},
		{"worker id flag", nil, []string{"--as", huge, "lock", "list"}, "longer than 256 bytes"},
		{"session", []string{"LOCKGATE_WORKER=w", "LOCKGATE_SESSION=" + huge}, []string{"lock", "acquire", "a.py"}, "longer than 256 bytes"},
		{"reason", []string{"LOCKGATE_WORKER=w"}, []string{"lock", "acquire", "a.py", "--reason", huge}, "at most 1024"},
		{"task id", []string{"LOCKGATE_WORKER=w"}, []string{"lock", "acquire", "a.py", "--task", huge}, "longer than 256 bytes"},
		{"key", []string{"LOCKGATE_WORKER=w"}, []string{"lock", "acquire", huge}, "longer than 4096 bytes"},
		{"namespaced key", []string{"LOCKGATE_WORKER=w"}, []string{"lock", "check", "api:" + huge}, "longer than 4096 bytes"},
		{"profile", []string{"LOCKGATE_WORKER=w"}, []string{"check", "--profile", huge}, "unknown profile"},
	}
	for _, tc := range cases {
		code, out := runIn(t, r, "", tc.env, tc.args...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("%s: exit %d, want 2 and %q; stderr:\n%.500s", tc.name, code, tc.want, out)
			continue
		}
		if len(out) > 2<<10 {
			t.Errorf("%s: %d bytes of stderr, want the input shortened:\n%.500s", tc.name, len(out), out)
		}
	}
	if code, out := runIn(t, r, "", []string{"LOCKGATE_WORKER=w"}, "lock", "list"); code != 0 || strings.Contains(out, "xxxxxxxx") {
		t.Fatalf("a refused request left something behind: exit %d\n%.500s", code, out)
	}
}

// TestMCPLongIdentity: per-call identities obey the same limits.
func TestMCPLongIdentity(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nmcp:\n  identity_from_arguments: true\n")
	a := startMCP(t, r, "agent-1")
	huge := strings.Repeat("y", 100<<10)
	for _, args := range []map[string]any{
		{"file_path": "a.py", "worker": huge},
		{"file_path": "a.py", "session": huge},
		{"file_path": "a.py", "worker": "w\nx"},
		{"file_path": "a.py", "reason": huge},
	} {
		out, isErr := a.call("acquire_lock", args)
		if !isErr || errClass(out) != "invalid_argument" {
			t.Fatalf("acquire with a long identity: %v, %v", isErr, out)
		}
		if msg := fmt.Sprint(out["message"]); len(msg) > 1024 {
			t.Fatalf("message of %d bytes echoes the input", len(msg))
		}
	}
}

// TestBoundedCommitMsg: the commit-msg hook reads a bounded message and
// names a bounded number of the tasks it finds.
func TestBoundedCommitMsg(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nhooks:\n  commit_msg: {require_task: true}\n")
	big := filepath.Join(r.Dir, "big-msg")
	generate(t, big, "subject\n\n", 2<<20, func(i int) string { return fmt.Sprintf("Task: T%d\n", i) })
	code, out := runIn(t, r, "", []string{"LOCKGATE_WORKER=w"}, "hook", "commit-msg", big)
	if code != 1 || !strings.Contains(out, "larger than 1024 KiB") {
		t.Fatalf("2 MiB message: exit %d, want 1 and a size refusal:\n%.2000s", code, out)
	}
	bounded(t, "2 MiB message", out)
	many := filepath.Join(r.Dir, "many-msg")
	generate(t, many, "subject\n\n", 200<<10, func(i int) string { return fmt.Sprintf("Task: T%d\n", i) })
	code, out = runIn(t, r, "", []string{"LOCKGATE_WORKER=w"}, "hook", "commit-msg", many)
	if code != 1 || !strings.Contains(out, "more") {
		t.Fatalf("many tasks: exit %d, want 1 naming a few:\n%.2000s", code, out)
	}
	bounded(t, "many tasks", out)
}

// TestLongPathsShortened: a path or patch line megabytes long is named by
// its start and length in messages, never echoed whole.
func TestLongPathsShortened(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	w := []string{"LOCKGATE_WORKER=alice"}
	if code, out := runIn(t, r, "", []string{"LOCKGATE_WORKER=bob"}, "lock", "acquire", "src/**"); code != 0 {
		t.Fatalf("acquire: %s", out)
	}
	huge := "src/" + strings.Repeat("a", 5<<20)
	long := "src/" + strings.Repeat("b", 6<<10)
	mid := "src/" + strings.Repeat("m", 200<<10)
	patch := func(name string) string {
		return "diff --git a/" + name + " b/" + name + "\n--- a/" + name + "\n+++ b/" + name + "\n@@ -1 +1 @@\n-a\n+b\n"
	}
	cases := []struct {
		name  string
		stdin string
		args  []string
		code  int
	}{
		{"unparsable patch header", "diff --git a/" + strings.Repeat("a", 5<<20) + " b/x\n", []string{"check", "-"}, 2},
		{"invalid path in a patch", patch("../" + strings.Repeat("c", 5<<20)), []string{"check", "-"}, 2},
		{"violation on a huge path", patch(huge), []string{"check", "-"}, 1},
		// Read as written or without src/, as neither file exists: the
		// verdicts differ. The name is longer than one git argument may be.
		{"patch read two ways", strings.ReplaceAll(patch(mid), " b/", " a/"), []string{"check", "-"}, 2},
		{"guard edit of a long path", "", []string{"guard", "edit", long}, 1},
		{"guard claude-code of a long path", `{"tool_name":"Edit","tool_input":{"file_path":"` + long + `"}}`, []string{"guard", "claude-code"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out := runIn(t, r, tc.stdin, w, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr starts:\n%.2000s", code, tc.code, out)
			}
			if len(out) > 2<<10 || !strings.Contains(out, " bytes)") {
				t.Fatalf("%d bytes of stderr, want the long input shortened with its length; starts:\n%.2000s", len(out), out)
			}
		})
	}
}
