package gitexec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNoRemoteRef reports that the remote has no such ref.
var ErrNoRemoteRef = errors.New("the remote has no such ref")

// networkRun runs a git command that talks to a remote: like repoRun, but
// git never waits for a password on the terminal (a hook or an agent has
// no one to type it; credential helpers still answer), and ctx's deadline
// bounds the whole exchange.
func networkRun(ctx context.Context, r *Repo, args ...string) (stdout []byte, stderr string, err error) {
	if r == nil || r.GitDir == "" {
		return nil, "", errors.New("gitexec: no repository")
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"--git-dir=" + r.GitDir}, args...)...)
	cmd.WaitDelay = time.Second
	cmd.Dir = r.Toplevel
	if cmd.Dir == "" {
		cmd.Dir = r.GitDir
	}
	cmd.Env = append(repoEnv(), "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never")
	dieWithParent(cmd)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return out.Bytes(), errb.String(), &Error{Args: args, Stderr: errb.String(), Err: err}
	}
	return out.Bytes(), errb.String(), nil
}

// LsRemote returns the object name of ref on remote (one round trip), or
// ErrNoRemoteRef. ref must be a full ref name: only an exact match counts.
func LsRemote(ctx context.Context, r *Repo, remote, ref string) (string, error) {
	out, _, err := networkRun(ctx, r, "ls-remote", "--", remote, ref)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(out), "\n") {
		oid, name, ok := strings.Cut(line, "\t")
		if ok && name == ref && IsObjectName(oid) {
			return oid, nil
		}
	}
	return "", ErrNoRemoteRef
}

// FetchRef fetches ref from remote into the local ref into (forced: into
// is a private copy), with no tags, no FETCH_HEAD, no submodules and no
// automatic gc. A remote without ref is ErrNoRemoteRef.
func FetchRef(ctx context.Context, r *Repo, remote, ref, into string) error {
	_, stderr, err := networkRun(ctx, r, ownRefs("-c", "gc.auto=0", "-c", "maintenance.auto=false", "fetch", "--quiet",
		"--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--", remote, "+"+ref+":"+into)...)
	if err != nil && strings.Contains(stderr, "couldn't find remote ref") {
		return ErrNoRemoteRef
	}
	return err
}

// LeasePush pushes the object src to ref dst on remote only if dst is
// expect there (or absent, when expect is ""): `git push
// --force-with-lease=dst:expect`, git's compare-and-swap on a remote ref.
// It returns the status of dst, also when git fails; a push the remote
// refused has the remote's messages in the *Error's Stderr.
func LeasePush(ctx context.Context, r *Repo, remote, src, dst, expect string) (PushStatus, error) {
	out, _, err := networkRun(ctx, r, ownRefs("push", "--porcelain", "--no-verify", "--quiet",
		"--force-with-lease="+dst+":"+expect, "--", remote, src+":"+dst)...)
	for _, st := range parsePorcelain(out) {
		if st.To == dst {
			return st, err
		}
	}
	return PushStatus{}, err
}

// Stale reports a lease push refused because the remote ref was not what
// the lease expected: another writer moved it first.
func (s PushStatus) Stale() bool {
	return s.Flag == '!' && strings.HasPrefix(s.Summary, "[rejected]")
}

// ResolveRef returns the commit a local ref names, and false when the ref
// does not exist.
func ResolveRef(ctx context.Context, r *Repo, ref string) (string, bool, error) {
	out, _, err := repoRun(ctx, r, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		var ee *Error
		if errors.As(err, &ee) && ee.ExitCode() == 1 {
			return "", false, nil
		}
		return "", false, err
	}
	oid := strings.TrimSpace(string(out))
	if !IsObjectName(oid) {
		return "", false, fmt.Errorf("rev-parse %s: unexpected output %q", ref, oid)
	}
	return oid, true, nil
}

// TreeEntry is one line of `git ls-tree -r -t -z`.
type TreeEntry struct {
	Mode string // "100644", "040000", …
	Type string // "blob", "tree", "commit"
	OID  string
	Path string
}

// ListTree lists every entry of treeish, subtrees included, recursively.
func ListTree(ctx context.Context, r *Repo, treeish string) ([]TreeEntry, error) {
	out, _, err := repoRun(ctx, r, "ls-tree", "-r", "-t", "-z", "--full-tree", "--end-of-options", treeish)
	if err != nil {
		return nil, err
	}
	return parseTree(out, treeish)
}

