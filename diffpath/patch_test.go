package diffpath

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
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
			changes, alt, err := ParsePatchReadings(bytes.NewReader(data))
			got := formatChanges(changes)
			if alt != nil {
				// An ambiguous patch's other reading (ParsePatchReadings).
				got += "or, without the prefix " + alt.Prefix + ":\n" + formatChanges(alt.Changes)
			}
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

func TestParsePatchSynthetic(t *testing.T) {
	t.Parallel()
	hunk := "@@ -1 +1 @@\n-a\n+b\n"
	tests := []struct {
		name    string
		in      string
		want    []Change
		wantErr string
		path    bool
	}{
		{name: "empty input"},
		{name: "blank input", in: "\n \n\t\n"},
		{name: "prose only", in: "Hello,\nplease apply.\n--- \nsig\n", wantErr: "no file changes found"},
		{name: "colored output", in: "\x1b[1mdiff --git a/x b/x\x1b[m\n\x1b[1m--- a/x\x1b[m\n", wantErr: "no file changes found"},
		{name: "line prefix", in: "> diff --git a/x b/x\n> --- a/x\n> +++ b/x\n> @@ -1 +1 @@\n> -a\n> +b\n", wantErr: "no file changes found"},
		{name: "context diff", in: "*** f.orig\n--- f\n***************\n*** 1 ****\n! a\n--- 1 ----\n! b\n", wantErr: "context diff"},
		{
			name: "lstrip trap",
			in:   "diff --git a/bridge/loop.py b/bridge/loop.py\n--- a/bridge/loop.py\n+++ b/bridge/loop.py\n" + hunk,
			want: []Change{{Status: 'M', Path: "bridge/loop.py"}},
		},
		{
			name: "no-prefix path under a/",
			in:   "diff --git a/x a/x\nindex 1..2 100644\n--- a/x\n+++ a/x\n" + hunk,
			want: []Change{{Status: 'M', Path: "a/x"}},
		},
		{
			name: "no-prefix mode only with spaces",
			in:   "diff --git a b/c d a b/c d\nold mode 100644\nnew mode 100755\n",
			want: []Change{{Status: 'M', Path: "a b/c d"}},
		},
		{
			name: "prefixed mode only, many split points",
			in:   "diff --git a/x b/x b/x b/x\nold mode 100644\nnew mode 100755\n",
			want: []Change{{Status: 'M', Path: "x b/x"}},
		},
		{
			name: "empty new file, one side known from nothing",
			in:   "diff --git a/sp ace b/sp ace\nnew file mode 100644\nindex 0000000..e69de29\n",
			want: []Change{{Status: 'A', Path: "sp ace"}},
		},
		{
			name: "addition picks split from +++",
			in:   "diff --git a/x y b/x y\nnew file mode 100644\n--- /dev/null\n+++ b/x y\t\n@@ -0,0 +1 @@\n+z\n",
			want: []Change{{Status: 'A', Path: "x y"}},
		},
		{
			name: "deletion picks split from ---",
			in:   "diff --git a/x y b/x y\ndeleted file mode 100644\n--- a/x y\t\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n",
			want: []Change{{Status: 'D', Path: "x y"}},
		},
		{
			name: "quoted git line",
			in:   "diff --git \"a/t\\tab\" \"b/t\\tab\"\nold mode 100644\nnew mode 100755\n",
			want: []Change{{Status: 'M', Path: "t\tab"}},
		},
		{
			name: "octal utf-8",
			in:   "diff --git \"a/\\303\\251\" \"b/\\303\\251\"\n--- \"a/\\303\\251\"\n+++ \"b/\\303\\251\"\n" + hunk,
			want: []Change{{Status: 'M', Path: "é"}},
		},
		{
			name: "quoted rename headers",
			in:   "diff --git a/x \"b/\\\"q\\\"\"\nsimilarity index 91%\nrename from x\nrename to \"\\\"q\\\"\"\n",
			want: []Change{{Status: 'R', Score: 91, Path: `"q"`, OldPath: "x"}},
		},
		{
			name: "rename with edit: headers win over ---/+++",
			in:   "diff --git a/old b/new\nsimilarity index 80%\nrename from old\nrename to new\nindex 1..2 100644\n--- a/old\n+++ b/new\n" + hunk,
			want: []Change{{Status: 'R', Score: 80, Path: "new", OldPath: "old"}},
		},
		{
			name: "old git rename headers",
			in:   "diff --git a/old b/new\nrename old old\nrename new new\n",
			want: []Change{{Status: 'R', Path: "new", OldPath: "old"}},
		},
		{
			name: "copy both sides",
			in:   "diff --git a/src b/dst\nsimilarity index 100%\ncopy from src\ncopy to dst\n",
			want: []Change{{Status: 'C', Score: 100, Path: "dst", OldPath: "src"}},
		},
		{
			name: "type change by mode",
			in:   "diff --git a/l b/l\nold mode 100644\nnew mode 120000\n",
			want: []Change{{Status: 'T', Path: "l"}},
		},
		{
			name: "reverse mnemonic",
			in:   "diff --git w/f i/f\n--- w/f\n+++ i/f\n" + hunk,
			want: []Change{{Status: 'M', Path: "f"}},
		},
		{
			name: "custom prefixes",
			in:   "diff --git src/x dst/x\nold mode 100644\nnew mode 100755\n",
			want: []Change{{Status: 'M', Path: "x"}},
		},
		{
			name: "duplicates kept once",
			in:   "diff --git a/f b/f\n--- a/f\n+++ b/f\n" + hunk + "diff --git a/f b/f\n--- a/f\n+++ b/f\n" + hunk,
			want: []Change{{Status: 'M', Path: "f"}},
		},
		{
			name: "hunk content that looks like headers",
			in:   "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n--- a/evil\n+++ b/evil\n+diff --git a/evil b/evil\n \n",
			want: []Change{{Status: 'M', Path: "f"}},
		},
		{
			name: "hunk without counts",
			in:   "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@ func f()\n--- a/evil\n+++ b/evil\n",
			want: []Change{{Status: 'M', Path: "f"}},
		},
		{
			name: "no newline markers",
			in:   "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\ndiff --git a/g b/g\nold mode 100644\nnew mode 100755\n",
			want: []Change{{Status: 'M', Path: "f"}, {Status: 'M', Path: "g"}},
		},
		{
			name: "combined diff",
			in:   "diff --cc f\nindex 1,2..3\n--- a/f\n+++ b/f\n@@@ -1,2 -1,2 +1,2 @@@\n  x\n- a\n -b\n++c\n",
			want: []Change{{Status: 'M', Path: "f"}},
		},
		{
			name: "combined diff all paths",
			in:   "diff --cc new\nindex 1,2..3\n--- a/old\n--- a/new\n+++ b/new\n@@@ -1 -1 +1 @@@\n- a\n -a\n++b\ndiff --git a/g b/g\nold mode 100644\nnew mode 100755\n",
			want: []Change{{Status: 'R', Path: "new", OldPath: "old"}, {Status: 'M', Path: "g"}},
		},
		{
			name: "combined new file",
			in:   "diff --combined \"n\\303\\251w\"\nnew file mode 100644\nindex 0000000,0000000..1111111\n--- /dev/null\n+++ b/n\n@@@ -0,0 -0,0 +1,1 @@@\n++x\n",
			want: []Change{{Status: 'A', Path: "néw"}},
		},
		{
			name: "unmerged",
			in:   "* Unmerged path dir/f g\n",
			want: []Change{{Status: 'U', Path: "dir/f g"}},
		},
		{
			name: "plain diff -u",
			in:   "--- f.orig\t2024-01-02 03:04:05.000000000 +0000\n+++ f\t2024-01-02 03:04:05.000000000 +0000\n" + hunk,
			want: []Change{{Status: 'M', Path: "f"}},
		},
		{
			name: "plain diff -N epoch in another zone",
			in:   "diff -ruN old/n new/n\n--- old/n\t1970-01-01 01:00:00.000000000 +0100\n+++ new/n\t2024-01-02 03:04:05.000000000 +0000\n@@ -0,0 +1 @@\n+n\n",
			want: []Change{{Status: 'A', Path: "n"}},
		},
		{
			name: "plain -p1 carries to /dev/null sections",
			in:   "--- old/x\n+++ new/x\n" + hunk + "--- /dev/null\n+++ new/y\n@@ -0,0 +1 @@\n+y\n",
			want: []Change{{Status: 'M', Path: "x"}, {Status: 'A', Path: "y"}},
		},
		{
			name:    "plain /dev/null alone: prefix or directory?",
			in:      "--- /dev/null\n+++ docs/new.md\n@@ -0,0 +1 @@\n+y\n",
			wantErr: `cannot tell whether "docs/new.md" starts with a directory prefix`,
		},
		{
			name: "plain /dev/null without a directory",
			in:   "--- /dev/null\n+++ NEWS\n@@ -0,0 +1 @@\n+y\n",
			want: []Change{{Status: 'A', Path: "NEWS"}},
		},
		{
			name: "plain quoted names",
			in:   "--- \"old/sp ace\"\t2024-01-02 03:04:05.000000000 +0000\n+++ \"new/sp ace\"\t2024-01-02 03:04:05.000000000 +0000\n" + hunk,
			want: []Change{{Status: 'M', Path: "sp ace"}},
		},
		{
			name: "plain binary with and in the name",
			in:   "Binary files old/this and that and new/this and that differ\n",
			want: []Change{{Status: 'M', Path: "this and that"}},
		},
		{
			name:    "plain header without hunk is prose",
			in:      "--- a/x\n+++ b/x\nno hunk here\n",
			wantErr: "no file changes found",
		},
		{
			name: "svn style",
			in:   "Index: trunk/f.c\n===================================================================\n--- trunk/f.c\t(revision 1)\n+++ trunk/f.c\t(working copy)\n" + hunk,
			want: []Change{{Status: 'M', Path: "trunk/f.c"}},
		},
		{
			name: "binary patch data is skipped",
			in:   "diff --git a/b.bin b/b.bin\nindex 1..2 100644\nGIT binary patch\nliteral 3\nKcmZQzWMT#Y01f~E\n\nliteral 3\nKcmZQzWMT#Y01f~E\n\ndiff --git a/c b/c\n--- a/c\n+++ b/c\n" + hunk,
			want: []Change{{Status: 'M', Path: "b.bin"}, {Status: 'M', Path: "c"}},
		},
		{
			name: "CRLF",
			in:   "diff --git a/f b/f\r\n--- a/f\r\n+++ b/f\r\n@@ -1,2 +1,2 @@\r\n \r\n-a\r\n+b\r\n",
			want: []Change{{Status: 'M', Path: "f"}},
		},
		{
			name: "quilt: /dev/null before the -p1 section",
			in:   "--- /dev/null\n+++ pkg/a/new.c\n@@ -0,0 +1 @@\n+n\n--- pkg.orig/a/x.c\n+++ pkg/a/x.c\n" + hunk,
			want: []Change{{Status: 'A', Path: "a/new.c"}, {Status: 'M', Path: "a/x.c"}},
		},
		{
			name: "plain -p0 section keeps a /dev/null path whole",
			in:   "--- lib/u.c.orig\n+++ lib/u.c\n" + hunk + "--- /dev/null\n+++ lib/new.c\n@@ -0,0 +1 @@\n+n\n",
			want: []Change{{Status: 'M', Path: "lib/u.c"}, {Status: 'A', Path: "lib/new.c"}},
		},
		{
			name:    "plain sections of both -p levels",
			in:      "--- /dev/null\n+++ b/new\n@@ -0,0 +1 @@\n+n\n--- old/x\n+++ new/x\n" + hunk + "--- f.orig\n+++ f\n" + hunk,
			wantErr: "different patch -p levels",
		},
		{
			name: "cvs diff -N under Index",
			in:   "Index: dir/x\n===================================================================\nRCS file: /cvs/dir/x,v\nretrieving revision 1.1\ndiff -N dir/x\n--- dir/x\t2 Jan 2024 03:04:05 -0000\t1.1\n+++ /dev/null\t1 Jan 1970 00:00:00 -0000\n@@ -1 +0,0 @@\n-a\n",
			want: []Change{{Status: 'M', Path: "dir/x"}, {Status: 'D', Path: "dir/x"}},
		},
		{
			name: "custom prefixes told apart by the other files",
			in:   "diff --git x/src/a y/src/a\n--- x/src/a\n+++ y/src/a\n" + hunk + "diff --git x/tool y/tool\nold mode 100644\nnew mode 100755\n",
			want: []Change{{Status: 'M', Path: "src/a"}, {Status: 'M', Path: "tool"}},
		},
		{
			name:    "custom prefixes not told apart",
			in:      "diff --git x/src/a y/src/a\n--- x/src/a\n+++ y/src/a\n" + hunk + "diff --git x/src/b y/src/b\n--- x/src/b\n+++ y/src/b\n" + hunk,
			wantErr: "cannot tell where the custom prefixes end",
		},
		{
			name: "custom prefixes pinned by a rename",
			in:   "diff --git x/v1/f y/v1/f\n--- x/v1/f\n+++ y/v1/f\n" + hunk + "diff --git x/v1/o y/v1/n\nsimilarity index 100%\nrename from v1/o\nrename to v1/n\n",
			want: []Change{{Status: 'M', Path: "v1/f"}, {Status: 'R', Score: 100, Path: "v1/n", OldPath: "v1/o"}},
		},
		{
			name:    "combined rename with custom prefixes",
			in:      "diff --cc new\nindex 1,2..3\n--- x/old\n--- x/old2\n+++ y/new\n@@@ -1 -1 +1 @@@\n- a\n -a\n++b\n",
			wantErr: "cannot tell the source prefix",
		},
		{
			name: "submodule lines",
			in:   "Submodule lib/dep 1234567..89abcde:\n  > fix\nSubmodule new one 0000000...89abcde (new submodule)\nSubmodule old 1234567...0000000 (submodule deleted)\nSubmodule w contains modified content\nSubmodule r 1234567...89abcde (rewind):\n",
			want: []Change{{Status: 'M', Path: "lib/dep"}, {Status: 'A', Path: "new one"}, {Status: 'D', Path: "old"}, {Status: 'M', Path: "w"}, {Status: 'M', Path: "r"}},
		},
		{name: "submodule prose", in: "Submodule support: see docs.\n", wantErr: "no file changes found"},
		{
			name:    "several tabs and no date",
			in:      "--- old/a\tb\tc\n+++ new/a\tb\tc\n" + hunk,
			wantErr: "several tabs",
		},
		{
			name: "svn property change alone",
			in:   "Property changes on: bin/run\n___________________________________________________________________\nAdded: svn:executable\n## -0,0 +1 ##\n+*\n",
			want: []Change{{Status: 'M', Path: "bin/run"}},
		},
		{
			name: "svn --no-diff-added",
			in:   "Index: x (added)\n===================================================================\n",
			want: []Change{{Status: 'A', Path: "x"}},
		},
		{
			name:    "svn names that disagree with Index",
			in:      "Index: x\n===================================================================\n--- y\t(revision 1)\n+++ y\t(working copy)\n" + hunk,
			wantErr: "do not match",
		},
		{name: "no-index of two directories", in: "diff --git a/dA/x b/dB/x\n--- a/dA/x\n+++ b/dB/x\n" + hunk, wantErr: "do not name the same path"},
		{name: "unsplittable git line", in: "diff --git a/x b/y\nold mode 100644\nnew mode 100755\n", wantErr: "cannot tell the file name"},
		{name: "git line without names", in: "diff --git \nold mode 100644\n", wantErr: "cannot tell the file name"},
		{name: "half a rename", in: "diff --git a/x b/y\nrename from x\n", wantErr: "incomplete rename"},
		{name: "--- without +++", in: "diff --git a/x b/x\n--- a/x\n@@ -1 +1 @@\n", wantErr: "not followed by"},
		{name: "bad hunk header", in: "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,x +1 @@\n", wantErr: "malformed hunk header"},
		{name: "hunk longer than header", in: "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n a\n", wantErr: "more lines"},
		{name: "bad quote", in: "diff --git a/x b/x\n--- \"a/x\n+++ b/x\n" + hunk, wantErr: "bad name"},
		{name: "bad octal", in: "diff --git \"a/\\9\" \"b/\\9\"\nold mode 100644\nnew mode 100755\n", wantErr: "cannot tell"},
		{name: "both /dev/null", in: "--- /dev/null\n+++ /dev/null\n@@ -0,0 +0,0 @@\n", wantErr: "both sides"},
		{name: "dotgit in rename", in: "diff --git a/x b/.git/x\nrename from x\nrename to .git/x\n", wantErr: ".git", path: true},
		{name: "absolute unmerged", in: "* Unmerged path /etc/passwd\n", wantErr: "absolute", path: true},
		{name: "nul in name", in: "diff --git \"a/\\000\" \"b/\\000\"\nold mode 100644\nnew mode 100755\n", wantErr: "NUL", path: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParsePatch(strings.NewReader(tt.in))
			checkResult(t, got, err, tt.want, tt.wantErr, tt.path)
		})
	}
}

