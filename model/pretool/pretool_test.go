package pretool

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/parsed.golden from the parser's output")

// fixtureHarness is the harness a fixture file is for, from its name.
func fixtureHarness(base string) string {
	if strings.HasPrefix(base, "claude-") {
		return "claude-code"
	}
	h, _, _ := strings.Cut(base, "-")
	return h
}

// TestFixtures reads every payload in testdata: captured from the real
// harnesses (captured/) and written from their documentation
// (documented/), and holds what it finds to testdata/parsed.golden.
func TestFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*/*.json")
	if err != nil || len(files) < 40 {
		t.Fatalf("fixtures: %d, %v", len(files), err)
	}
	tmp := regexp.MustCompile(`/tmp/TestCapture[^/"]*/001/repo`)
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h := fixtureHarness(filepath.Base(f))
		c, err := Parse(h, data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if !c.Guards() && !strings.Contains(f, "monitor") {
			t.Errorf("%s: guards nothing", f)
		}
		fmt.Fprintf(&b, "%s %s tool=%s cwd=%s writes=%q shell=%q dir=%q\n", filepath.ToSlash(f), h, c.Tool, c.Cwd, c.Writes, c.Shell, c.ShellDir)
	}
	got := tmp.ReplaceAllString(b.String(), "$$REPO")
	golden := filepath.Join("testdata", "parsed.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("parsed fixtures differ from %s (go test -update to rewrite):\n%s", golden, got)
	}
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, harness, in, want string
	}{
		{"unknown harness", "vim", `{}`, `unknown harness "vim"`},
		{"empty", "codex", "  \n", "empty hook payload"},
		{"not JSON", "gemini", "rm -rf /", "not Gemini CLI's BeforeTool JSON"},
		{"an array", "goose", "[1]", "not Goose's PreToolUse JSON"},
		{"trailing data", "cursor", `{"hook_event_name":"beforeShellExecution","command":"ls"} {}`, "trailing data"},
		{"null", "claude-code", "null", "no tool_name"},
		{"no tool name", "codex", `{"tool_input":{}}`, "no tool_name"},
		{"another event", "claude-code", `{"hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"a"}}`, "answers PreToolUse"},
		{"a write without a file", "claude-code", `{"tool_name":"Write","tool_input":{"content":"x"}}`, "no tool_input.file_path"},
		{"a file path of another type", "claude-code", `{"tool_name":"Edit","tool_input":{"file_path":7}}`, "not Claude Code's PreToolUse JSON"},
		{"tool input of another type", "codex", `{"tool_name":"Bash","tool_input":"ls"}`, "not Codex's PreToolUse JSON"},
		{"a shell without its command", "codex", `{"tool_name":"Bash","tool_input":{}}`, "no command"},
		{"an empty command", "gemini", `{"tool_name":"run_shell_command","tool_input":{"command":" "}}`, "empty command"},
		{"a truncated patch", "codex", `{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Add File: a\n+x\n"}}`, "truncated"},
		{"not a patch", "codex", `{"tool_name":"apply_patch","tool_input":{"command":"diff --git a/x b/x"}}`, "Begin Patch"},
		{"a patch of no file", "opencode", `{"input":{"tool":"apply_patch"},"output":{"args":{"patchText":"*** Begin Patch\n*** End Patch\n"}}}`, "no file section"},
		{"opencode without input", "opencode", `{"output":{}}`, "no input object"},
		{"copilot args as bad text", "copilot", `{"toolName":"edit","toolArgs":"{not json"}`, "toolArgs is not a JSON object"},
		{"a NUL in a path", "goose", `{"tool_name":"developer__write","tool_input":{"path":"a\u0000b"}}`, "NUL"},
		{"cline without preToolUse", "cline", `{"hookName":"PreToolUse"}`, "no preToolUse"},
		{"cline commands not a list", "cline", `{"preToolUse":{"toolName":"run_commands","parameters":{"commands":"npm test"}}}`, "not a list of commands"},
		{"cursor write without a file", "cursor", `{"hook_event_name":"preToolUse","tool_input":{"content":"x"}}`, "no tool_input.file_path"},
		{"cursor event unknown", "cursor", `{"hook_event_name":"afterFileEdit"}`, "answers preToolUse and beforeShellExecution"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse(tc.harness, []byte(tc.in))
			var pe *Error
			if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %+v, %v; want an *Error containing %q", c, err, tc.want)
			}
		})
	}
}

