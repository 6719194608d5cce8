package gitexec

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
)

// HeadFile reads the file at path (repo-relative) as committed on r's HEAD.
// found is false when HEAD has no such file or HEAD is unborn in an empty
// repository; an unreadable repository, a path that is not a regular
// file there (a directory, a symbolic link, a submodule), and a HEAD that
// names a missing branch while others exist (a *MissingHeadError) are
// errors.
func HeadFile(ctx context.Context, r *Repo, path string) (data []byte, found bool, err error) {
	out, err := RepoOutput(ctx, r, "ls-tree", "-z", "HEAD", "--", path)
	if err != nil {
		if ref, unborn := unbornHead(ctx, r); unborn {
			// Without branches the repository is empty: nothing is
			// committed yet. With some, HEAD names the wrong one (git
			// init --bare made it master, the team pushes main), and
			// reading nothing would judge every push by no policy.
			br, err := firstBranch(ctx, r)
			if err != nil {
				return nil, false, fmt.Errorf("read HEAD:%s: HEAD points to %s, which does not exist: %w", path, ref, err)
			}
			if br != "" {
				return nil, false, &MissingHeadError{Ref: ref, Branch: br}
			}
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("read HEAD:%s: %w", path, err)
	}
	return treeFile(ctx, r, "HEAD", path, out)
}

// CommitFile reads the file at path (repo-relative) as committed at rev
// (a commit). found is false when the commit has no such file; a rev that
// names no commit, an unreadable repository and a path that is not a
// regular file there are errors.
func CommitFile(ctx context.Context, r *Repo, rev, path string) (data []byte, found bool, err error) {
	out, err := RepoOutput(ctx, r, "ls-tree", "-z", rev+"^{commit}", "--", path)
	if err != nil {
		return nil, false, fmt.Errorf("read %s:%s: %w", rev, path, err)
	}
	return treeFile(ctx, r, rev, path, out)
}

// treeFile reads the blob of the ls-tree -z entry out names, if any.
func treeFile(ctx context.Context, r *Repo, rev, path string, out []byte) (data []byte, found bool, err error) {
	entry, _, _ := bytes.Cut(out, []byte{0})
	if len(entry) == 0 {
		return nil, false, nil
	}
	meta, _, _ := strings.Cut(string(entry), "\t")
	f := strings.Fields(meta) // <mode> <type> <object>
	if len(f) != 3 {
		return nil, false, fmt.Errorf("read %s:%s: unexpected git ls-tree output %q", rev, path, entry)
	}
	if f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
		return nil, false, fmt.Errorf("%s:%s is not a regular file (mode %s, %s)", rev, path, f[0], f[1])
	}
	data, err = RepoOutput(ctx, r, "cat-file", "blob", f[2])
	if err != nil {
		return nil, false, fmt.Errorf("read %s:%s: %w", rev, path, err)
	}
	return data, true, nil
}

// MissingHeadError is a HEAD that names a branch the repository does not
// have while it has others: its default branch cannot be read.
type MissingHeadError struct {
	Ref    string // what HEAD names, refs/heads/master
	Branch string // a branch that exists, main when there is one
}

func (e *MissingHeadError) Error() string {
	return fmt.Sprintf("HEAD points to %s, which does not exist while other branches do; point HEAD at the default branch, in this repository: git symbolic-ref HEAD refs/heads/%s", e.Ref, e.Branch)
}

// unbornHead reports whether HEAD names a branch that does not exist, and
// which.
func unbornHead(ctx context.Context, r *Repo) (string, bool) {
	out, err := RepoOutput(ctx, r, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return "", false
	}
	ref := strings.TrimSpace(string(out))
	_, err = RepoOutput(ctx, r, "show-ref", "--verify", "-q", ref)
	return ref, err != nil
}

