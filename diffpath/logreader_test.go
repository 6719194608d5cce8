package diffpath

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// logArgs is how lockgate runs git log for LogReader.
var logArgs = []string{"-c", "log.showRoot=true", "-c", "log.showSignature=false", "log", "-z", "--no-color",
	"--encoding=UTF-8", "--no-relative", "--no-ext-diff", "--no-textconv", "--format=" + LogFormat, "--name-status", "-M", "--cc"}

func readAllLog(t *testing.T, lr *LogReader) []*LogCommit {
	t.Helper()
	var out []*LogCommit
	for {
		c, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
		if len(out) > 1000 {
			t.Fatal("Next does not stop")
		}
	}
}

// One git log gives what rev-list | diff-tree --cc and a git log of the
// messages give, commit by commit, on a history of renames, an empty
// commit, a merge resolved by hand and a clean one.
func TestLogReaderMatchesDiffTree(t *testing.T) {
	h := historyRepo(t)
	r := h.repo
	r.git("commit", "-q", "--allow-empty", "-m", "subject \x01 with the marker\n\nbody")
	out := r.git(append(logArgs, "main")...)
	got := readAllLog(t, NewLogReader(strings.NewReader(string(out))))
	revs := strings.Fields(string(r.git("rev-list", "main")))
	if len(got) != len(revs) {
		t.Fatalf("%d commits, want %d", len(got), len(revs))
	}
	trees := map[string][]Change{}
	for _, cc := range readAllTrees(t, NewTreeReader(strings.NewReader(string(r.gitIn([]byte(strings.Join(revs, "\n")+"\n"),
		"diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root", "--cc"))))) {
		trees[cc.commit] = cc.changes
	}
	for i, c := range got {
		if c.SHA != revs[i] {
			t.Fatalf("commit %d is %s, want %s", i, c.SHA, revs[i])
		}
		if !reflect.DeepEqual(c.Changes, trees[c.SHA]) {
			t.Errorf("%s: changes %+v, diff-tree says %+v", c.SHA, c.Changes, trees[c.SHA])
		}
		msg := string(r.git("log", "-1", "--format=%B", c.SHA))
		if strings.TrimRight(c.Message, "\n") != strings.TrimRight(msg, "\n") {
			t.Errorf("%s: message %q, want %q", c.SHA, c.Message, msg)
		}
		parents := strings.Fields(string(r.git("log", "-1", "--format=%P", c.SHA)))
		if len(c.Parents) != len(parents) || c.Committed.IsZero() || c.Authored.IsZero() {
			t.Errorf("%s: parents %v (want %v), times %v %v", c.SHA, c.Parents, parents, c.Committed, c.Authored)
		}
	}
	if got[0].Message != "subject \x01 with the marker\n\nbody\n" {
		t.Errorf("newest message %q", got[0].Message)
	}
}

func TestLogReaderMalformed(t *testing.T) {
	sha := strings.Repeat("a", 40)
	for _, in := range []string{
		"x",
		"\x01" + sha + "\x001\x002\x00\x00msg",          // message not ended
		"\x01" + sha + "\x001\x00",                      // truncated
		"\x01nothex\x001\x002\x00\x00m\x00",             // bad name
		"\x01" + sha + "\x00one\x002\x00\x00m\x00",      // bad time
		"\x01" + sha + "\x001\x002\x00zz\x00m\x00",      // bad parent
		"\x01" + sha + "\x001\x002\x00\x00m\x00\nM\x00", // entry without its path
		"\x01" + sha + "\x001\x002\x00\x00m\x00\nQ\x00a\x00",
	} {
		lr := NewLogReader(strings.NewReader(in))
		var err error
		for range 10 {
			if _, err = lr.Next(); err != nil {
				break
			}
		}
		if err == nil || errors.Is(err, io.EOF) {
			t.Errorf("%q: %v, want a syntax error", in, err)
		}
	}
}

func FuzzLogReader(f *testing.F) {
	sha := strings.Repeat("a", 40)
	f.Add([]byte("\x01" + sha + "\x001\x002\x00\x00msg\n\x00\nM\x00a.txt\x00R087\x00b\x00c\x00\x01" + sha + "\x001\x002\x00" + sha + " " + sha + "\x00merge\n\x00\x00"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		lr := NewLogReader(strings.NewReader(string(data)))
		for range 10000 {
			c, err := lr.Next()
			if err != nil {
				if _, again := lr.Next(); !errors.Is(again, err) {
					t.Fatalf("error not sticky: %v then %v", err, again)
				}
				return
			}
			for _, ch := range c.Changes {
				if _, err := Normalize(ch.Path); err != nil {
					t.Fatalf("path %q not normalized: %v", ch.Path, err)
				}
			}
		}
	})
}
