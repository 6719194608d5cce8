package hooks

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTaskIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  string
		want []string
	}{
		{"id in subject", "TASK-001: add users endpoint\n", []string{"TASK-001"}},
		{"trailer wins over subject", "Fix WP-2 typo\n\nTask: WI-1-A1-T2\n", []string{"WI-1-A1-T2"}},
		{"several trailers", "x\n\nTask: A-1, B-2\n", []string{"A-1", "B-2"}},
		{"comment lines ignored", "# TASK-9 in a comment\nplain subject\n", nil},
		{"no id", "refactor the parser\n", nil},
		{"lowercase is not an id", "task-1: nope\n", nil},
		{"crlf", "TASK-3: x\r\n", []string{"TASK-3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := TaskIDs(tt.msg); !slices.Equal(got, tt.want) {
				t.Errorf("TaskIDs(%q) = %q, want %q", tt.msg, got, tt.want)
			}
		})
	}
}

func TestReportOrder(t *testing.T) {
	t.Parallel()
	r := &Report{}
	r.Add(Violation{Rule: "profile", Path: "b"}, Violation{Rule: "locked", Path: "b"},
		Violation{Rule: "paused"}, Violation{Rule: "key_rule", Path: "a", Key: "z"}, Violation{Rule: "key_rule", Path: "a", Key: "y"})
	r.Finish()
	var got []string
	for _, v := range r.Violations {
		got = append(got, v.Path+"/"+v.Rule+"/"+v.Key)
	}
	want := []string{"/paused/", "a/key_rule/y", "a/key_rule/z", "b/locked/", "b/profile/"}
	if !slices.Equal(got, want) || r.OK {
		t.Fatalf("order %q (ok %v), want %q", got, r.OK, want)
	}
	var text strings.Builder
	r.WriteText(&text, "pre-commit")
	if first, _, _ := strings.Cut(text.String(), "\n"); first != "lockgate: pre-commit refused: 5 violations (key_rule, locked, paused, profile)" {
		t.Fatalf("first line %q", first)
	}
	var gh strings.Builder
	(&Report{Violations: []Violation{{Rule: "locked", Path: "a,b:c.py", Reason: "50% done\nnext"}}}).WriteGitHub(&gh)
	if want := "::error file=a%2Cb%3Ac.py,title=lockgate locked::50%25 done%0Anext\n"; gh.String() != want {
		t.Fatalf("github annotation %q, want %q", gh.String(), want)
	}
}

func TestInstallUninstall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := "#!/bin/sh\necho old\n"
	if err := os.WriteFile(filepath.Join(dir, "pre-commit"), []byte(old), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := Install(dir, "/opt/lockgate's bin/lockgate", []string{"pre-commit", "pre-push"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Chained == "" || res[1].Chained != "" {
		t.Fatalf("chaining: %+v", res)
	}
	shim, _ := os.ReadFile(filepath.Join(dir, "pre-commit"))
	if !strings.Contains(string(shim), `lockgate=${LOCKGATE_BIN:-'/opt/lockgate'\''s bin/lockgate'}`) {
		t.Fatalf("binary path not quoted for sh:\n%s", shim)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "pre-push")); fi.Mode()&0o111 == 0 {
		t.Fatal("shim is not executable")
	}
	// Installing again keeps the chained hook, rewrites the shims.
	res, err = Install(dir, "/usr/bin/lockgate", []string{"pre-commit"})
	if err != nil || !res[0].Updated || res[0].Chained == "" {
		t.Fatalf("reinstall: %v %+v", err, res)
	}
	un, err := Uninstall(dir, []string{"pre-commit", "pre-push", "commit-msg"})
	if err != nil {
		t.Fatal(err)
	}
	if !un[0].Removed || un[0].Restored == "" || !un[1].Removed || un[2].Skipped == "" {
		t.Fatalf("uninstall: %+v", un)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pre-commit")); string(b) != old {
		t.Fatalf("previous hook not restored: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "pre-push")); !os.IsNotExist(err) {
		t.Fatal("pre-push shim left behind")
	}
}

func TestReportDedupe(t *testing.T) {
	t.Parallel()
	r := &Report{}
	v := Violation{Rule: "user_owned", Path: "a.py", Reason: "agents may not change it", Commit: "1a2b3c4d5e6f", Hint: "from the store"}
	r.Add(v, Violation{Rule: "locked", Path: "a.py", Reason: "held"})
	w := v
	w.Hint = "from verify"
	other := v
	other.Commit = "0f0f0f0f0f0f"
	r.Add(w, other)
	r.Finish()
	if len(r.Violations) != 3 {
		t.Fatalf("violations %+v, want the repeat dropped", r.Violations)
	}
	for _, got := range r.Violations {
		if got.Hint == "from verify" {
			t.Fatalf("kept the later of two equal violations: %+v", r.Violations)
		}
	}
}

// TestReadRefLines: the ref lines of pre-push and pre-receive are read
// alike; a malformed one is refused, and never echoed whole.
func TestReadRefLines(t *testing.T) {
	t.Parallel()
	sha, zero := strings.Repeat("a", 40), strings.Repeat("0", 40)
	long := strings.Repeat("f", 30_000) // under bufio.Scanner's line limit
	const push = "<local ref> <local sha> <remote ref> <remote sha>"
	for _, tc := range []struct {
		name, in string
		lines    int
		err      string
	}{
		{name: "lines and blank lines", in: "\nrefs/heads/a " + sha + " refs/heads/a " + zero + "\n\n refs/heads/b " + zero + " refs/heads/b " + sha + " \n", lines: 2},
		{name: "nothing", in: ""},
		{name: "too few fields", in: "refs/heads/a " + sha + "\n", err: "want `" + push + "`"},
		{name: "not an object name", in: "refs/heads/a HEAD refs/heads/a " + zero + "\n", err: "want full object names"},
		{name: "a long field", in: "refs/heads/a " + long + " refs/heads/a " + zero + "\n", err: "want full object names"},
		{name: "a long line", in: long + " a b\n", err: "malformed line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			err := readRefLines(strings.NewReader(tc.in), "pre-push", push, 1, 3, func(f []string) error {
				if len(f) != 4 {
					t.Errorf("fields %q", f)
				}
				n++
				return nil
			})
			switch {
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("err = %v, want %q", err, tc.err)
			case err != nil && len(err.Error()) > 1000:
				t.Fatalf("the error echoes the whole line: %d bytes", len(err.Error()))
			case n != tc.lines:
				t.Fatalf("%d lines, want %d", n, tc.lines)
			}
		})
	}
}