func TestParseReadsNothingOfOtherTools(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ harness, in string }{
		{"claude-code", `{"tool_name":"Read","tool_input":{"file_path":"/r/a"}}`},
		{"gemini", `{"tool_name":"read_file","tool_input":{"file_path":"a"}}`},
		{"cursor", `{"hook_event_name":"preToolUse","tool_name":"Read","tool_input":{"file_path":"/r/a"}}`},
		{"copilot", `{"toolName":"view","toolArgs":{"path":"/r/a"}}`},
		{"goose", `{"tool_name":"developer__text_editor","tool_input":{"command":"view","path":"/r/a"}}`},
		{"codex", `{"tool_name":"mcp__lockgate__check_locks","tool_input":{}}`},
	} {
		c, err := Parse(tc.harness, []byte(tc.in))
		if err != nil || c.Guards() {
			t.Errorf("%s %s: %+v, %v; want nothing to guard", tc.harness, tc.in, c, err)
		}
	}
}

func TestShellWrites(t *testing.T) {
	t.Parallel()
	type tg = ShellTarget
	for _, tc := range []struct {
		cmd  string
		want []tg
	}{
		{"echo x >> f.txt", []tg{{Path: "f.txt"}}},
		{"echo x>f.txt", []tg{{Path: "f.txt"}}},
		{"cat <<'EOF' > src/a.py\nx > y.txt\nEOF\necho done", []tg{{Path: "src/a.py"}}},
		{"make 2>&1 | tee -a build.log out.log", []tg{{Path: "build.log"}, {Path: "out.log"}}},
		{"npm test &> test.log", []tg{{Path: "test.log"}}},
		{"echo a 2> err.txt >/dev/null", []tg{{Path: "err.txt"}}},
		{`echo "a b" > "my file.txt"`, []tg{{Path: "my file.txt"}}},
		{"echo x > $HOME/f; echo y > `pwd`/g; echo z > *.txt", nil},
		{"sed -i 's/a/b/' src/a.py src/b.py", []tg{{Path: "src/a.py"}, {Path: "src/b.py"}}},
		{"sed -i.bak -e s/a/b/ src/a.py", []tg{{Path: "src/a.py"}}},
		{"sed 's/a/b/' src/a.py > out.txt", []tg{{Path: "out.txt"}}},
		{"perl -pi -e 's/a/b/' lib/x.pm", []tg{{Path: "lib/x.pm"}}},
		{"mv old.txt new.txt", []tg{{Path: "new.txt"}, {Path: "old.txt"}, {Path: "new.txt/old.txt"}}},
		{"cp -r a.txt dir", []tg{{Path: "dir"}, {Path: "dir/a.txt"}}},
		{"cp -t dest a.txt", []tg{{Path: "dest/a.txt"}}},
		{"rm -rf build src/a.py", []tg{{Path: "build"}, {Path: "src/a.py"}}},
		{"touch a && truncate -s 0 b", []tg{{Path: "a"}, {Path: "b"}}},
		{"chmod +x run.sh", []tg{{Path: "run.sh"}}},
		{"dd if=/dev/zero of=disk.img bs=1", []tg{{Path: "disk.img"}}},
		{"cd src && echo x > a.py", []tg{{Path: "a.py", Dir: "src"}}},
		{"cd src; cd ../lib; rm x", []tg{{Path: "x", Dir: "lib"}}},
		{"cd $D && rm x; rm /abs/y", []tg{{Path: "/abs/y", Dir: "?"}}},
		{"bash -lc 'echo hi > notes.txt'", []tg{{Path: "notes.txt"}}},
		{"sudo -u x tee /etc/motd", []tg{{Path: "/etc/motd"}}},
		{"FOO=1 env BAR=2 rm a", []tg{{Path: "a"}}},
		{"git checkout -- a.py b.py", []tg{{Path: "a.py"}, {Path: "b.py"}}},
		{"git checkout main -- a.py", []tg{{Path: "a.py"}}},
		{"git checkout main", nil},
		{"git checkout HEAD src/a.py b.py", []tg{{Path: "src/a.py"}, {Path: "b.py"}}},
		{"git restore --source HEAD~1 --staged a.py", []tg{{Path: "a.py"}}},
		{"git -C sub rm -q x", []tg{{Path: "x", Dir: "sub"}}},
		{"git mv a b", []tg{{Path: "b"}, {Path: "a"}, {Path: "b/a"}}},
		{"git apply fix.patch", []tg{{Path: "fix.patch", Patch: true}}},
		{"git apply < fix.patch", nil},
		{"ls -la # > not.txt", nil},
		{"python -c 'open(\"x\",\"w\")'", nil},
		{"echo 1 >&2", nil},
	} {
		got := ShellWrites(tc.cmd)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("ShellWrites(%q) = %+v, want %+v", tc.cmd, got, tc.want)
		}
	}
}

