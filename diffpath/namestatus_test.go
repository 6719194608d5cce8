package diffpath

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// nameStatusRepo returns a repository whose index holds one change of every
// kind against HEAD, with names that need quoting outside -z.
func nameStatusRepo(t testing.TB) *gitRepo {
	r := newRepo(t)
	r.write("mod.txt", "m\n")
	r.write("del.txt", "d\n")
	r.write("ren/src.txt", lines("ren", 20))
	r.write("copy/src.txt", lines("copy", 20))
	r.write("type.txt", "file\n")
	r.write("sp ace/file name.txt", "s\n")
	r.write("uni/ñandú.txt", "u\n")
	r.write("bridge/loop.py", "loop\n")
	r.write(`back\slash.txt`, "b\n")
	r.commitAll("base")

	r.write("mod.txt", "m\nm\n")
	r.remove("del.txt")
	r.mv("ren/src.txt", "ren/dst.txt")
	r.write("copy/dst.txt", lines("copy", 20))
	r.remove("type.txt")
	r.symlink("mod.txt", "type.txt")
	r.write("sp ace/file name.txt", "s\ns\n")
	r.write("uni/ñandú.txt", "u\nu\n")
	r.write("bridge/loop.py", "loop\nloop\n")
	r.write(`back\slash.txt`, "b\nb\n")
	r.write("added é.txt", "a\n")
	r.write("new\nline.txt", "n\n")
	r.write("tab\there.txt", "t\n")
	r.write("quote\"d.txt", "q\n")
	r.git("add", "-A")
	return r
}

// nameStatusWant is what nameStatusRepo's index holds, given the rename and
// copy detection in use.
func nameStatusWant(copies, renames bool) []Change {
	want := []Change{
		{Status: 'M', Path: "mod.txt"},
		{Status: 'D', Path: "del.txt"},
		{Status: 'T', Path: "type.txt"},
		{Status: 'M', Path: "sp ace/file name.txt"},
		{Status: 'M', Path: "uni/ñandú.txt"},
		{Status: 'M', Path: "bridge/loop.py"},
		{Status: 'M', Path: `back\slash.txt`},
		{Status: 'A', Path: "added é.txt"},
		{Status: 'A', Path: "new\nline.txt"},
		{Status: 'A', Path: "tab\there.txt"},
		{Status: 'A', Path: "quote\"d.txt"},
	}
	if renames {
		want = append(want, Change{Status: 'R', Score: 100, Path: "ren/dst.txt", OldPath: "ren/src.txt"})
	} else {
		want = append(want, Change{Status: 'D', Path: "ren/src.txt"}, Change{Status: 'A', Path: "ren/dst.txt"})
	}
	if copies {
		want = append(want, Change{Status: 'C', Score: 100, Path: "copy/dst.txt", OldPath: "copy/src.txt"})
	} else {
		want = append(want, Change{Status: 'A', Path: "copy/dst.txt"})
	}
	return want
}

func sortChanges(cs []Change) []Change {
	out := append([]Change(nil), cs...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Status < out[j].Status
	})
	return out
}

func diffChanges(got, want []Change) string {
	g, w := fmt.Sprintf("%#v", sortChanges(got)), fmt.Sprintf("%#v", sortChanges(want))
	if g == w {
		return ""
	}
	return "got:\n" + formatChanges(got) + "want:\n" + formatChanges(want)
}

func TestParseNameStatusZRealGit(t *testing.T) {
	t.Parallel()
	r := nameStatusRepo(t)
	tests := []struct {
		name string
		args []string
		want []Change
	}{
		{
			name: "renames and copies harder",
			args: []string{"diff", "--cached", "--name-status", "-z", "-M", "-C", "--find-copies-harder"},
			want: nameStatusWant(true, true),
		},
		{
			name: "quotePath false changes nothing with -z",
			args: []string{"-c", "core.quotePath=false", "diff", "--cached", "--name-status", "-z", "-M", "-C", "--find-copies-harder"},
			want: nameStatusWant(true, true),
		},
		{
			name: "renames only",
			args: []string{"diff", "--cached", "--name-status", "-z", "-M"},
			want: nameStatusWant(false, true),
		},
		{
			name: "no renames",
			args: []string{"diff", "--cached", "--name-status", "-z", "--no-renames"},
			want: nameStatusWant(false, false),
		},
		{
			name: "diff-tree of the index tree",
			args: []string{"diff-index", "--cached", "--name-status", "-z", "-M", "HEAD"},
			want: nameStatusWant(false, true),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseNameStatusZ(r.git(tt.args...))
			if err != nil {
				t.Fatal(err)
			}
			if d := diffChanges(got, tt.want); d != "" {
				t.Fatal(d)
			}
		})
	}
}