// ListTreeIn is ListTree in the repository git finds from dir, in this
// process's environment: a pre-receive hook sees the objects of the push
// it judges only through the environment git gives it.
func ListTreeIn(ctx context.Context, dir, treeish string) ([]TreeEntry, error) {
	out, err := Output(ctx, dir, nil, "ls-tree", "-r", "-t", "-z", "--full-tree", "--end-of-options", treeish)
	if err != nil {
		return nil, err
	}
	return parseTree(out, treeish)
}

func parseTree(out []byte, treeish string) ([]TreeEntry, error) {
	var es []TreeEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		f := strings.Fields(string(meta))
		if !ok || len(f) != 3 || !IsObjectName(f[2]) {
			return nil, fmt.Errorf("ls-tree %s: unreadable entry %q", treeish, rec)
		}
		es = append(es, TreeEntry{Mode: f[0], Type: f[1], OID: f[2], Path: string(path)})
	}
	return es, nil
}

// MaxBlob bounds what ReadBlobs reads of one object.
const MaxBlob = 1 << 20

// ReadBlobs returns the contents of the given blobs, in order, through one
// `git cat-file --batch`. A missing object, one that is not a blob, or one
// larger than MaxBlob is an error.
func ReadBlobs(ctx context.Context, r *Repo, oids []string) ([][]byte, error) {
	if len(oids) == 0 {
		return nil, nil
	}
	return readBatch(ReadCommand(ctx, r.GitDir, dirOf(r), "cat-file", "--batch"), "blob", oids)
}

// ReadBlobsIn is ReadBlobs in the repository git finds from dir, in this
// process's environment (see ListTreeIn).
func ReadBlobsIn(ctx context.Context, dir string, oids []string) ([][]byte, error) {
	return readObjectsIn(ctx, dir, "blob", oids)
}

// ReadCommitsIn is ReadBlobsIn for commits: each raw commit object.
func ReadCommitsIn(ctx context.Context, dir string, oids []string) ([][]byte, error) {
	return readObjectsIn(ctx, dir, "commit", oids)
}

func readObjectsIn(ctx context.Context, dir, typ string, oids []string) ([][]byte, error) {
	if len(oids) == 0 {
		return nil, nil
	}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir = dir
	return readBatch(cmd, typ, oids)
}

// readBatch runs cmd, a `git cat-file --batch`, asks it for oids, and reads the
// objects oids, each of type typ, in order.
func readBatch(cmd *exec.Cmd, typ string, oids []string) ([][]byte, error) {
	var in bytes.Buffer
	for _, o := range oids {
		if !IsObjectName(o) {
			return nil, fmt.Errorf("cat-file: %q is not an object name", o)
		}
		in.WriteString(o)
		in.WriteByte('\n')
	}
	cmd.Stdin = &in
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cat-file: %w", err)
	}
	out := make([][]byte, 0, len(oids))
	br := bufio.NewReaderSize(stdout, 64<<10)
	readErr := func() error {
		for _, o := range oids {
			head, err := br.ReadString('\n')
			if err != nil {
				return fmt.Errorf("cat-file %s: %w", o, err)
			}
			f := strings.Fields(head)
			if len(f) != 3 || f[0] != o || f[1] != typ {
				return fmt.Errorf("cat-file %s: not a %s here: %q", o, typ, strings.TrimSpace(head))
			}
			n, err := strconv.Atoi(f[2])
			if err != nil || n < 0 || n > MaxBlob {
				return fmt.Errorf("cat-file %s: size %q out of bounds", o, f[2])
			}
			b := make([]byte, n+1)
			if _, err := io.ReadFull(br, b); err != nil {
				return fmt.Errorf("cat-file %s: %w", o, err)
			}
			out = append(out, b[:n])
		}
		return nil
	}()
	if readErr != nil {
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	if readErr != nil {
		return nil, readErr
	}
	if werr != nil {
		return nil, &Error{Args: []string{"cat-file", "--batch"}, Stderr: errb.String(), Err: werr}
	}
	return out, nil
}

func dirOf(r *Repo) string {
	if r.Toplevel != "" {
		return r.Toplevel
	}
	return r.GitDir
}

// IsObjectName reports a full hexadecimal object name (SHA-1 or SHA-256).
func IsObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
