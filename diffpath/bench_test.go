package diffpath

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// nameStatusInput builds n entries of git diff --name-status -z output: a
// mix of modifications, additions, deletions and renames.
func nameStatusInput(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		switch i % 10 {
		case 0:
			fmt.Fprintf(&b, "R087\x00src/pkg%03d/old_file%06d.go\x00src/pkg%03d/file%06d.go\x00", i%100, i, i%100, i)
		case 1:
			fmt.Fprintf(&b, "A\x00internal/module%03d/new%06d.go\x00", i%100, i)
		case 2:
			fmt.Fprintf(&b, "D\x00docs/section%03d/gone%06d.md\x00", i%100, i)
		default:
			fmt.Fprintf(&b, "M\x00src/pkg%03d/sub/file%06d.go\x00", i%100, i)
		}
	}
	return b.Bytes()
}

func BenchmarkParseNameStatusZ(b *testing.B) {
	data := nameStatusInput(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		cs, err := ParseNameStatusZ(data)
		if err != nil || len(cs) != 100_000 {
			b.Fatal(len(cs), err)
		}
	}
}

func BenchmarkParseRawZ(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&buf, ":100644 100644 %040x %040x M\x00src/pkg%03d/sub/file%06d.go\x00", i, i+1, i%100, i)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if cs, err := ParseRawZ(data); err != nil || len(cs) != 100_000 {
			b.Fatal(len(cs), err)
		}
	}
}

// BenchmarkTreeReader reads 1,000 commits of 10 entries each, as
// git diff-tree --stdin -r -z --name-status -M would print them.
func BenchmarkTreeReader(b *testing.B) {
	var buf bytes.Buffer
	for c := 0; c < 1000; c++ {
		fmt.Fprintf(&buf, "%040x\x00", c)
		buf.Write(nameStatusInput(10))
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tr := NewTreeReader(bytes.NewReader(data))
		n := 0
		for {
			_, cs, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n += len(cs)
		}
		if n != 10_000 {
			b.Fatal(n)
		}
	}
}

// BenchmarkParsePatch parses a 1,000-file patch with ten-line hunks.
func BenchmarkParsePatch(b *testing.B) {
	var buf bytes.Buffer
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&buf, "diff --git a/src/f%04d.go b/src/f%04d.go\nindex 1111111..2222222 100644\n--- a/src/f%04d.go\n+++ b/src/f%04d.go\n@@ -1,10 +1,10 @@\n", i, i, i, i)
		buf.WriteString(strings.Repeat(" context line\n", 4) + "-old\n+new\n" + strings.Repeat(" context line\n", 5))
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if cs, err := ParsePatch(bytes.NewReader(data)); err != nil || len(cs) != 1000 {
			b.Fatal(len(cs), err)
		}
	}
}
