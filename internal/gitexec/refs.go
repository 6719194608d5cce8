package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ZeroSHA is the all-zero object name: as the old value of UpdateRef it
// means "the ref must not exist yet".
const ZeroSHA = "0000000000000000000000000000000000000000"

// repoEnv is the environment of a git command run against r explicitly
// (with --git-dir): the caller's environment without the variables that
// would point git at another repository, object store or index, or give
// pathspecs another meaning. Inside a hook git exports GIT_DIR (often
// relative) and GIT_INDEX_FILE; the object and ref writes of the workflow
// branch must land where r says, which is where go-git writes its objects. Messages are in the C locale so that a
// caller can tell a lost compare-and-swap from other failures.
func repoEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
			"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
			"GIT_NAMESPACE", "GIT_QUARANTINE_PATH", "LC_ALL", "LANGUAGE",
			"GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "LANGUAGE=")
}

// RepoOutput runs `git --git-dir=<r.GitDir> ARGS` in r's working tree (or
// its git dir when bare) whatever GIT_DIR, GIT_INDEX_FILE or
// GIT_OBJECT_DIRECTORY the environment holds, and returns stdout. Relative
// remote URLs resolve from the working tree root, as they do for the user.
func RepoOutput(ctx context.Context, r *Repo, args ...string) ([]byte, error) {
	out, _, err := repoRun(ctx, r, args...)
	return out, err
}

func repoRun(ctx context.Context, r *Repo, args ...string) (stdout []byte, stderr string, err error) {
	if r == nil || r.GitDir == "" {
		return nil, "", errors.New("gitexec: no repository")
	}
	full := append([]string{"--git-dir=" + r.GitDir}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	// Stop git with SIGTERM, not SIGKILL: git removes its .lock files on
	// SIGTERM, and a lock left behind blocks the ref for every writer.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Dir = r.Toplevel
	if cmd.Dir == "" {
		cmd.Dir = r.GitDir
	}
	cmd.Env = repoEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), errb.String(), &Error{Args: args, Stderr: errb.String(), Err: err}
	}
	return out.Bytes(), errb.String(), nil
}

// ownRefs is the command line of a git command that writes only
// lockgate's own refs (the lock table, the workflow branch, their fetched
// copies), run with no hooks: the reference-transaction hook lockgate
// installs has nothing to judge there, and git would start it twice for
// each ref it writes (prepared, committed), which costs every lock
// command several process starts. The user's hooks are not asked about
// these refs either, as `push --no-verify` does not ask pre-push.
func ownRefs(args ...string) []string {
	return append([]string{"-c", "core.hooksPath=/dev/null"}, args...)
}

// UpdateRef moves ref from oldSHA to newSHA with `git update-ref`, which
// takes git's own `<ref>.lock` and checks the old value under it: a
// compare-and-swap that holds against every git command and every other
// caller of UpdateRef. oldSHA ZeroSHA (or "") requires that ref does not
// exist. msg goes to the reflog. On failure the *Error's Stderr says why
// ("is at X but expected Y", "reference already exists", "File exists"
// for a lock held by another process). Once started, the swap is not
// cancelled by ctx: it takes milliseconds, and stopping it halfway could
// leave the caller unsure whether the ref moved.
func UpdateRef(ctx context.Context, r *Repo, ref, newSHA, oldSHA, msg string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if oldSHA == "" {
		oldSHA = ZeroSHA
	}
	args := ownRefs("update-ref")
	if msg != "" {
		args = append(args, "-m", msg)
	}
	args = append(args, "--", ref, newSHA, oldSHA)
	_, err := RepoOutput(ctx, r, args...)
	return err
}

// PushStatus is one line of `git push --porcelain`:
// `<flag>\t<from>:<to>\t<summary> (<reason>)`.
type PushStatus struct {
	// Flag is ' ' (fast-forward), '*' (new ref), '=' (up to date),
	// '!' (rejected), '+' (forced), '-' (deleted).
	Flag    byte
	From    string
	To      string
	Summary string // e.g. "[rejected] (fetch first)", "[new branch]", "abc..def"
}