func TestAnswer(t *testing.T) {
	t.Parallel()
	reason := "lockgate: Edit of a.py refused: a.py is held by bob"
	for _, h := range Harnesses {
		allow, deny := Answer(h, false, ""), Answer(h, true, reason)
		if allow.Exit != 0 || allow.Stderr != "" {
			t.Errorf("%s: allow = %+v", h, allow)
		}
		if !strings.Contains(deny.Stdout+deny.Stderr, "held by bob") {
			t.Errorf("%s: the denial does not carry the reason: %+v", h, deny)
		}
		for _, out := range []string{allow.Stdout, deny.Stdout} {
			if out != "" && !json.Valid([]byte(out)) {
				t.Errorf("%s: stdout is not JSON: %q", h, out)
			}
		}
	}
	for _, tc := range []struct {
		harness   string
		exit      int
		stdoutKey string
	}{
		{"claude-code", 2, ""}, {"codex", 2, ""}, {"opencode", 2, ""},
		{"gemini", 2, `"decision":"deny"`}, {"goose", 2, `"decision":"block"`},
		{"cursor", 0, `"permission":"deny"`}, {"copilot", 0, `"permissionDecision":"deny"`}, {"cline", 0, `"cancel":true`},
	} {
		d := Answer(tc.harness, true, reason)
		if d.Exit != tc.exit || !strings.Contains(d.Stdout, tc.stdoutKey) {
			t.Errorf("%s: deny = %+v", tc.harness, d)
		}
	}
	if a := Answer("cursor", false, ""); !strings.Contains(a.Stdout, `"permission":"allow"`) {
		t.Errorf("cursor needs an explicit allow under failClosed: %+v", a)
	}
	if d := Answer("codex", true, ""); d.Stderr == "" {
		t.Error("codex lets a denial without a reason through")
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(fixtureHarness(filepath.Base(file)), string(data))
		}
	}
	f.Fuzz(func(t *testing.T, harness, in string) {
		c, err := Parse(harness, []byte(in))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error of another type: %v", err)
			}
			return
		}
		for _, w := range c.Writes {
			if w == "" || strings.IndexByte(w, 0) >= 0 {
				t.Fatalf("accepted a write of %q", w)
			}
		}
		if c.Tool == "" {
			t.Fatal("a call without a tool")
		}
	})
}

func FuzzShellWrites(f *testing.F) {
	for _, s := range []string{"echo x >> f", "cat <<EOF > a\nb\nEOF", "cd a && sed -i s/x/y/ b", "bash -c 'bash -c \"rm x\"'", "git -C d mv a b", "x 2>&1 &> y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, tg := range ShellWrites(cmd) {
			if tg.Path == "" || strings.HasPrefix(tg.Path, "/dev/") {
				t.Fatalf("ShellWrites(%q) named %+v", cmd, tg)
			}
		}
	})
}

func TestParseShellApplyPatch(t *testing.T) {
	t.Parallel()
	heredoc := "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** End Patch\nEOF\n"
	argv := []any{"apply_patch", "*** Begin Patch\n*** Add File: it's.txt\n+x\n*** Delete File: b.py\n*** End Patch\n"}
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"a heredoc", `{"tool_name":"Bash","tool_input":{"command":` + jsonString(heredoc) + `}}`, []string{"src/a.py"}},
		{"an argv", `{"tool_name":"shell","tool_input":{"command":` + jsonValue(argv) + `}}`, []string{"it's.txt", "b.py"}},
	} {
		c, err := Parse("codex", []byte(tc.in))
		if err != nil || fmt.Sprint(c.Writes) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %+v, %v; want writes %v", tc.name, c, err, tc.want)
		}
	}
	truncated := `{"tool_name":"Bash","tool_input":{"command":"apply_patch '*** Begin Patch\n*** Add File: a\n+x'"}}`
	if c, err := Parse("codex", []byte(truncated)); err == nil {
		t.Errorf("a patch without its end passed: %+v", c)
	}
}

func jsonString(s string) string { return jsonValue(s) }

func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
