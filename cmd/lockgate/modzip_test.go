package main

import (
	"os/exec"
	"strings"
	"testing"

	modzip "golang.org/x/mod/module"
)

// TestModulePathsInstallable: every file the repository tracks has a name
// a Go module zip may hold, so `go install
// github.com/lockgate/lockgate/cmd/lockgate@VERSION` (the README's
// install line, the GitHub Action, the GitLab template) can download the
// module. A file named like a Windows device (nul, con, aux, …) or with a
// character the zip format refuses would make every such install fail.
func TestModulePathsInstallable(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "-C", "../..", "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	files := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git ls-files listed %d files; it did not list the repository", len(files))
	}
	for _, f := range files {
		if err := modzip.CheckFilePath(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}