func TestParsePatchReadError(t *testing.T) {
	t.Parallel()
	r := io.MultiReader(strings.NewReader("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n"), errReader{})
	_, err := ParsePatch(r)
	var se *SyntaxError
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || errors.As(err, &se) {
		t.Fatalf("got %v, want the read error, not a syntax error", err)
	}
}

// TestParsePatchMatchesNameStatus checks ParsePatch against git's own
// -z output for the same change, with every prefix style git offers.
func TestParsePatchMatchesNameStatus(t *testing.T) {
	t.Parallel()
	r := nameStatusRepo(t)
	want, err := ParseNameStatusZ(r.git("diff", "--cached", "--name-status", "-z", "-M"))
	if err != nil {
		t.Fatal(err)
	}
	// A type change is one entry in name-status and a deletion plus an
	// addition in a patch.
	var wantPatch []Change
	for _, c := range want {
		if c.Status == 'T' {
			wantPatch = append(wantPatch, Change{Status: 'D', Path: c.Path}, Change{Status: 'A', Path: c.Path})
			continue
		}
		wantPatch = append(wantPatch, c)
	}
	tests := []struct {
		name string
		args []string
	}{
		{name: "default", args: []string{"diff", "--cached", "-M"}},
		{name: "quotePath false", args: []string{"-c", "core.quotePath=false", "diff", "--cached", "-M"}},
		{name: "no prefix", args: []string{"diff", "--cached", "-M", "--no-prefix"}},
		{name: "mnemonic", args: []string{"-c", "diff.mnemonicPrefix=true", "diff", "--cached", "-M"}},
		{name: "custom", args: []string{"diff", "--cached", "-M", "--src-prefix=left/", "--dst-prefix=right/"}},
		{name: "binary", args: []string{"diff", "--cached", "-M", "--binary"}},
		{name: "stat and patch", args: []string{"diff", "--cached", "-M", "--stat", "-p"}},
		{name: "no context", args: []string{"diff", "--cached", "-M", "-U0"}},
		{name: "whole function context", args: []string{"diff", "--cached", "-M", "-W"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := r.git(tt.args...)
			got, err := ParsePatch(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if d := diffChanges(got, wantPatch); d != "" {
				t.Fatalf("%s\npatch:\n%s", d, out)
			}
		})
	}
}

// TestParsePatchAgreesWithGitApply checks plain fixtures against
// git apply --numstat, which reads them with patch -p1: every path git
// apply would touch is returned. (ParsePatch also returns what git apply
// skips, such as hg's "Binary file x has changed".)
func TestParsePatchAgreesWithGitApply(t *testing.T) {
	t.Parallel()
	requireGit(t)
	for _, name := range []string{"quilt_devnull_first", "old_diff_tab", "hg_sections", "diff_u_plain", "bridge_lstrip_plain"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := filepath.Abs(filepath.Join("testdata", "patches", name+".patch"))
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			changes, err := ParsePatch(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, c := range changes {
				for _, p := range c.Touched() {
					got[p] = true
				}
			}
			level := "-p1"
			if name == "diff_u_plain" {
				level = "-p0"
			}
			cmd := exec.Command("git", "apply", "--numstat", "-z", level, f)
			cmd.Dir = t.TempDir()
			cmd.Env = hermeticEnv(cmd.Dir)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("git apply: %v", err)
			}
			n := 0
			for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
				// "added\tdeleted\tpath"; a rename is "a\td\t", old, new.
				fields := strings.SplitN(rec, "\t", 3)
				p := fields[len(fields)-1]
				if p == "" {
					continue
				}
				n++
				if !got[p] {
					t.Errorf("git apply touches %q; ParsePatch returned %v", p, changes)
				}
			}
			if n == 0 {
				t.Fatalf("git apply read no paths: %q", out)
			}
		})
	}
}