// Rejected reports a ref the remote refused because it is not a fast
// forward of what the remote has ("[rejected] (fetch first)",
// "(non-fast-forward)"): fetching and merging can fix that. A ref refused
// by the remote itself ("[remote rejected]", a hook) is not Rejected.
func (s PushStatus) Rejected() bool {
	return s.Flag == '!' && strings.HasPrefix(s.Summary, "[rejected]")
}

// Push runs `git push --porcelain --no-verify REMOTE REFSPEC...` and returns
// the status of every ref, also when git fails (a rejected ref makes git
// exit non-zero). It never forces: refspecs starting with '+' are refused.
// --no-verify because these are lockgate's own refs, not the user's work:
// the user's pre-push hook is not asked about them.
func Push(ctx context.Context, r *Repo, remote string, refspecs ...string) ([]PushStatus, error) {
	for _, rs := range refspecs {
		if strings.HasPrefix(rs, "+") {
			return nil, fmt.Errorf("gitexec: refusing forced refspec %q", rs)
		}
	}
	args := append(ownRefs("push", "--porcelain", "--no-verify", "--", remote), refspecs...)
	out, _, err := repoRun(ctx, r, args...)
	return parsePorcelain(out), err
}

func parsePorcelain(out []byte) []PushStatus {
	var sts []PushStatus
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) < 2 || line[1] != '\t' {
			continue // "To <url>", "Done"
		}
		fields := strings.SplitN(line[2:], "\t", 2)
		if len(fields) != 2 {
			continue
		}
		from, to, _ := strings.Cut(fields[0], ":")
		sts = append(sts, PushStatus{Flag: line[0], From: from, To: to, Summary: fields[1]})
	}
	return sts
}

// Fetch runs `git fetch --no-tags --no-write-fetch-head REMOTE REFSPEC...`:
// only the refs the refspecs name are written, FETCH_HEAD is left alone.
func Fetch(ctx context.Context, r *Repo, remote string, refspecs ...string) error {
	args := append(ownRefs("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", remote), refspecs...)
	_, err := RepoOutput(ctx, r, args...)
	return err
}

// IsAncestor reports whether commit a is an ancestor of (or equal to)
// commit b: `git merge-base --is-ancestor`.
func IsAncestor(ctx context.Context, r *Repo, a, b string) (bool, error) {
	_, err := RepoOutput(ctx, r, "merge-base", "--is-ancestor", a, b)
	if err == nil {
		return true, nil
	}
	var ee *Error
	var xe *exec.ExitError
	if errors.As(err, &ee) && errors.As(ee.Err, &xe) && xe.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}

// RemoteURL returns the URL git uses to reach the named remote
// (`git remote get-url`, which applies insteadOf), and false when no such
// remote is configured.
func RemoteURL(ctx context.Context, r *Repo, remote string) (string, bool, error) {
	out, stderr, err := repoRun(ctx, r, "remote", "get-url", "--", remote)
	if err != nil {
		var ee *Error
		var xe *exec.ExitError
		if errors.As(err, &ee) && errors.As(ee.Err, &xe) && xe.ExitCode() == 2 ||
			strings.Contains(stderr, "No such remote") {
			return "", false, nil
		}
		return "", false, err
	}
	return strings.TrimSpace(string(out)), true, nil
}

// Remotes lists the names of the remotes the repository has (`git remote`).
func Remotes(ctx context.Context, r *Repo) ([]string, error) {
	out, err := RepoOutput(ctx, r, "remote")
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// Cmd is a git command built by ReadCommand, for callers that feed and
// read it themselves (git cat-file --batch-command).
type Cmd = exec.Cmd

// ReadCommand is `git --git-dir=<gitDir> ARGS` run in dir, for commands
// that only read the repository. Its environment is the caller's without
// what would point git at another repository or namespace; the object
// directories stay, since in a pre-receive hook they are how git sees the
// objects being pushed.
func ReadCommand(ctx context.Context, gitDir, dir string, args ...string) *Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + gitDir}, args...)...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_NAMESPACE":
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = env
	return cmd
}
