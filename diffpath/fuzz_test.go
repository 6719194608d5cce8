package diffpath

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// checkChanges enforces what every parser promises about its output.
func checkChanges(t *testing.T, cs []Change) {
	t.Helper()
	for _, c := range cs {
		if !isStatusLetter(c.Status) {
			t.Fatalf("invalid status %q in %#v", c.Status, c)
		}
		if c.Score < 0 || c.Score > 100 {
			t.Fatalf("invalid score in %#v", c)
		}
		checkPath(t, c.Path)
		if c.OldPath != "" {
			checkPath(t, c.OldPath)
		}
	}
}

func checkPath(t *testing.T, p string) {
	t.Helper()
	if n, err := Normalize(p); err != nil || n != p {
		t.Fatalf("returned path %q does not pass Normalize: %q, %v", p, n, err)
	}
	if strings.HasPrefix(p, "/") {
		t.Fatalf("returned path %q is absolute", p)
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			t.Fatalf("returned path %q has a .. segment", p)
		}
	}
}

// checkErr allows only the documented error types.
func checkErr(t *testing.T, err error) {
	t.Helper()
	var pe *PathError
	var se *SyntaxError
	if err != nil && !errors.As(err, &pe) && !errors.As(err, &se) {
		t.Fatalf("error of unexpected type %T: %v", err, err)
	}
}

func FuzzParsePatch(f *testing.F) {
	f.Add([]byte("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParsePatch(bytes.NewReader(data))
		checkErr(t, err)
		both, alt, err2 := ParsePatchReadings(bytes.NewReader(data))
		if (err == nil) != (err2 == nil) || len(both) != len(cs) {
			t.Fatalf("ParsePatchReadings disagrees with ParsePatch: %v, %v; %v, %v", both, err2, cs, err)
		}
		if alt != nil {
			checkChanges(t, alt.Changes)
		}
		if err == nil {
			checkChanges(t, cs)
			seen := map[Change]bool{}
			for _, c := range cs {
				if seen[c] {
					t.Fatalf("duplicate %#v", c)
				}
				seen[c] = true
			}
		}
	})
}

// FuzzParseNameStatusZ covers ParseRawZ too: the seeds hold both forms.
func FuzzParseNameStatusZ(f *testing.F) {
	f.Add([]byte("M\x00a\x00R087\x00old\x00new\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseNameStatusZ(data)
		checkErr(t, err)
		if err == nil {
			checkChanges(t, cs)
		}
		cs, err = ParseRawZ(data)
		checkErr(t, err)
		if err == nil {
			checkChanges(t, cs)
		}
	})
}

func FuzzTreeReader(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 40) + "\x00M\x00x\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, allPaths := range []bool{false, true} {
			tr := NewTreeReader(bytes.NewReader(data))
			tr.CombinedAllPaths = allPaths
			for i := 0; ; i++ {
				if i > len(data)+1 {
					t.Fatal("Next does not stop")
				}
				commit, cs, err := tr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					checkErr(t, err)
					if _, _, again := tr.Next(); !errors.Is(again, err) {
						t.Fatalf("error not sticky: %v then %v", err, again)
					}
					break
				}
				if commit != "" {
					if _, ok := headerToken([]byte(commit), !strings.Contains(commit, " ")); !ok {
						t.Fatalf("returned header %q is not an object name or tree pair", commit)
					}
				}
				checkChanges(t, cs)
			}
		}
	})
}

// repeatReader yields n copies of b.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

// TestParsePatchLongLine: a line longer than MaxLineBytes is an error, not
// a buffer without end.
func TestParsePatchLongLine(t *testing.T) {
	head := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n+"
	_, err := ParsePatch(io.MultiReader(strings.NewReader(head), &repeatReader{b: 'a', n: MaxLineBytes + 1}))
	if err == nil || !strings.Contains(err.Error(), "longer than 64 MiB") {
		t.Fatalf("got %v, want a line-length error", err)
	}
}
