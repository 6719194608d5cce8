package gitexec

import (
	"bytes"
	"context"
	"fmt"
	"strings"
)

// HeadFile reads the file at path (repo-relative) as committed on r's HEAD.
// found is false when HEAD has no such file or HEAD is unborn (an empty
// repository); an unreadable repository, or a path that is not a regular
// file there (a directory, a symbolic link, a submodule), is an error.
func HeadFile(ctx context.Context, r *Repo, path string) (data []byte, found bool, err error) {
	out, err := RepoOutput(ctx, r, "ls-tree", "-z", "HEAD", "--", path)
	if err != nil {
		if unbornHead(ctx, r) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("read HEAD:%s: %w", path, err)
	}
	entry, _, _ := bytes.Cut(out, []byte{0})
	if len(entry) == 0 {
		return nil, false, nil
	}
	meta, _, _ := strings.Cut(string(entry), "\t")
	f := strings.Fields(meta) // <mode> <type> <object>
	if len(f) != 3 {
		return nil, false, fmt.Errorf("read HEAD:%s: unexpected git ls-tree output %q", path, entry)
	}
	if f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
		return nil, false, fmt.Errorf("HEAD:%s is not a regular file (mode %s, %s)", path, f[0], f[1])
	}
	data, err = RepoOutput(ctx, r, "cat-file", "blob", f[2])
	if err != nil {
		return nil, false, fmt.Errorf("read HEAD:%s: %w", path, err)
	}
	return data, true, nil
}

// unbornHead reports whether HEAD names a branch that does not exist yet.
func unbornHead(ctx context.Context, r *Repo) bool {
	ref, err := RepoOutput(ctx, r, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return false
	}
	_, err = RepoOutput(ctx, r, "show-ref", "--verify", "-q", strings.TrimSpace(string(ref)))
	return err != nil
}