func TestParseRawZRealGit(t *testing.T) {
	t.Parallel()
	r := nameStatusRepo(t)
	tests := []struct {
		name string
		args []string
		want []Change
	}{
		{
			name: "abbreviated",
			args: []string{"diff", "--cached", "--raw", "-z", "-M", "-C", "--find-copies-harder"},
			want: nameStatusWant(true, true),
		},
		{
			name: "full object names",
			args: []string{"diff", "--cached", "--raw", "-z", "--abbrev=40", "-M"},
			want: nameStatusWant(false, true),
		},
		{
			name: "no renames",
			args: []string{"diff", "--cached", "--raw", "-z", "--no-renames"},
			want: nameStatusWant(false, false),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRawZ(r.git(tt.args...))
			if err != nil {
				t.Fatal(err)
			}
			if d := diffChanges(got, tt.want); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestCombinedRealGit parses the combined diff of a merge that renamed a
// file on one side and resolved a conflict in it, in every -z form.
func TestCombinedRealGit(t *testing.T) {
	t.Parallel()
	h := historyRepo(t)
	ns := []Change{
		{Status: 'M', Path: "big2.txt"}, // "RM": the old name is not printed
		{Status: 'M', Path: "c.txt"},
		{Status: 'A', Path: "evil.txt"},
	}
	all := []Change{
		{Status: 'R', Path: "big2.txt", OldPath: "big.txt"},
		{Status: 'M', Path: "c.txt"},
		{Status: 'A', Path: "evil.txt"},
	}
	tests := []struct {
		name  string
		parse func([]byte) ([]Change, error)
		args  []string
		want  []Change
	}{
		{name: "name-status", parse: ParseNameStatusZ, args: []string{"--name-status"}, want: ns},
		{name: "raw", parse: ParseRawZ, args: []string{"--raw"}, want: ns},
		{name: "raw all paths", parse: ParseRawZ, args: []string{"--raw", "--combined-all-paths"}, want: all},
		{name: "raw dense", parse: ParseRawZ, args: []string{"--raw", "-c", "--combined-all-paths"}, want: all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"diff-tree", "-r", "-z", "-M", "--cc", "--no-commit-id"}, tt.args...)
			out := h.repo.git(append(args, h.merge)...)
			got, err := tt.parse(out)
			if err != nil {
				t.Fatalf("%v\ninput %q", err, out)
			}
			if d := diffChanges(got, tt.want); d != "" {
				t.Fatalf("input %q\n%s", out, d)
			}
		})
	}
}

func TestParseNameStatusZUnmerged(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("f g", "1\n2\n3\n")
	r.commitAll("base")
	r.git("checkout", "-q", "-b", "side")
	r.write("f g", "1\nside\n3\n")
	r.commitAll("side")
	r.git("checkout", "-q", "main")
	r.write("f g", "1\nmain\n3\n")
	r.commitAll("main")
	if _, err := r.gitErr(nil, "merge", "-q", "side"); err == nil {
		t.Fatal("merge did not conflict")
	}
	for _, args := range [][]string{
		{"diff", "--cached", "--name-status", "-z"},
		{"diff", "--name-status", "-z"},
	} {
		got, err := ParseNameStatusZ(r.git(args...))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0] != (Change{Status: 'U', Path: "f g"}) {
			t.Fatalf("git %q: got %#v, want an unmerged f g first", args, got)
		}
	}
	raw, err := ParseRawZ(r.git("diff", "--cached", "--raw", "-z"))
	if err != nil || len(raw) != 1 || raw[0] != (Change{Status: 'U', Path: "f g"}) {
		t.Fatalf("raw: got %#v, %v", raw, err)
	}
}

func TestParseNameStatusZSynthetic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []Change
		wantErr string // substring; "" for success
		path    bool   // the error is a *PathError
	}{
		{name: "empty", in: "", want: nil},
		{name: "modify", in: "M\x00a\x00", want: []Change{{Status: 'M', Path: "a"}}},
		{name: "rename score", in: "R087\x00old\x00new\x00", want: []Change{{Status: 'R', Score: 87, Path: "new", OldPath: "old"}}},
		{name: "copy", in: "C100\x00src\x00dst\x00", want: []Change{{Status: 'C', Score: 100, Path: "dst", OldPath: "src"}}},
		{name: "broken pair score ignored", in: "M050\x00a\x00", want: []Change{{Status: 'M', Path: "a"}}},
		{name: "type unknown unmerged", in: "T\x00t\x00X\x00x\x00U\x00u\x00", want: []Change{{Status: 'T', Path: "t"}, {Status: 'X', Path: "x"}, {Status: 'U', Path: "u"}}},
		{name: "combined", in: "MM\x00m\x00AA\x00a\x00RM\x00r\x00", want: []Change{{Status: 'M', Path: "m"}, {Status: 'A', Path: "a"}, {Status: 'M', Path: "r"}}},
		{name: "path is normalized", in: "M\x00./a//b\x00", want: []Change{{Status: 'M', Path: "a/b"}}},
		{name: "status-looking path", in: "M\x00M\x00A\x00R100\x00", want: []Change{{Status: 'M', Path: "M"}, {Status: 'A', Path: "R100"}}},
		{name: "not -z", in: "M\ta\n", wantErr: "does not end with NUL"},
		{name: "tab separated with NUL", in: "M\ta\x00", wantErr: "invalid status"},
		{name: "bad letter", in: "Q\x00a\x00", wantErr: "invalid status"},
		{name: "lowercase", in: "m\x00a\x00", wantErr: "invalid status"},
		{name: "score too big", in: "R101\x00a\x00b\x00", wantErr: "invalid status"},
		{name: "combined with score", in: "MM1\x00a\x00", wantErr: "invalid status"},
		{name: "truncated rename", in: "R100\x00old\x00", wantErr: "truncated"},
		{name: "empty path", in: "M\x00\x00", wantErr: "empty", path: true},
		{name: "absolute path", in: "M\x00/etc/passwd\x00", wantErr: "absolute", path: true},
		{name: "dotgit", in: "M\x00.git/config\x00", wantErr: ".git", path: true},
		{name: "escape in rename source", in: "R100\x00../x\x00y\x00", wantErr: "escapes", path: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseNameStatusZ([]byte(tt.in))
			checkResult(t, got, err, tt.want, tt.wantErr, tt.path)
		})
	}
}

