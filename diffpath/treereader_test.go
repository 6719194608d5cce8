package diffpath

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// history is a small repository history: a root commit, ordinary commits,
// a rename, an empty commit, a merge whose conflict was resolved by hand
// (and which adds a file of its own), and a clean merge.
type history struct {
	repo                                      *gitRepo
	root, modify, rename, empty, side, main   string
	merge, renameSide, renameMain, cleanMerge string
	revList                                   []byte // all commits, newest first, one per line
}

func historyRepo(t testing.TB, initArgs ...string) *history {
	r := newRepo(t, initArgs...)
	h := &history{repo: r}
	head := func() string { return strings.TrimSpace(string(r.git("rev-parse", "HEAD"))) }
	r.write("a.txt", "a\n")
	r.write("c.txt", "1\n2\n3\n")
	r.write("d/f.txt", lines("f", 20))
	r.write("big.txt", lines("big", 40))
	r.commitAll("root")
	h.root = head()
	r.write("a.txt", "a\na\n")
	r.commitAll("modify")
	h.modify = head()
	r.mv("d/f.txt", "d/g h.txt")
	r.commitAll("rename")
	h.rename = head()
	r.commitAll("empty")
	h.empty = head()

	r.git("checkout", "-q", "-b", "side")
	r.write("s p.txt", "s\n")
	r.write("c.txt", "1\nside\n3\n")
	r.mv("big.txt", "big2.txt")
	r.write("big2.txt", strings.Replace(lines("big", 40), "big line 5 ", "side line 5 ", 1))
	r.commitAll("side")
	h.side = head()

	r.git("checkout", "-q", "main")
	r.write("c.txt", "1\nmain\n3\n")
	r.write("big.txt", strings.Replace(lines("big", 40), "big line 5 ", "main line 5 ", 1))
	r.commitAll("main")
	h.main = head()
	if _, err := r.gitErr(nil, "merge", "-q", "side"); err == nil {
		t.Fatal("merge did not conflict")
	}
	r.write("c.txt", "1\nresolved\n3\n")
	r.write("big2.txt", strings.Replace(lines("big", 40), "big line 5 ", "merged line 5 ", 1))
	r.write("evil.txt", "added by the merge\n")
	r.git("add", "-A")
	r.git("commit", "-q", "--no-edit")
	h.merge = head()

	r.git("checkout", "-q", "-b", "side2")
	r.write("z.txt", "z\n")
	r.commitAll("side2")
	h.renameSide = head()
	r.git("checkout", "-q", "main")
	r.write("w.txt", "w\n")
	r.commitAll("main2")
	h.renameMain = head()
	r.git("merge", "-q", "--no-edit", "side2")
	h.cleanMerge = head()
	h.revList = r.git("rev-list", "--topo-order", "main")
	return h
}

type commitChanges struct {
	commit  string
	changes []Change
}

func readAllTrees(t *testing.T, tr *TreeReader) []commitChanges {
	t.Helper()
	var out []commitChanges
	for {
		c, ch, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, commitChanges{c, ch})
		if len(out) > 1000 {
			t.Fatal("Next does not stop")
		}
	}
}

func TestTreeReaderRealGit(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			h := historyRepo(t, "--object-format="+format)
			rootChanges := []Change{
				{Status: 'A', Path: "a.txt"}, {Status: 'A', Path: "big.txt"},
				{Status: 'A', Path: "c.txt"}, {Status: 'A', Path: "d/f.txt"},
			}
			common := func(merge []commitChanges) []commitChanges {
				out := []commitChanges{
					{h.cleanMerge, nil},
					{h.renameMain, []Change{{Status: 'A', Path: "w.txt"}}},
					{h.renameSide, []Change{{Status: 'A', Path: "z.txt"}}},
				}
				out = append(out, merge...)
				return append(out,
					commitChanges{h.main, []Change{{Status: 'M', Path: "big.txt"}, {Status: 'M', Path: "c.txt"}}},
					commitChanges{h.side, []Change{{Status: 'R', Score: 97, Path: "big2.txt", OldPath: "big.txt"}, {Status: 'M', Path: "c.txt"}, {Status: 'A', Path: "s p.txt"}}},
					commitChanges{h.rename, []Change{{Status: 'R', Score: 100, Path: "d/g h.txt", OldPath: "d/f.txt"}}},
					commitChanges{h.modify, []Change{{Status: 'M', Path: "a.txt"}}},
					commitChanges{h.root, rootChanges},
				)
			}
			cc := []Change{{Status: 'M', Path: "big2.txt"}, {Status: 'M', Path: "c.txt"}, {Status: 'A', Path: "evil.txt"}}
			ccAll := []Change{{Status: 'R', Path: "big2.txt", OldPath: "big.txt"}, {Status: 'M', Path: "c.txt"}, {Status: 'A', Path: "evil.txt"}}
			tests := []struct {
				name     string
				args     []string
				allPaths bool
				want     []commitChanges
			}{
				{
					name: "merges skipped without --cc",
					args: []string{"--name-status"},
					want: removeCommits(common(nil), h.cleanMerge),
				},
				{
					name: "cc",
					args: []string{"--name-status", "--cc"},
					want: common([]commitChanges{{h.merge, cc}}),
				},
				{
					name: "cc raw",
					args: []string{"--raw", "--cc"},
					want: common([]commitChanges{{h.merge, cc}}),
				},
				{
					name:     "cc all paths",
					args:     []string{"--name-status", "--cc", "--combined-all-paths"},
					allPaths: true,
					want:     common([]commitChanges{{h.merge, ccAll}}),
				},
				{
					name:     "cc raw all paths",
					args:     []string{"--raw", "--cc", "--combined-all-paths"},
					allPaths: true,
					want:     common([]commitChanges{{h.merge, ccAll}}),
				},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					args := append([]string{"diff-tree", "--stdin", "-r", "-z", "-M", "--root"}, tt.args...)
					out := h.repo.gitIn(h.revList, args...)
					tr := NewTreeReader(bytes.NewReader(out))
					tr.CombinedAllPaths = tt.allPaths
					got := readAllTrees(t, tr)
					tt.want = inRevListOrder(tt.want, h.revList)
					if len(got) != len(tt.want) {
						t.Fatalf("got %d commits, want %d:\n%#v", len(got), len(tt.want), got)
					}
					for i := range got {
						if got[i].commit != tt.want[i].commit {
							t.Fatalf("commit %d = %s, want %s", i, got[i].commit, tt.want[i].commit)
						}
						if d := diffChanges(got[i].changes, tt.want[i].changes); d != "" {
							t.Fatalf("commit %d (%s):\n%s", i, got[i].commit, d)
						}
					}
				})
			}
		})
	}
}

