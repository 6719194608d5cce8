package diffpath

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// gitRepo is a hermetic repository in t.TempDir(), with fixed dates so that
// generated fixtures only change when git's output does. The environment is built
// from scratch and passed through cmd.Env, so tests can run in parallel and
// nothing leaks in from the user's configuration or from a hook's
// GIT_DIR/GIT_INDEX_FILE.
type gitRepo struct {
	t   testing.TB
	dir string
	env []string
}

func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: `make test` installs it (apt-get install git)")
	}
}

func hermeticEnv(home string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Ada Author", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada Author", "GIT_COMMITTER_EMAIL=ada@example.com",
		"GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z",
		"TZ=UTC", "LC_ALL=C",
	}
}

// newRepo creates a repository; extra arguments go to git init.
func newRepo(t testing.TB, initArgs ...string) *gitRepo {
	t.Helper()
	requireGit(t)
	tmp := t.TempDir()
	r := &gitRepo{t: t, dir: filepath.Join(tmp, "repo"), env: hermeticEnv(tmp)}
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.git(append([]string{"init", "-q", "-b", "main"}, initArgs...)...)
	return r
}

// git runs git in the repository and returns its stdout; a failure is fatal.
func (r *gitRepo) git(args ...string) []byte {
	r.t.Helper()
	out, err := r.gitErr(nil, args...)
	if err != nil {
		r.t.Fatalf("git %q: %v", args, err)
	}
	return out
}

// gitIn runs git with stdin.
func (r *gitRepo) gitIn(stdin []byte, args ...string) []byte {
	r.t.Helper()
	out, err := r.gitErr(stdin, args...)
	if err != nil {
		r.t.Fatalf("git %q: %v", args, err)
	}
	return out
}

// gitErr runs git and returns its stdout and any error (with stderr), for
// commands such as a conflicting merge that are expected to fail.
func (r *gitRepo) gitErr(stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

// write creates or replaces a file, creating its directories.
func (r *gitRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// mv is git mv, creating the destination's directory first.
func (r *gitRepo) mv(from, to string) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(r.dir, to)), 0o755); err != nil {
		r.t.Fatal(err)
	}
	r.git("mv", from, to)
}

func (r *gitRepo) remove(name string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.dir, name)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *gitRepo) chmod(name string, mode os.FileMode) {
	r.t.Helper()
	if err := os.Chmod(filepath.Join(r.dir, name), mode); err != nil {
		r.t.Fatal(err)
	}
}

func (r *gitRepo) symlink(target, name string) {
	r.t.Helper()
	if err := os.Symlink(target, filepath.Join(r.dir, name)); err != nil {
		r.t.Fatal(err)
	}
}

// commitAll stages everything and commits.
func (r *gitRepo) commitAll(msg string) {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
}

// lines returns n numbered lines, content that git's rename detection can
// score.
func lines(prefix string, n int) string {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(prefix)
		b.WriteString(" line ")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" of a file long enough for rename detection\n")
	}
	return b.String()
}