func TestParseRawZSynthetic(t *testing.T) {
	t.Parallel()
	z40 := strings.Repeat("0", 40)
	tests := []struct {
		name    string
		in      string
		want    []Change
		wantErr string
		path    bool
	}{
		{name: "modify", in: ":100644 100644 abc1234 def5678 M\x00a\x00", want: []Change{{Status: 'M', Path: "a"}}},
		{name: "rename", in: ":100644 100644 " + z40 + " " + z40 + " R100\x00o\x00n\x00", want: []Change{{Status: 'R', Score: 100, Path: "n", OldPath: "o"}}},
		{name: "dots after abbreviation", in: ":100644 100644 abc1234... def5678... M\x00a\x00", want: []Change{{Status: 'M', Path: "a"}}},
		{name: "combined", in: "::100644 100644 100644 a b c MM\x00p\x00::000000 000000 100644 0 0 e AA\x00q\x00", want: []Change{{Status: 'M', Path: "p"}, {Status: 'A', Path: "q"}}},
		{name: "combined all paths", in: "::100644 100644 100644 a b c RM\x00old\x00new\x00new\x00", want: []Change{{Status: 'R', Path: "new", OldPath: "old"}}},
		{name: "combined all paths last", in: "::100644 100644 100644 a b c MM\x00p\x00p\x00p\x00:100644 100644 a b M\x00z\x00", want: []Change{{Status: 'M', Path: "p"}, {Status: 'M', Path: "z"}}},
		{name: "octopus", in: ":::100644 100644 100644 100644 a b c d MMM\x00p\x00", want: []Change{{Status: 'M', Path: "p"}}},
		{name: "letters do not match parents", in: "::100644 100644 100644 a b c M\x00p\x00", wantErr: "invalid raw record"},
		{name: "bad mode", in: ":10064 100644 a b M\x00a\x00", wantErr: "invalid raw record"},
		{name: "bad object", in: ":100644 100644 xyz b M\x00a\x00", wantErr: "invalid raw record"},
		{name: "name-status given to raw", in: "M\x00a\x00", wantErr: "invalid raw record"},
		{name: "not -z", in: ":100644 100644 a b M\ta\n", wantErr: "does not end with NUL"},
		{name: "truncated", in: ":100644 100644 a b R100\x00a\x00", wantErr: "truncated"},
		{name: "bad path", in: ":100644 100644 a b M\x00a/../../b\x00", wantErr: "escapes", path: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRawZ([]byte(tt.in))
			checkResult(t, got, err, tt.want, tt.wantErr, tt.path)
		})
	}
}

func checkResult(t *testing.T, got []Change, err error, want []Change, wantErr string, wantPath bool) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("got %#v, %v; want error containing %q", got, err, wantErr)
		}
		var pe *PathError
		var se *SyntaxError
		if wantPath && !errors.As(err, &pe) || !wantPath && !errors.As(err, &se) {
			t.Fatalf("error %v (%T) has the wrong type; want PathError: %v", err, err, wantPath)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Fatalf("got:\n%swant:\n%s", formatChanges(got), formatChanges(want))
	}
}

// formatChanges renders changes one per line, the golden file format:
// status (with a rename or copy score), the path, and "<- old path".
func formatChanges(cs []Change) string {
	var b bytes.Buffer
	for _, c := range cs {
		b.WriteByte(c.Status)
		if c.Score != 0 || c.Status == 'R' || c.Status == 'C' {
			fmt.Fprintf(&b, "%03d", c.Score)
		}
		fmt.Fprintf(&b, " %q", c.Path)
		if c.OldPath != "" {
			fmt.Fprintf(&b, " <- %q", c.OldPath)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
