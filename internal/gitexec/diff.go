package gitexec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StagedNameStatus returns `git diff --cached --name-status -z -M` of the
// worktree at dir. It inherits GIT_INDEX_FILE, so inside a hook it reads the
// index git is about to commit (a temporary one for `commit -a`).
func StagedNameStatus(ctx context.Context, dir string) ([]byte, error) {
	return stagedAgainst(ctx, dir)
}

// StagedAgainst is StagedNameStatus with the index compared to commit
// instead of HEAD: a merge's other parents. commit must be a full object
// name, so that it is never read as an option.
func StagedAgainst(ctx context.Context, dir, commit string) ([]byte, error) {
	if !IsObjectName(commit) {
		return nil, fmt.Errorf("compare the index with %q: not a full object name", commit)
	}
	return stagedAgainst(ctx, dir, commit, "--")
}

func stagedAgainst(ctx context.Context, dir string, rev ...string) ([]byte, error) {
	args := append([]string{"-c", "core.quotePath=false", "diff", "--cached",
		"--name-status", "-z", "-M", "--no-ext-diff", "--no-color", "--ignore-submodules=none"}, rev...)
	return Output(ctx, dir, nil, args...)
}

// StartStaged starts StagedNameStatus in the background and returns a
// function that waits for its result: a hook lets git work while it loads
// its config, policy and lock store.
func StartStaged(ctx context.Context, dir string) func() ([]byte, error) {
	type result struct {
		out []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		out, err := StagedNameStatus(ctx, dir)
		ch <- result{out, err}
	}()
	return func() ([]byte, error) {
		r := <-ch
		ch <- r // later calls see the same result
		return r.out, r.err
	}
}

// TreeDiffs streams `git rev-list ARGS | git diff-tree --stdin` output:
// for every commit rev-list names, its header and its changed paths
// (-r -z --name-status -M --root, --cc for merges). fn reads the stream;
// when it returns, both processes are stopped.
func TreeDiffs(ctx context.Context, dir string, revListArgs []string, fn func(io.Reader) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	revArgs := append([]string{"rev-list", "--reverse"}, revListArgs...)
	revList := exec.CommandContext(ctx, "git", revArgs...)
	revList.Dir = dir
	treeArgs := []string{"-c", "core.quotePath=false", "diff-tree", "--stdin", "-r", "-z",
		"--name-status", "-M", "--root", "--cc", "--no-ext-diff", "--no-color"}
	diffTree := exec.CommandContext(ctx, "git", treeArgs...)
	diffTree.Dir = dir
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("pipe: %w", err)
	}
	var revErr, treeErr bytes.Buffer
	revList.Stdout, revList.Stderr = pw, &revErr
	diffTree.Stdin, diffTree.Stderr = pr, &treeErr
	out, err := diffTree.StdoutPipe()
	if err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("diff-tree: %w", err)
	}
	if err := revList.Start(); err != nil {
		pr.Close()
		pw.Close()
		return &Error{Args: revArgs, Err: err}
	}
	if err := diffTree.Start(); err != nil {
		pr.Close()
		pw.Close()
		_ = revList.Wait()
		return &Error{Args: treeArgs, Err: err}
	}
	pr.Close()
	pw.Close()
	fnErr := fn(bufio.NewReaderSize(out, 64<<10))
	if fnErr != nil {
		cancel() // stop both: fn has seen enough
	}
	_, _ = io.Copy(io.Discard, out)
	treeWait := diffTree.Wait()
	revWait := revList.Wait()
	if fnErr != nil {
		return fnErr
	}
	if revWait != nil {
		return &Error{Args: revArgs, Stderr: revErr.String(), Err: revWait}
	}
	if treeWait != nil {
		return &Error{Args: treeArgs, Stderr: treeErr.String(), Err: treeWait}
	}
	return nil
}