// firstBranch names a branch of r for HEAD to point at: main or master
// when present, else the first in ref order; "" when r has none.
func firstBranch(ctx context.Context, r *Repo) (string, error) {
	out, err := RepoOutput(ctx, r, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
	if err != nil {
		return "", err
	}
	names := strings.Fields(string(out))
	for _, want := range []string{"main", "master"} {
		if slices.Contains(names, want) {
			return want, nil
		}
	}
	if len(names) > 0 {
		return names[0], nil
	}
	return "", nil
}

// maxPathspecBytes bounds the paths TrackedPaths passes to git as
// arguments, below the system's limits on one argument (128 KiB on Linux)
// and on all of them; beyond it git lists every file instead.
const maxPathspecBytes = 64 << 10

// TrackedPaths returns the set of those of paths (repo-relative) that name
// a file, symbolic link or submodule in HEAD's tree or in the index, asking
// one git process. Names are compared exactly: no pathspec magic or wildcards,
// and a directory is not a file. A bare repository has HEAD's tree only,
// an unborn HEAD the index only.
func TrackedPaths(ctx context.Context, r *Repo, paths []string) (map[string]bool, error) {
	found := map[string]bool{}
	if len(paths) == 0 {
		return found, nil
	}
	want := map[string]bool{}
	size := 0
	for _, p := range paths {
		want[p] = true
		size += len(p) + 1
	}
	if size > maxPathspecBytes {
		paths = nil // every file
	}
	out, err := lsTracked(ctx, r, paths)
	if err != nil {
		return nil, err
	}
	// A pathspec "d" lists the files under d/ too: keep exact names only.
	for _, name := range bytes.Split(out, []byte{0}) {
		if want[string(name)] {
			found[string(name)] = true
		}
	}
	return found, nil
}

// TrackedBelow returns, for each of names (repo-relative paths), a file of
// HEAD's tree or the index whose path is a directory of the repository
// followed by that name ("src/a.go" for "a.go"), when one is; one git
// process lists every tracked file.
func TrackedBelow(ctx context.Context, r *Repo, names []string) (map[string]string, error) {
	found := map[string]string{}
	if len(names) == 0 {
		return found, nil
	}
	out, err := lsTracked(ctx, r, nil)
	if err != nil {
		return nil, err
	}
	for _, f := range bytes.Split(out, []byte{0}) {
		for _, n := range names {
			if _, ok := found[n]; !ok && len(f) > len(n) && bytes.HasSuffix(f, []byte(n)) && f[len(f)-len(n)-1] == '/' {
				found[n] = string(f)
			}
		}
	}
	return found, nil
}

// lsTracked lists, NUL-separated, the files of HEAD's tree and the index
// that paths name (nil: every file).
func lsTracked(ctx context.Context, r *Repo, paths []string) ([]byte, error) {
	list := func(withHead bool) ([]byte, error) {
		// --with-tree adds the files of HEAD that the index lacks (a
		// staged deletion).
		args := []string{"--literal-pathspecs", "ls-files", "-z", "--cached"}
		if withHead {
			args = append(args, "--with-tree=HEAD")
		}
		args = append(append(args, "--"), paths...)
		return RepoOutput(ctx, r, args...)
	}
	out, err := list(true)
	if err != nil {
		if _, unborn := unbornHead(ctx, r); !unborn {
			return nil, fmt.Errorf("list tracked files: %w", err)
		}
		if out, err = list(false); err != nil {
			return nil, fmt.Errorf("list tracked files: %w", err)
		}
	}
	return out, nil
}

// WorktreeFiles lists the files of the index, repo-relative; with
// attr set, only those git's attributes give that attribute
// (`:(attr:NAME)`, as .gitattributes' `lockable`).
func WorktreeFiles(ctx context.Context, r *Repo, attr string) ([]string, error) {
	args := []string{"ls-files", "-z", "--cached"}
	if attr != "" {
		args = append(args, "--", ":(attr:"+attr+")")
	}
	out, err := RepoOutput(ctx, r, args...)
	if err != nil {
		return nil, fmt.Errorf("list the index's files: %w", err)
	}
	var files []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	return files, nil
}
