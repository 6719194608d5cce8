package diffpath

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseApplyPatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     string // fmt of the changes
		bad      string
	}{
		{name: "every kind of section", in: "*** Begin Patch\n*** Add File: docs/new.md\n+hello\n*** Update File: src/a.py\n@@ def f():\n-    x\n+    y\n*** End of File\n*** Update File: old.txt\n*** Move to: moved/new.txt\n@@\n a\n*** Delete File: gone.txt\n*** End Patch\n",
			want: "[{65 0 docs/new.md } {77 0 src/a.py } {82 0 moved/new.txt old.txt} {68 0 gone.txt }]"},
		{name: "a heredoc around it, headers indented", in: "<<'EOF'\n  *** Begin Patch\n  *** Add File: a b.txt  \n+x\n*** End Patch\nEOF\n", want: "[{65 0 a b.txt }]"},
		{name: "absolute paths as written", in: "*** Begin Patch\n*** Delete File: /r/x\n*** End Patch", want: "[{68 0 /r/x }]"},
		{name: "CRLF", in: "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n", want: "[{65 0 a }]"},
		{name: "empty", in: "", bad: "Begin Patch"},
		{name: "a unified diff", in: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", bad: "Begin Patch"},
		{name: "truncated", in: "*** Begin Patch\n*** Add File: a\n+x\n", bad: "truncated"},
		{name: "no file section", in: "*** Begin Patch\n*** End Patch\n", bad: "no file section"},
		{name: "an unknown header", in: "*** Begin Patch\n*** Rename File: a\n*** End Patch\n", bad: "unknown header"},
		{name: "a move without an update", in: "*** Begin Patch\n*** Add File: a\n+x\n*** Move to: b\n*** End Patch\n", bad: "must follow"},
		{name: "an empty path", in: "*** Begin Patch\n*** Add File:   \n*** End Patch\n", bad: "empty"},
		{name: "text after the end", in: "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Delete File: b\n", bad: "after *** End Patch"},
		{name: "a line before any section", in: "*** Begin Patch\n+x\n*** Delete File: a\n*** End Patch\n", bad: "before the first file section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseApplyPatch(tc.in)
			if tc.bad != "" {
				var se *SyntaxError
				var pe *PathError
				if err == nil || !strings.Contains(err.Error(), tc.bad) || !errors.As(err, &se) && !errors.As(err, &pe) {
					t.Fatalf("got %v, %v; want an error containing %q", got, err, tc.bad)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != tc.want {
				t.Fatalf("got %v, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func FuzzParseApplyPatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch\n")
	f.Add("<<EOF\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF")
	f.Fuzz(func(t *testing.T, in string) {
		changes, err := ParseApplyPatch(in)
		if err != nil {
			return
		}
		if len(changes) == 0 {
			t.Fatal("a patch of no file")
		}
		for _, c := range changes {
			for _, p := range c.Touched() {
				if p == "" || strings.IndexByte(p, 0) >= 0 || strings.TrimSpace(p) != p {
					t.Fatalf("path %q", p)
				}
			}
		}
	})
}