// TestParsePatchReadings covers which patches read two ways: names that
// may carry the same prefix on both sides (git diff --src-prefix=x/
// --dst-prefix=x/) or be paths as written (--no-prefix, patch -p0).
func TestParsePatchReadings(t *testing.T) {
	t.Parallel()
	hunk := "@@ -1 +1 @@\n-a\n+b\n"
	eq := func(p string) string { return "diff --git " + p + " " + p + "\n--- " + p + "\n+++ " + p + "\n" + hunk }
	m := func(p string) Change { return Change{Status: 'M', Path: p} }
	ren := func(pre, from, to string) string {
		return "diff --git " + pre + from + " " + pre + to + "\nsimilarity index 100%\nrename from " + from + "\nrename to " + to + "\n"
	}
	tests := []struct {
		name     string
		in       string
		want     []Change
		prefix   string   // "" when the patch reads one way
		stripped []Change // the other reading
	}{
		{name: "equal prefix", in: eq("x/src/a.go") + eq("x/b.go"),
			want: []Change{m("x/src/a.go"), m("x/b.go")}, prefix: "x/", stripped: []Change{m("src/a.go"), m("b.go")}},
		{name: "no prefix, two top-level directories", in: eq("src/a.go") + eq("docs/d.md"),
			want: []Change{m("src/a.go"), m("docs/d.md")}},
		{name: "no prefix, a file at the top", in: eq("src/a.go") + eq("README"),
			want: []Change{m("src/a.go"), m("README")}},
		{name: "known prefixes in the same patch", in: eq("x/src/a.go") + "diff --git a/y b/y\n--- a/y\n+++ b/y\n" + hunk,
			want: []Change{m("x/src/a.go"), m("y")}},
		{name: "a rename shows the prefix", in: eq("x/src/a.go") + ren("x/", "src/o", "src/n"),
			want: []Change{m("src/a.go"), {Status: 'R', Score: 100, Path: "src/n", OldPath: "src/o"}}},
		{name: "a copy shows the prefix", in: eq("x/src/a.go") +
			"diff --git x/src/o x/src/n\nsimilarity index 90%\ncopy from src/o\ncopy to src/n\n",
			want: []Change{m("src/a.go"), {Status: 'C', Score: 90, Path: "src/n", OldPath: "src/o"}}},
		{name: "a rename shows no prefix", in: eq("x/src/a.go") + ren("", "x/o", "x/n"),
			want: []Change{m("x/src/a.go"), {Status: 'R', Score: 100, Path: "x/n", OldPath: "x/o"}}},
		{name: "a combined diff reads one way", in: eq("x/src/a.go") + "diff --cc x/m\nindex 1,2..3\n",
			want: []Change{m("x/src/a.go"), m("x/m")}, prefix: "x/", stripped: []Change{m("src/a.go"), m("x/m")}},
		{name: "plain equal names and a new file", in: "--- x/a\n+++ x/a\n" + hunk + "--- /dev/null\n+++ x/n\n@@ -0,0 +1 @@\n+n\n",
			want: []Change{m("x/a"), {Status: 'A', Path: "x/n"}}, prefix: "x/", stripped: []Change{m("a"), {Status: 'A', Path: "n"}}},
		{name: "plain diff -ruN of two directories", in: "--- old/x/a\n+++ new/x/a\n" + hunk,
			want: []Change{m("x/a")}},
		{name: "svn names the repository path", in: "Index: x/a\n===================================================================\n--- x/a\t(revision 1)\n+++ x/a\t(working copy)\n" + hunk,
			want: []Change{m("x/a")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, alt, err := ParsePatchReadings(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if formatChanges(got) != formatChanges(tc.want) {
				t.Errorf("changes:\n%swant:\n%s", formatChanges(got), formatChanges(tc.want))
			}
			switch {
			case tc.prefix == "" && alt != nil:
				t.Errorf("second reading %q %v, want none", alt.Prefix, alt.Changes)
			case tc.prefix != "" && alt == nil:
				t.Errorf("no second reading, want %q %v", tc.prefix, tc.stripped)
			case alt != nil && (alt.Prefix != tc.prefix || formatChanges(alt.Changes) != formatChanges(tc.stripped)):
				t.Errorf("second reading %q:\n%swant %q:\n%s", alt.Prefix, formatChanges(alt.Changes), tc.prefix, formatChanges(tc.stripped))
			}
		})
	}
}
