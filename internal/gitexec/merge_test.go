package gitexec

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMergeHeads(t *testing.T) {
	t.Parallel()
	a, b := strings.Repeat("a", 40), strings.Repeat("b", 64)
	for _, tc := range []struct {
		name, file string // file "" : no MERGE_HEAD
		want       []string
		err        string
	}{
		{name: "no merge"},
		{name: "one", file: a + "\n", want: []string{a}},
		{name: "octopus", file: a + "\n" + b + "\n", want: []string{a, b}},
		{name: "empty", file: "\n", err: "names no commit"},
		{name: "option", file: "--output=x\n", err: "not a full object name"},
		{name: "short", file: "abc123\n", err: "not a full object name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.file != "" {
				if err := os.WriteFile(filepath.Join(dir, "MERGE_HEAD"), []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := MergeHeads(dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("MergeHeads = %q, %v; want an error with %q", got, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("MergeHeads = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestStagedAgainstRefusesOptions(t *testing.T) {
	t.Parallel()
	if _, err := StagedAgainst(context.Background(), t.TempDir(), "--output=x"); err == nil {
		t.Fatal("StagedAgainst took an option for a commit")
	}
}
