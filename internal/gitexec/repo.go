package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Repo names the directories of one repository, all absolute.
type Repo struct {
	// Toplevel is the working tree root; "" for a bare repository.
	Toplevel string
	// GitDir is this worktree's git directory.
	GitDir string
	// CommonDir is shared by every worktree of the clone.
	CommonDir string
}

// ErrNotRepo reports a directory outside any git repository.
var ErrNotRepo = errors.New("not a git repository (or any of the parent directories)")

// Discover finds the repository containing dir. The ordinary layouts (a
// `.git` directory, or a `.git` file of a worktree or submodule) are read
// directly; anything unusual — GIT_DIR in the environment, a bare
// repository — is asked of `git rev-parse`.
func Discover(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", dir, err)
	}
	if os.Getenv("GIT_DIR") == "" && os.Getenv("GIT_COMMON_DIR") == "" {
		if r, ok := discoverFS(abs); ok {
			return r, nil
		}
	}
	return discoverGit(ctx, abs)
}

func discoverFS(dir string) (*Repo, bool) {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		if err == nil {
			gitDir := dotgit
			if !fi.IsDir() {
				gitDir, err = readGitFile(dotgit)
				if err != nil {
					return nil, false
				}
			}
			if _, err := os.Stat(filepath.Join(gitDir, "HEAD")); err != nil {
				return nil, false
			}
			common, err := commonDir(gitDir)
			if err != nil {
				return nil, false
			}
			return &Repo{Toplevel: d, GitDir: gitDir, CommonDir: common}, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil, false
		}
		d = parent
	}
}

// readGitFile resolves a `.git` file ("gitdir: <path>").
func readGitFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(b))
	target, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%s: not a gitdir file", name)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(name), target)
	}
	return filepath.Clean(target), nil
}

// commonDir follows a worktree's `commondir` file, if any.
func commonDir(gitDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if errors.Is(err, os.ErrNotExist) {
		return gitDir, nil
	}
	if err != nil {
		return "", err
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c), nil
}

func discoverGit(ctx context.Context, dir string) (*Repo, error) {
	out, err := Output(ctx, dir, nil, "rev-parse", "--path-format=absolute",
		"--git-dir", "--git-common-dir", "--is-bare-repository", "--is-inside-work-tree")
	if err != nil {
		var ee *Error
		if errors.As(err, &ee) && strings.Contains(ee.Stderr, "not a git repository") {
			return nil, ErrNotRepo
		}
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 4 {
		return nil, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	r := &Repo{GitDir: lines[0], CommonDir: lines[1]}
	if lines[2] == "false" && lines[3] == "true" {
		// --show-toplevel fails outside a work tree, so it is asked apart.
		top, err := Output(ctx, dir, nil, "rev-parse", "--show-toplevel")
		if err != nil {
			return nil, err
		}
		r.Toplevel = strings.TrimSpace(string(top))
	}
	return r, nil
}

// Error is a failed git command, with what it printed on stderr.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode is git's exit status, or -1 when git did not run to its end
// (not found, killed, cancelled).
func (e *Error) ExitCode() int {
	var xe *exec.ExitError
	if errors.As(e.Err, &xe) {
		return xe.ExitCode()
	}
	return -1
}

// Output runs git in dir with extra environment entries and returns stdout.
func Output(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, &Error{Args: args, Stderr: stderr.String(), Err: err}
	}
	return stdout.Bytes(), nil
}

// Version is git's version as `git version` prints it: major and minor.
func Version(ctx context.Context) (major, minor int, err error) {
	out, err := Output(ctx, "", nil, "version")
	if err != nil {
		return 0, 0, err
	}
	return parseVersion(string(out))
}

// parseVersion reads "git version 2.39.5" (and vendor suffixes such as
// "2.39.5 (Apple Git-143)" or "2.45.0.windows.1").
func parseVersion(s string) (major, minor int, err error) {
	f := strings.Fields(s)
	if len(f) < 3 || f[0] != "git" || f[1] != "version" {
		return 0, 0, fmt.Errorf("git version: cannot read %q", strings.TrimSpace(s))
	}
	parts := strings.SplitN(f[2], ".", 3)
	if len(parts) < 2 {
		return 0, 0, fmt.Errorf("git version: cannot read %q", f[2])
	}
	if major, err = strconv.Atoi(parts[0]); err == nil {
		minor, err = strconv.Atoi(parts[1])
	}
	if err != nil {
		return 0, 0, fmt.Errorf("git version: cannot read %q", f[2])
	}
	return major, minor, nil
}