// LogChanges streams, from one `git log`, every commit `git rev-list
// revListArgs` names (newest first: git need not walk the whole range
// before it prints) with its times, parents, message and
// changed paths, with git log's --format=format (the caller names it: the
// parser that reads the stream owns it), -z --name-status -M --cc, root
// commits shown whole. The options that would change what git prints —
// diff.relative, log.showRoot, colours, external diffs — are set
// explicitly, whatever the user's config says. fn reads the stream; when it
// returns, git is stopped.
func LogChanges(ctx context.Context, dir, format string, revListArgs []string, fn func(io.Reader) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := append([]string{"-c", "log.showRoot=true", "-c", "log.showSignature=false", "-c", "core.quotePath=false",
		"log", "-z", "--no-color", "--encoding=UTF-8", "--no-relative", "--no-ext-diff", "--no-textconv",
		"--format=" + format, "--name-status", "-M", "--cc"}, revListArgs...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git log: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return &Error{Args: args, Err: err}
	}
	fnErr := fn(out)
	if fnErr != nil {
		cancel()
	}
	_, _ = io.Copy(io.Discard, out)
	waitErr := cmd.Wait()
	if fnErr != nil {
		return fnErr
	}
	if waitErr != nil {
		return &Error{Args: args, Stderr: stderr.String(), Err: waitErr}
	}
	return nil
}

// HeadBranch returns the branch HEAD of the git directory gitDir points at ("main"), or "" when HEAD is
// detached. It reads HEAD directly: no git process on the hook path.
func HeadBranch(gitDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w", err)
	}
	ref, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "ref: ")
	if !ok {
		return "", nil
	}
	return strings.TrimPrefix(ref, "refs/heads/"), nil
}

// MergeHeads returns the commits MERGE_HEAD in gitDir names: the other
// parents of the merge `git commit` concludes there, none when no merge is
// under way. A MERGE_HEAD that does not list full object names is an error,
// not "no merge".
func MergeHeads(gitDir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "MERGE_HEAD"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read MERGE_HEAD: %w", err)
	}
	var heads []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !IsObjectName(line) {
			return nil, fmt.Errorf("read MERGE_HEAD: %q is not a full object name", line)
		}
		heads = append(heads, line)
	}
	if len(heads) == 0 {
		return nil, errors.New("read MERGE_HEAD: it names no commit")
	}
	return heads, nil
}

// IgnoreCase reports core.ignorecase. The config files git reads (the
// repository's, the global and the system ones) are scanned first so that
// the common case (neither the word nor an include is there) costs no git
// process.
func IgnoreCase(ctx context.Context, r *Repo) (bool, error) {
	mentioned, err := configMentions(r, "ignorecase")
	if err != nil || !mentioned {
		return false, err
	}
	out, err := Output(ctx, configDir(r), nil, "config", "--bool", "core.ignorecase")
	var ee *Error
	if errors.As(err, &ee) {
		var xe *exec.ExitError
		if errors.As(ee.Err, &xe) && xe.ExitCode() == 1 {
			return false, nil // not set
		}
	}
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

// CommentString is what begins a comment line of a commit message:
// core.commentString or core.commentChar, "#" when neither is set. As for
// IgnoreCase, the config files are scanned first, so that the common case
// costs no git process.
func CommentString(ctx context.Context, r *Repo) (string, error) {
	mentioned, err := configMentions(r, "comment")
	if err != nil || !mentioned {
		return "#", err
	}
	out, err := Output(ctx, configDir(r), nil, "config", "--get-regexp", `^core\.comment(char|string)$`)
	var ee *Error
	if errors.As(err, &ee) {
		var xe *exec.ExitError
		if errors.As(ee.Err, &xe) && xe.ExitCode() == 1 {
			return "#", nil // not set
		}
	}
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	_, v, _ := strings.Cut(lines[len(lines)-1], " ") // the last one set wins
	return v, nil
}

// RemoteMirror reports whether remote.<remote>.mirror is true, as `git
// config --bool` reads it; as for CommentString, config files that never
// say "mirror" answer false with no git process. A value git cannot read
// is false, as git's own refusal is.
func RemoteMirror(ctx context.Context, r *Repo, remote string) (bool, error) {
	mentioned, err := configMentions(r, "mirror")
	if err != nil || !mentioned {
		return false, err
	}
	out, err := Output(ctx, configDir(r), nil, "config", "--bool", "remote."+remote+".mirror")
	return err == nil && strings.TrimSpace(string(out)) == "true", nil
}

// configMentions reports whether word (lower case) or an include may be in
// a config file git reads for r, or config comes from the environment.
func configMentions(r *Repo, word string) (bool, error) {
	if os.Getenv("GIT_CONFIG_PARAMETERS") != "" || os.Getenv("GIT_CONFIG_COUNT") != "" {
		return true, nil
	}
	for _, f := range configFiles(r) {
		b, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return false, fmt.Errorf("read %s: %w", f, err)
		}
		b = bytes.ToLower(b)
		if bytes.Contains(b, []byte(word)) || bytes.Contains(b, []byte("include")) {
			return true, nil
		}
	}
	return false, nil
}