// inRevListOrder orders commits as the rev-list output that fed git.
func inRevListOrder(in []commitChanges, revList []byte) []commitChanges {
	var out []commitChanges
	for _, c := range strings.Fields(string(revList)) {
		for _, cc := range in {
			if cc.commit == c {
				out = append(out, cc)
			}
		}
	}
	return out
}

func removeCommits(in []commitChanges, drop string) []commitChanges {
	var out []commitChanges
	for _, c := range in {
		if c.commit != drop {
			out = append(out, c)
		}
	}
	return out
}

// TestTreeReaderMatchesPerCommit checks the stream against git run once
// per commit, parsed by ParseNameStatusZ: the two must agree.
func TestTreeReaderMatchesPerCommit(t *testing.T) {
	t.Parallel()
	h := historyRepo(t)
	out := h.repo.gitIn(h.revList, "diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root", "-m")
	got := readAllTrees(t, NewTreeReader(bytes.NewReader(out)))
	var want []commitChanges
	for _, c := range strings.Fields(string(h.revList)) {
		parents := strings.Fields(string(h.repo.git("rev-list", "--parents", "-n1", c)))[1:]
		if len(parents) == 0 {
			parents = []string{"--root"}
		}
		for _, p := range parents {
			args := []string{"diff-tree", "-r", "-z", "--name-status", "-M", "--no-commit-id"}
			if p == "--root" {
				args = append(args, "--root", c)
			} else {
				args = append(args, p, c)
			}
			ch, err := ParseNameStatusZ(h.repo.git(args...))
			if err != nil {
				t.Fatal(err)
			}
			if len(ch) > 0 {
				want = append(want, commitChanges{c, ch})
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %d diffs, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].commit != want[i].commit {
			t.Fatalf("diff %d: commit %s, want %s", i, got[i].commit, want[i].commit)
		}
		if d := diffChanges(got[i].changes, want[i].changes); d != "" {
			t.Fatalf("diff %d (%s):\n%s", i, got[i].commit, d)
		}
	}
}

func TestTreeReaderTreePairs(t *testing.T) {
	t.Parallel()
	h := historyRepo(t)
	trees := strings.Fields(string(h.repo.git("rev-parse", h.root+"^{tree}", h.modify+"^{tree}", h.rename+"^{tree}", h.empty+"^{tree}")))
	in := trees[0] + " " + trees[1] + "\n" + // a.txt modified
		trees[2] + " " + trees[3] + "\n" + // same tree: header only
		h.modify + "\n" + // a commit after tree pairs
		trees[1] + " " + trees[0] + "\n"
	out := h.repo.gitIn([]byte(in), "diff-tree", "--stdin", "-r", "-z", "--name-status")
	got := readAllTrees(t, NewTreeReader(bytes.NewReader(out)))
	want := []commitChanges{
		{trees[0] + " " + trees[1], []Change{{Status: 'M', Path: "a.txt"}}},
		{trees[2] + " " + trees[3], nil},
		{h.modify, []Change{{Status: 'M', Path: "a.txt"}}},
		{trees[1] + " " + trees[0], []Change{{Status: 'M', Path: "a.txt"}}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %#v\nwant %#v\ninput %q", got, want, out)
	}
	for i := range got {
		if got[i].commit != want[i].commit || diffChanges(got[i].changes, want[i].changes) != "" {
			t.Fatalf("entry %d: got %#v, want %#v (input %q)", i, got[i], want[i], out)
		}
	}
}

func TestTreeReaderSynthetic(t *testing.T) {
	t.Parallel()
	c1, c2 := strings.Repeat("a", 40), strings.Repeat("b", 64)
	t1, t2 := strings.Repeat("c", 40), strings.Repeat("d", 40)
	tests := []struct {
		name     string
		in       string
		allPaths bool
		want     []commitChanges
		wantErr  string // error from the Next call after the wanted commits
		path     bool
	}{
		{name: "empty input"},
		{name: "one commit", in: c1 + "\x00M\x00x\x00", want: []commitChanges{{c1, []Change{{Status: 'M', Path: "x"}}}}},
		{name: "sha256 and header-only", in: c2 + "\x00" + c1 + "\x00A\x00y\x00", want: []commitChanges{{c2, nil}, {c1, []Change{{Status: 'A', Path: "y"}}}}},
		{name: "hex-looking path", in: c1 + "\x00M\x00" + c2 + "\x00", want: []commitChanges{{c1, []Change{{Status: 'M', Path: c2}}}}},
		{name: "headerless", in: "M\x00x\x00" + c1 + "\x00D\x00y\x00", want: []commitChanges{{"", []Change{{Status: 'M', Path: "x"}}}, {c1, []Change{{Status: 'D', Path: "y"}}}}},
		{name: "tree pair at end", in: c1 + "\x00M\x00x\x00" + t1 + " " + t2 + "\n", want: []commitChanges{{c1, []Change{{Status: 'M', Path: "x"}}}, {t1 + " " + t2, nil}}},
		{name: "tree pairs back to back", in: t1 + " " + t2 + "\n" + t2 + " " + t1 + "\nM\x00x\x00", want: []commitChanges{{t1 + " " + t2, nil}, {t2 + " " + t1, []Change{{Status: 'M', Path: "x"}}}}},
		{name: "blank echoed lines", in: "\n\n" + c1 + "\x00M\x00x\x00", want: []commitChanges{{c1, []Change{{Status: 'M', Path: "x"}}}}},
		{name: "newline in path", in: c1 + "\x00M\x00a\nb\x00", want: []commitChanges{{c1, []Change{{Status: 'M', Path: "a\nb"}}}}},
		{name: "combined all paths", in: c1 + "\x00RM\x00old\x00new\x00new\x00", allPaths: true, want: []commitChanges{{c1, []Change{{Status: 'R', Path: "new", OldPath: "old"}}}}},
		{name: "echoed garbage", in: "zz\n" + c1 + "\x00", wantErr: "unexpected line"},
		{name: "uppercase hex is not a header", in: "A" + strings.Repeat("0", 39) + "\x00", wantErr: "invalid entry"},
		{name: "truncated entry", in: c1 + "\x00R100\x00old\x00", want: nil, wantErr: "truncated"},
		{name: "unterminated", in: c1 + "\x00M\x00x", wantErr: "truncated"},
		{name: "not -z", in: c1 + "\nM\tx\n", wantErr: "unexpected line"},
		{name: "bad path", in: c1 + "\x00M\x00../x\x00", wantErr: "escapes", path: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTreeReader(strings.NewReader(tt.in))
			tr.CombinedAllPaths = tt.allPaths
			for i, w := range tt.want {
				c, ch, err := tr.Next()
				if err != nil {
					t.Fatalf("Next %d: %v", i, err)
				}
				if c != w.commit || fmt.Sprintf("%#v", ch) != fmt.Sprintf("%#v", w.changes) {
					t.Fatalf("Next %d = %q %#v, want %q %#v", i, c, ch, w.commit, w.changes)
				}
			}
			_, _, err := tr.Next()
			if tt.wantErr == "" {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("final Next: %v, want io.EOF", err)
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("final Next: %v, want error containing %q", err, tt.wantErr)
				}
				var pe *PathError
				var se *SyntaxError
				if tt.path && !errors.As(err, &pe) || !tt.path && !errors.As(err, &se) {
					t.Fatalf("error %v has type %T", err, err)
				}
			}
			if _, _, again := tr.Next(); !errors.Is(again, err) {
				t.Fatalf("error is not sticky: %v then %v", err, again)
			}
		})
	}
}

// TestTreeReaderLongField crosses the bufio buffer size.
func TestTreeReaderLongField(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("d/", 40000) + "f"
	c1 := strings.Repeat("a", 40)
	tr := NewTreeReader(strings.NewReader(c1 + "\x00M\x00" + long + "\x00"))
	c, ch, err := tr.Next()
	if err != nil || c != c1 || len(ch) != 1 || ch[0].Path != long {
		t.Fatalf("got %q %d changes, %v", c, len(ch), err)
	}
	tr = NewTreeReader(strings.NewReader(c1 + "\x00M\x00" + strings.Repeat("x", 2<<20) + "\x00"))
	if _, _, err := tr.Next(); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("got %v, want a field-length error", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestTreeReaderReadError(t *testing.T) {
	t.Parallel()
	tr := NewTreeReader(io.MultiReader(strings.NewReader(strings.Repeat("a", 40)+"\x00M\x00"), errReader{}))
	if _, _, err := tr.Next(); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("got %v, want the read error", err)
	}
}
