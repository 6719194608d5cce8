package gitexec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SignedBy finds, for each of commits, the principal of allowedSigners
// (git's gpg.ssh.allowedSignersFile format) whose key made a good SSH
// signature of it, as git itself checks one (`git verify-commit`). A
// commit without a signature, with a bad one, or one by a key the file
// does not list is left out. allowedSigners comes from a commit, not a
// file of the clone: it is written to a temporary file for git to read.
func SignedBy(ctx context.Context, dir string, allowedSigners []byte, commits []string) (map[string]string, error) {
	out := make(map[string]string, len(commits))
	if len(commits) == 0 || len(bytes.TrimSpace(allowedSigners)) == 0 {
		return out, nil
	}
	tmp, err := os.MkdirTemp("", "lockgate-signers-")
	if err != nil {
		return nil, fmt.Errorf("check signatures: %w", err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "allowed_signers")
	if err := os.WriteFile(file, allowedSigners, 0o600); err != nil {
		return nil, fmt.Errorf("check signatures: %w", err)
	}
	args := []string{"-c", "gpg.ssh.allowedSignersFile=" + file, "-c", "log.showSignature=false",
		"log", "--no-walk=unsorted", "--format=%H%x00%G?%x00%GS%x00", "--stdin"}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(commits, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("check signatures: %w", &Error{Args: args, Stderr: stderr.String(), Err: err})
	}
	f := strings.Split(string(stdout), "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		sha := strings.TrimSpace(f[i])
		if f[i+1] == "G" && f[i+2] != "" {
			out[sha] = f[i+2]
		}
	}
	return out, nil
}