func configDir(r *Repo) string {
	if r.Toplevel == "" {
		return r.GitDir
	}
	return r.Toplevel
}

// configFiles lists the config files git reads for the repository, as far
// as the environment tells: system, global, local and worktree.
func configFiles(r *Repo) []string {
	files := []string{filepath.Join(r.CommonDir, "config"), filepath.Join(r.GitDir, "config.worktree")}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, firstSet(os.Getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig"))
	}
	if g, ok := os.LookupEnv("GIT_CONFIG_GLOBAL"); ok {
		return append(files, g)
	}
	home := os.Getenv("HOME")
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		files = append(files, filepath.Join(x, "git", "config"))
	} else if home != "" {
		files = append(files, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	return files
}

func firstSet(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// HooksDir returns where git runs hooks from for the repository at dir:
// `git rev-parse --git-path hooks`, which honours core.hooksPath and
// worktrees, made absolute.
func HooksDir(ctx context.Context, dir string) (string, error) {
	out, err := Output(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// ConfigOrigin returns a config value and the file it comes from
// ("file:/home/u/.gitconfig"), or "", "" when unset.
func ConfigOrigin(ctx context.Context, dir, key string) (value, origin string, err error) {
	out, err := Output(ctx, dir, nil, "config", "--show-origin", "--get", key)
	var ee *Error
	if errors.As(err, &ee) {
		var xe *exec.ExitError
		if errors.As(ee.Err, &xe) && xe.ExitCode() == 1 {
			return "", "", nil
		}
	}
	if err != nil {
		return "", "", err
	}
	origin, value, _ = strings.Cut(strings.TrimRight(string(out), "\n"), "\t")
	return value, origin, nil
}

// ObjectExists reports whether sha names a commit in the repository.
func ObjectExists(ctx context.Context, dir, sha string) bool {
	_, err := Output(ctx, dir, nil, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

// CommitInfo is what CommitMessages tells of one commit.
type CommitInfo struct {
	SHA       string
	Committed time.Time // committer time (%ct)
	Authored  time.Time // author time (%at)
	Parents   []string
	Message   string // the raw message, cut to max+1 bytes
}

// CommitMessages calls fn with the times, parents and raw message of each
// of the commits shas names (full object names), in that order, read by
// one `git log --no-walk --stdin`. A message longer than max bytes is cut
// to max+1 bytes: enough for the caller to tell, without holding it all.
func CommitMessages(ctx context.Context, dir string, shas []string, max int, fn func(c CommitInfo)) error {
	if len(shas) == 0 {
		return nil
	}
	n := 0
	err := logMessages(ctx, dir, []string{"--no-walk=unsorted", "--stdin"}, strings.NewReader(strings.Join(shas, "\n")+"\n"), max,
		func(c CommitInfo) error {
			if n >= len(shas) || c.SHA != shas[n] {
				return fmt.Errorf("git log: unexpected commit %q in its output", c.SHA)
			}
			fn(c)
			n++
			return nil
		})
	if err == nil && n != len(shas) {
		err = fmt.Errorf("git log: %d of %d commit messages read", n, len(shas))
	}
	return err
}

// logMessages runs `git log ARGS` with the format of CommitMessages and
// calls fn for each commit it prints.
func logMessages(ctx context.Context, dir string, logArgs []string, stdin io.Reader, max int, fn func(c CommitInfo) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	args := append([]string{"-c", "log.showSignature=false", "log", "-z",
		"--no-color", "--encoding=UTF-8", "--format=%H%x00%ct%x00%at%x00%P%x00%B"}, logArgs...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("git log: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return &Error{Args: args, Err: err}
	}
	br := bufio.NewReaderSize(out, 64<<10)
	// -z ends each commit's record with NUL, and the format puts one
	// between the fields: name, committer time, author time, parents,
	// message.
	// field reads up to the next NUL, keeping at most limit+1 bytes.
	field := func(limit int) (string, bool, error) {
		var b []byte
		for {
			chunk, err := br.ReadSlice(0)
			if len(b) <= limit {
				b = append(b, chunk[:min(len(chunk), limit+1-len(b))]...)
			}
			switch {
			case err == nil:
				return strings.TrimSuffix(string(b), "\x00"), true, nil
			case errors.Is(err, bufio.ErrBufferFull):
				continue
			case errors.Is(err, io.EOF):
				return string(b), len(b) > 0, nil
			default:
				return "", false, err
			}
		}
	}
	var readErr error
	for {
		sha, more, err := field(128)
		if err != nil || !more {
			readErr = err
			break
		}
		c := CommitInfo{SHA: sha}
		for _, t := range []*time.Time{&c.Committed, &c.Authored} {
			v, _, ferr := field(32)
			secs, perr := strconv.ParseInt(v, 10, 64)
			switch {
			case ferr != nil:
				err = ferr
			case perr != nil:
				err = fmt.Errorf("git log: commit %s: time %q: %w", sha, v, perr)
			}
			if err != nil {
				break
			}
			*t = time.Unix(secs, 0).UTC()
		}
		if err != nil {
			readErr = err
			break
		}
		parents, _, err := field(64 << 10)
		if err != nil {
			readErr = err
			break
		}
		c.Parents = strings.Fields(parents)
		if c.Message, _, err = field(max); err != nil {
			readErr = err
			break
		}
		if readErr = fn(c); readErr != nil {
			break
		}
	}
	if readErr != nil {
		cancel()
	}
	_, _ = io.Copy(io.Discard, out)
	waitErr := cmd.Wait()
	switch {
	case readErr != nil:
		return fmt.Errorf("read commit messages: %w", readErr)
	case waitErr != nil:
		return &Error{Args: args, Stderr: stderr.String(), Err: waitErr}
	}
	return nil
}

// BranchTip returns the commit refs/heads/branch of the repository whose
// common git directory is commonDir names, read from its loose ref file
// or packed-refs: no git process on the hook path. ok is false when the
// branch does not exist; an error when the refs cannot be read as files
// (a reftable repository among them), which callers treat as "not known".
func BranchTip(commonDir, branch string) (sha string, ok bool, err error) {
	ref := "refs/heads/" + branch
	b, err := os.ReadFile(filepath.Join(commonDir, filepath.FromSlash(ref)))
	switch {
	case err == nil:
		s := strings.TrimSpace(string(b))
		if !IsObjectName(s) {
			return "", false, fmt.Errorf("read %s: not an object name", ref)
		}
		return s, true, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, fmt.Errorf("read %s: %w", ref, err)
	}
	if _, err := os.Stat(filepath.Join(commonDir, "reftable")); err == nil {
		return "", false, errors.New("refs are kept in a reftable, not in files")
	}
	packed, err := os.ReadFile(filepath.Join(commonDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read packed-refs: %w", err)
	}
	for _, line := range strings.Split(string(packed), "\n") {
		sha, name, found := strings.Cut(strings.TrimSpace(line), " ")
		if found && name == ref && IsObjectName(sha) {
			return sha, true, nil
		}
	}
	return "", false, nil
}

// Equivalent returns the commits of head that are not in upstream but
// whose change upstream has (`git cherry upstream head`, marked "-"): a
// rebase's replays of commits the branch had.
func Equivalent(ctx context.Context, dir, upstream, head string) (map[string]bool, error) {
	out, err := Output(ctx, dir, nil, "cherry", upstream, head)
	if err != nil {
		return nil, fmt.Errorf("compare %s with %s: %w", head, upstream, err)
	}
	same := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if sha, ok := strings.CutPrefix(line, "- "); ok {
			same[strings.TrimSpace(sha)] = true
		}
	}
	return same, nil
}
