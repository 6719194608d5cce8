package gittest

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
)

// SyntheticPath is the path of file i in a synthetic repository: 100 files
// per directory, two levels deep, like a real source tree.
func SyntheticPath(i int) string {
	return fmt.Sprintf("src/mod%03d/pkg%02d/file%06d.go", i/10000, (i/100)%100, i)
}

// Synthetic fills the repository with files files in one commit on main,
// written with git fast-import (fast even for 100,000 files), packed and
// checked out.
func (r *Repo) Synthetic(files int) {
	r.t.Helper()
	var b strings.Builder
	w := bufio.NewWriter(&b)
	fmt.Fprintf(w, "commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 4\ninit\n")
	for i := range files {
		content := fmt.Sprintf("package p\n\n// file %d\n", i)
		fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", SyntheticPath(i), len(content), content)
	}
	w.Flush()
	r.FastImport(b.String())
	r.Git("repack", "-adq")
	r.Git("reset", "-q", "--hard")
}

// SyntheticCommits adds n commits on branch, starting at main, each
// changing changed files (spread over the tree), and returns the branch tip.
func (r *Repo) SyntheticCommits(branch string, n, changed, files int) string {
	r.t.Helper()
	var b strings.Builder
	w := bufio.NewWriter(&b)
	for c := range n {
		fmt.Fprintf(w, "commit refs/heads/%s\ncommitter Bench <bench@example.com> %d +0000\ndata 7\ncommit\n", branch, 1700000001+c)
		if c == 0 {
			fmt.Fprintf(w, "from refs/heads/main^0\n")
		}
		for k := range changed {
			i := (c*changed*7919 + k*104729) % files
			content := fmt.Sprintf("package p\n\n// file %d, commit %d\n", i, c)
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", SyntheticPath(i), len(content), content)
		}
	}
	w.Flush()
	r.FastImport(b.String())
	return r.Git("rev-parse", branch)
}

// Stage resets the work tree and index to HEAD, then changes the first n
// synthetic files and stages them.
func (r *Repo) Stage(n int) {
	r.t.Helper()
	r.Git("reset", "-q", "--hard")
	if n == 0 {
		return
	}
	args := []string{"add", "--"}
	for i := range n {
		p := SyntheticPath(i)
		r.Write(p, fmt.Sprintf("package p\n\n// staged change of file %d\n", i))
		args = append(args, p)
	}
	r.Git(args...)
}

// FastImport feeds stream to `git fast-import` in the repository.
func (r *Repo) FastImport(stream string) {
	r.t.Helper()
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Env = r.Dir, r.Env
	cmd.Stdin = strings.NewReader(stream)
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("fast-import: %v: %s", err, out)
	}
}
