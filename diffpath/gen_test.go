package diffpath

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// go test ./diffpath -run TestGenerateFixtures -gen rewrites the patch
// fixtures in testdata/patches from the real git and diff binaries, and the
// fuzz seed corpora in testdata/fuzz; then run go test ./diffpath -update
// to rewrite the goldens, and review both diffs before committing. The
// fixtures are committed so that the golden tests do not depend on the
// installed git's version.
var gen = flag.Bool("gen", false, "regenerate testdata/patches/*.patch and testdata/fuzz seeds with real git and diff")

// The fixtures it does not write are written by hand, for what git and
// diff cannot be made to print, or tools that are not installed:
// bridge_lstrip_plain.patch (the lstrip trap without "diff --git" lines),
// quilt_devnull_first.patch, expanded_tab.patch (a mailer turned the tab
// before the date into spaces), old_diff_tab.patch (old GNU diff did not
// quote a tab in a name), svn_sections.patch, hg_sections.patch,
// context_mixed.patch, and the broken inputs corrupt_hunk.patch,
// truncated_hunk.patch, dotgit.patch, dotdot.patch and absolute_plain.patch.

func TestGenerateFixtures(t *testing.T) {
	if !*gen {
		t.Skip("run with -gen to regenerate fixtures")
	}
	requireGit(t)
	if _, err := exec.LookPath("diff"); err != nil {
		t.Fatal("diff binary not found")
	}
	fixtures := map[string]func(t *testing.T) []byte{
		"bridge_lstrip.patch":      genBridgeLstrip,
		"no_prefix_a_dir.patch":    genNoPrefixADir,
		"mnemonic.patch":           genMnemonic,
		"custom_prefix.patch":      genCustomPrefix,
		"format_patch_mbox.patch":  genFormatPatch,
		"quoted_unicode.patch":     genQuotedUnicode,
		"spaces.patch":             genSpaces,
		"rename_copy.patch":        genRenameCopy,
		"mode_only.patch":          genModeOnly,
		"binary.patch":             genBinary,
		"devnull_add_delete.patch": genDevNull,
		"diff_u_plain.patch":       genDiffUPlain,
		"diff_ruN.patch":           genDiffRuN,
		"hunk_lookalike.patch":     genHunkLookalike,
		"several_files.patch":      genSeveralFiles,
		"combined_merge.patch":     genCombined,
		"log_p.patch":              genLogP,
		"typechange.patch":         genTypeChange,
		"crlf.patch":               genCRLF,
		"submodule_log.patch":      genSubmoduleLog,
		"combined_all_paths.patch": genCombinedAllPaths,
		"prefix_no_slash.patch":    genPrefixNoSlash,
		"prefix_two_levels.patch":  genPrefixTwoLevels,
		"plain_devnull_dir.patch":  genPlainDevNullDir,
	}
	for name, fn := range fixtures {
		data := fn(t)
		if err := os.WriteFile(filepath.Join("testdata", "patches", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFuzzSeeds(t)
}

func genBridgeLstrip(t *testing.T) []byte {
	r := newRepo(t)
	for _, f := range []string{"bridge/loop.py", "ab/c", "abba.txt", "b/x", "a/y", "bb/b/bridge.py"} {
		r.write(f, "one\n")
	}
	r.commitAll("base")
	for _, f := range []string{"bridge/loop.py", "ab/c", "abba.txt", "b/x", "a/y", "bb/b/bridge.py"} {
		r.write(f, "one\ntwo\n")
	}
	return r.git("diff")
}

func genNoPrefixADir(t *testing.T) []byte {
	r := newRepo(t)
	r.write("a/x", "x\n")
	r.write("b/y", "y\n")
	r.write("a/b/z", "z\n")
	r.write("a/p q", "p\n")
	r.commitAll("base")
	r.write("a/x", "x\nx\n")
	r.write("a/new", "new\n")
	r.remove("b/y")
	r.chmod("a/b/z", 0o755)
	r.write("a/p q", "p\np\n")
	r.write("a/empty", "")
	r.git("add", "-A")
	return r.git("diff", "--cached", "--no-prefix")
}

func genMnemonic(t *testing.T) []byte {
	r := newRepo(t)
	r.write("f.txt", "1\n")
	r.write("i/w", "iw\n")
	r.write("mode.sh", "#!/bin/sh\n")
	r.write("c/i.txt", "ci\n")
	r.commitAll("base")
	r.write("f.txt", "1\n2\n")
	r.write("c/i.txt", "ci\nci\n")
	r.chmod("mode.sh", 0o755)
	r.write("empty new", "")
	r.git("add", "-A")
	r.write("f.txt", "1\n2\n3\n")
	r.write("i/w", "iw\niw\n")
	var b bytes.Buffer
	for _, args := range [][]string{
		{"diff"},             // i/ w/
		{"diff", "--cached"}, // c/ i/
		{"diff", "HEAD"},     // c/ w/
		{"diff", "-R"},       // w/ i/
	} {
		b.Write(r.git(append([]string{"-c", "diff.mnemonicPrefix=true"}, args...)...))
	}
	return b.Bytes()
}

func genCustomPrefix(t *testing.T) []byte {
	r := newRepo(t)
	r.write("src/main.go", "package main\n")
	r.write("gone.txt", "gone\n")
	r.write("move me.txt", lines("move", 20))
	r.write("tool.sh", "#!/bin/sh\n")
	r.commitAll("base")
	r.write("src/main.go", "package main\n\nfunc main() {}\n")
	r.write("added file.txt", "added\n")
	r.remove("gone.txt")
	r.mv("move me.txt", "moved here.txt")
	r.chmod("tool.sh", 0o755)
	r.write("empty", "")
	r.commitAll("change")
	var b bytes.Buffer
	b.Write(r.git("diff", "-M", "--src-prefix=x/", "--dst-prefix=y/", "HEAD~1", "HEAD"))
	b.Write(r.git("diff", "-M", "--src-prefix=SRC/", "--dst-prefix=DST/", "HEAD~1", "HEAD"))
	return b.Bytes()
}

func genFormatPatch(t *testing.T) []byte {
	r := newRepo(t)
	r.write("README.md", "# project\n")
	r.write("bridge/loop.py", "print('loop')\n")
	r.commitAll("base")
	r.write("README.md", "# project\n\nMore words.\n")
	r.write("docs/guide.md", "guide\n")
	r.commitAll("docs: add a guide\n\nThe guide explains things.\n--- not a header\n")
	r.write("bridge/loop.py", "print('loop')\nprint('again')\n")
	r.remove("README.md")
	r.commitAll("bridge: loop twice")
	return r.git("format-patch", "--stdout", "-2")
}

func genQuotedUnicode(t *testing.T) []byte {
	r := newRepo(t)
	names := []string{"sp aceé.txt", "t\tab.txt", "q\"uote.txt", "back\\slash.txt", "new\nline.txt", "dïr/ñ.txt"}
	for _, n := range names {
		r.write(n, "old\n")
	}
	r.write("rename\tsrc.txt", lines("rename", 20))
	r.commitAll("base")
	for _, n := range names {
		r.write(n, "old\nnew\n")
	}
	r.mv("rename\tsrc.txt", "renamed ü.txt")
	r.write("added\x01ctl.txt", "ctl\n")
	r.git("add", "-A")
	var b bytes.Buffer
	b.Write(r.git("diff", "--cached", "-M"))
	b.Write(r.git("-c", "core.quotePath=false", "diff", "--cached", "-M"))
	return b.Bytes()
}

func genSpaces(t *testing.T) []byte {
	r := newRepo(t)
	r.write("x y.txt", "x\n")
	r.write("old file.txt", "old\n")
	r.write("mode only.sh", "#!/bin/sh\n")
	r.write("bin ary.bin", "\x00\x01\x02")
	r.write("dir with space/f g", "f\n")
	r.write("r a.txt", lines("r", 20))
	r.write("x b/x", "tricky\n")
	r.write("a b", "ab\n")
	r.commitAll("base")
	r.write("x y.txt", "x\ny\n")
	r.write("new file.txt", "new\n")
	r.remove("old file.txt")
	r.chmod("mode only.sh", 0o755)
	r.write("bin ary.bin", "\x00\x01\x03")
	r.write("empty new.txt", "")
	r.write("dir with space/f g", "f\ng\n")
	r.git("add", "-A")
	r.mv("r a.txt", "r b.txt")
	r.chmod("x b/x", 0o755)
	r.chmod("a b", 0o755)
	r.git("add", "-A")
	return r.git("-c", "core.quotePath=false", "diff", "--cached", "-M")
}

func genRenameCopy(t *testing.T) []byte {
	r := newRepo(t)
	r.write("src/orig.go", lines("orig", 30))
	r.write("src/edit.go", lines("edit", 30))
	r.write("src/copied.go", lines("copied", 30))
	r.write("src/copyedit.go", lines("copyedit", 30))
	r.commitAll("base")
	r.mv("src/orig.go", "pkg/orig.go")
	r.mv("src/edit.go", "pkg/edited.go")
	r.write("pkg/edited.go", lines("edit", 30)+"one more line\n")
	r.write("lib/copy.go", lines("copied", 30))
	r.write("lib/copyedit.go", lines("copyedit", 30)+"changed\n")
	r.git("add", "-A")
	return r.git("diff", "--cached", "-M", "-C", "--find-copies-harder")
}

func genModeOnly(t *testing.T) []byte {
	r := newRepo(t)
	for _, f := range []string{"run.sh", "a/tool", "with space.sh", "b/a/c"} {
		r.write(f, "#!/bin/sh\n")
	}
	r.write("was-exec.sh", "#!/bin/sh\n")
	r.chmod("was-exec.sh", 0o755)
	r.commitAll("base")
	for _, f := range []string{"run.sh", "a/tool", "with space.sh", "b/a/c"} {
		r.chmod(f, 0o755)
	}
	r.chmod("was-exec.sh", 0o644)
	return r.git("diff")
}

func genBinary(t *testing.T) []byte {
	r := newRepo(t)
	r.write("img/logo.png", "\x89PNG\x00\x01")
	r.write("gone.bin", "\x00gone")
	r.commitAll("base")
	r.write("img/logo.png", "\x89PNG\x00\x02")
	r.write("new.bin", "\x00new")
	r.remove("gone.bin")
	r.git("add", "-A")
	var b bytes.Buffer
	b.Write(r.git("diff", "--cached"))
	b.Write(r.git("diff", "--cached", "--binary"))
	return b.Bytes()
}

func genDevNull(t *testing.T) []byte {
	r := newRepo(t)
	r.write("deleted.txt", "bye\n")
	r.write("deleted-empty", "")
	r.commitAll("base")
	r.write("added.txt", "hello\n")
	r.write("added empty", "")
	r.write("dir/added with space.txt", "hi\n")
	r.remove("deleted.txt")
	r.remove("deleted-empty")
	r.git("add", "-A")
	// Without --no-renames git pairs the two empty files as a rename.
	return r.git("diff", "--cached", "--no-renames")
}

// plainDir is a directory for running diff(1) with fixed mtimes.
func plainDir(t *testing.T) (dir string, write func(name, content string), run func(args ...string) []byte) {
	dir = t.TempDir()
	stamp := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	write = func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	run = func(args ...string) []byte {
		cmd := exec.Command("diff", args...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "TZ=UTC", "LC_ALL=C"}
		out, err := cmd.Output()
		ee := &exec.ExitError{}
		if errors.As(err, &ee) {
			err = nil // differences found
		}
		if err != nil {
			t.Fatalf("diff %q: %v", args, err)
		}
		return out
	}
	return dir, write, run
}

func genDiffUPlain(t *testing.T) []byte {
	_, write, run := plainDir(t)
	write("hello.c.orig", "int main(void) { return 1; }\n")
	write("hello.c", "int main(void) { return 0; }\n")
	write("lib/util.c.orig", "int util;\n")
	write("lib/util.c", "int util = 1;\n")
	write("NEWS", "news\n")
	write("same.txt", "one\n")
	write("same2/same.txt", "two\n")
	var b bytes.Buffer
	b.Write(run("-u", "hello.c.orig", "hello.c"))
	b.Write(run("-u", "lib/util.c.orig", "lib/util.c"))
	b.Write(run("-u", "/dev/null", "NEWS"))
	b.Write(run("-u", "same.txt", "same2/same.txt"))
	return b.Bytes()
}

func genDiffRuN(t *testing.T) []byte {
	_, write, run := plainDir(t)
	write("old/sub/x", "1\n2\n")
	write("new/sub/x", "1\n3\n")
	write("old/sp ace", "a\n")
	write("new/sp ace", "b\n")
	write("old/t\tab", "a\n")
	write("new/t\tab", "b\n")
	write("old/gone", "x\n")
	write("new/added", "y\n")
	write("old/bin", "\x00\x01")
	write("new/bin", "\x00\x02")
	write("old/a/b", "ab\n")
	write("new/a/b", "abc\n")
	return run("-ruN", "old", "new")
}

func genHunkLookalike(t *testing.T) []byte {
	r := newRepo(t)
	r.write("evil.txt", "keep\n-- a/evil\n-- /dev/null\ndiff --git a/evil b/evil\nkeep\n")
	r.write("after.txt", "after\n")
	r.commitAll("base")
	r.write("evil.txt", "keep\n++ b/evil\n@@ -1 +1 @@\ndiff --git a/evil2 b/evil2\n\nkeep\n- \nBinary files a/evil3 and b/evil3 differ\n")
	r.write("after.txt", "after\nafter\n")
	return r.git("diff")
}

func genSeveralFiles(t *testing.T) []byte {
	r := newRepo(t)
	files := []string{"README.md", "cmd/tool/main.go", "internal/x/y/z.go", "docs/a.md", "tests/test_a.py", ".github/workflows/ci.yml"}
	for _, f := range files {
		r.write(f, lines(f, 12))
	}
	r.commitAll("base")
	for i, f := range files {
		content := lines(f, 12)
		content = strings.Replace(content, " line 6 ", fmt.Sprintf(" line six (%d) ", i), 1)
		r.write(f, content+"appended\n")
	}
	return r.git("diff")
}

func genCombined(t *testing.T) []byte {
	r := newRepo(t)
	r.write("conflict me.txt", "1\n2\n3\n")
	r.write("clean.txt", "c\n")
	r.commitAll("base")
	r.git("checkout", "-q", "-b", "side")
	r.write("conflict me.txt", "1\nside\n3\n")
	r.write("side-only.txt", "s\n")
	r.commitAll("side")
	r.git("checkout", "-q", "main")
	r.write("conflict me.txt", "1\nmain\n3\n")
	r.write("clean.txt", "c\nmain\n")
	r.commitAll("main")
	if _, err := r.gitErr(nil, "merge", "-q", "side"); err == nil {
		t.Fatal("merge did not conflict")
	}
	var b bytes.Buffer
	b.Write(r.git("diff"))
	b.Write(r.git("diff", "--cached"))
	r.write("conflict me.txt", "1\nresolved\n3\n")
	r.write("evil merge.txt", "added in the merge\n")
	r.git("add", "-A")
	r.git("commit", "-q", "--no-edit")
	b.Write(r.git("show", "--format=commit %H", "--cc"))
	b.Write(r.git("show", "--format=commit %H", "-c"))
	return b.Bytes()
}

func genLogP(t *testing.T) []byte {
	r := newRepo(t)
	r.write("one.txt", lines("one", 15))
	r.commitAll("first\n\n    diff --git a/indented b/indented\n")
	r.mv("one.txt", "two.txt")
	r.write("three.txt", "3\n")
	r.commitAll("second")
	r.write("two.txt", lines("one", 15)+"more\n")
	r.commitAll("third")
	return r.git("log", "-p", "--stat", "-M", "--format=fuller")
}

func genTypeChange(t *testing.T) []byte {
	r := newRepo(t)
	r.write("link-me", "file\n")
	r.symlink("target", "was-link")
	r.commitAll("base")
	r.remove("link-me")
	r.symlink("elsewhere", "link-me")
	r.remove("was-link")
	r.write("was-link", "now a file\n")
	return r.git("diff")
}

func genCRLF(t *testing.T) []byte {
	r := newRepo(t)
	r.write("win dows.txt", "a\n\nb\n")
	r.write("gone.txt", "gone\n")
	r.write("tool.sh", "#!/bin/sh\n")
	r.commitAll("base")
	r.write("win dows.txt", "a\n\nb\nc\n")
	r.remove("gone.txt")
	r.chmod("tool.sh", 0o755)
	r.write("new.txt", "new\n")
	r.git("add", "-A")
	out := r.git("diff", "--cached")
	// A mailer that strips trailing white space turns the empty
	// context line " " into "", which git apply accepts.
	out = bytes.ReplaceAll(out, []byte("\n \n"), []byte("\n\n"))
	return bytes.ReplaceAll(out, []byte("\n"), []byte("\r\n"))
}

// genSubmoduleLog: --submodule=log and =diff print a "Submodule" line, not
// a "diff --git" section, for a submodule whose commit changed.
func genSubmoduleLog(t *testing.T) []byte {
	inner := newRepo(t)
	inner.write("f", "1\n")
	inner.commitAll("one")
	r := newRepo(t)
	r.write("x", "x\n")
	r.commitAll("base")
	r.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", inner.dir, "sub mod")
	r.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", inner.dir, "gone")
	r.commitAll("submodules")
	inner.write("f", "1\n2\n")
	inner.commitAll("two")
	sub := &gitRepo{t: t, dir: filepath.Join(r.dir, "sub mod"), env: r.env}
	sub.git("pull", "-q", "--no-rebase", "origin", "main")
	r.git("rm", "-q", "gone")
	r.write("x", "x\ny\n")
	r.git("add", "-A")
	var b bytes.Buffer
	b.Write(r.git("diff", "--cached", "--submodule=log"))
	b.Write(r.git("diff", "--cached", "--submodule=diff"))
	return b.Bytes()
}

// genCombinedAllPaths: a merge that renames a file on one side and edits
// it on the other; --combined-all-paths names the old path on one "---".
func genCombinedAllPaths(t *testing.T) []byte {
	r := newRepo(t)
	r.write("old name.txt", lines("old", 20))
	r.commitAll("base")
	r.git("checkout", "-q", "-b", "side")
	r.mv("old name.txt", "new name.txt")
	r.commitAll("rename")
	r.git("checkout", "-q", "main")
	r.write("old name.txt", lines("old", 20)+"main\n")
	r.commitAll("edit")
	r.git("merge", "-q", "--no-edit", "side")
	r.write("new name.txt", lines("old", 20)+"main\nevil\n")
	r.git("commit", "-q", "-a", "--amend", "--no-edit")
	var b bytes.Buffer
	b.Write(r.git("show", "--format=commit %H", "-M", "--cc", "--combined-all-paths"))
	b.Write(r.git("show", "--format=commit %H", "-M", "-c", "--combined-all-paths", "--no-prefix"))
	return b.Bytes()
}

// genPrefixNoSlash: --src-prefix=a --dst-prefix=b on sub/x gives
// "asub/x bsub/x", which is also x under prefixes asub/ and bsub/.
func genPrefixNoSlash(t *testing.T) []byte {
	r := newRepo(t)
	r.write("sub/x", "1\n")
	r.commitAll("base")
	r.write("sub/x", "2\n")
	return r.git("diff", "--src-prefix=a", "--dst-prefix=b")
}

// genPrefixTwoLevels: prefixes x/v1/ and y/v1/ on f print what prefixes x/
// and y/ print on v1/f.
func genPrefixTwoLevels(t *testing.T) []byte {
	r := newRepo(t)
	r.write("f", "1\n")
	r.commitAll("base")
	r.write("f", "2\n")
	return r.git("diff", "--src-prefix=x/v1/", "--dst-prefix=y/v1/")
}

// genPlainDevNullDir: diff -u /dev/null b/y, where b/ is a directory, not
// git's prefix.
func genPlainDevNullDir(t *testing.T) []byte {
	_, write, run := plainDir(t)
	write("b/y", "y\n")
	return run("-u", "/dev/null", "b/y")
}

// writeFuzzSeeds writes seed corpora in go's fuzz format from the fixtures:
// the patches for FuzzParsePatch, and real git -z output for the others.
func writeFuzzSeeds(t *testing.T) {
	patches, err := filepath.Glob(filepath.Join("testdata", "patches", "*.patch"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(patches)
	var seeds [][]byte
	for _, p := range patches {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) <= 4096 {
			seeds = append(seeds, data)
		}
	}
	writeCorpus(t, "FuzzParsePatch", seeds)

	r := nameStatusRepo(t)
	var ns [][]byte
	for _, args := range [][]string{
		{"diff", "--cached", "--name-status", "-z", "-M"},
		{"diff", "--cached", "--name-status", "-z", "-M", "-C", "--find-copies-harder"},
		{"diff", "--cached", "--raw", "-z", "-M", "-C", "--find-copies-harder"},
		{"diff", "--cached", "--raw", "-z", "--abbrev=40"},
		{"diff", "--cached", "--name-status", "-z", "--no-renames"},
	} {
		ns = append(ns, r.git(args...))
	}
	h := historyRepo(t)
	ns = append(ns,
		h.repo.git("diff-tree", "-r", "-z", "--name-status", "--cc", "--no-commit-id", h.merge),
		h.repo.git("diff-tree", "-r", "-z", "--raw", "--cc", "--no-commit-id", "--combined-all-paths", h.merge),
		[]byte("M\x00a\x00R087\x00old\x00new\x00"),
		[]byte(":100644 100644 1234567 89abcde M\x00p\x00"),
		[]byte("MM\x00merged\x00"),
	)
	writeCorpus(t, "FuzzParseNameStatusZ", ns)

	var tr [][]byte
	for _, args := range [][]string{
		{"diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root"},
		{"diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root", "--cc"},
		{"diff-tree", "--stdin", "-r", "-z", "--raw", "-M", "--root", "--cc"},
		{"diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root", "-m"},
	} {
		tr = append(tr, h.repo.gitIn(h.revList, args...))
	}
	trees := h.repo.git("rev-parse", h.merge+"^{tree}", h.root+"^{tree}")
	pairLine := bytes.Replace(bytes.TrimSpace(trees), []byte("\n"), []byte(" "), 1)
	tr = append(tr,
		h.repo.gitIn(append(pairLine, '\n'), "diff-tree", "--stdin", "-r", "-z", "--name-status"),
		[]byte("\n"),
		[]byte(strings.Repeat("a", 40)+"\x00M\x00x\x00"),
		[]byte(strings.Repeat("b", 64)+"\x00R100\x00o\x00n\x00"+strings.Repeat("c", 40)+"\x00"),
	)
	writeCorpus(t, "FuzzTreeReader", tr)
}

// writeCorpus replaces the generated seeds of one fuzz target; inputs the
// fuzzer found (kept as regressions) are left alone.
func writeCorpus(t *testing.T, name string, seeds [][]byte) {
	dir := filepath.Join("testdata", "fuzz", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "seed*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
