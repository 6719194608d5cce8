package gitexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Signer signs a commit's payload as `git commit -S` does with
// gpg.format=ssh: an SSH signature in git's namespace, armored, by the key
// user.signingkey names (a key file, a public key whose private half the
// SSH agent holds, or "key::" and a public key), with gpg.ssh.program.
type Signer func(ctx context.Context, payload []byte) (string, error)

// SSHSigner is the Signer of the repository's git configuration; an error
// when user.signingkey is not set.
func SSHSigner(ctx context.Context, r *Repo) (Signer, error) {
	key, err := configGet(ctx, r, "user.signingkey")
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, errors.New("no signing key: set one with `git config user.signingkey ~/.ssh/id_ed25519` (an SSH key; lockgate signs as git does with gpg.format=ssh)")
	}
	program, err := configGet(ctx, r, "gpg.ssh.program")
	if err != nil {
		return nil, err
	}
	if program == "" {
		program = "ssh-keygen"
	}
	if strings.HasPrefix(key, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			key = filepath.Join(home, key[2:])
		}
	}
	return func(ctx context.Context, payload []byte) (string, error) {
		return sshSign(ctx, program, key, payload)
	}, nil
}

// sshSign runs `ssh-keygen -Y sign -n git -f KEY` on payload.
func sshSign(ctx context.Context, program, key string, payload []byte) (string, error) {
	tmp, err := os.MkdirTemp("", "lockgate-sign-")
	if err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	defer os.RemoveAll(tmp)
	if literal, ok := strings.CutPrefix(key, "key::"); ok {
		key = filepath.Join(tmp, "key.pub")
		if err := os.WriteFile(key, []byte(literal+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("sign: %w", err)
		}
	}
	file := filepath.Join(tmp, "payload")
	if err := os.WriteFile(file, payload, 0o600); err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	cmd := exec.CommandContext(ctx, program, "-Y", "sign", "-n", "git", "-f", key, file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("sign with %s: %w: %s", key, err, strings.TrimSpace(stderr.String()))
	}
	sig, err := os.ReadFile(file + ".sig")
	if err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	return string(sig), nil
}

// configGet is git's value of key in r, from every config file git reads;
// "" when unset.
func configGet(ctx context.Context, r *Repo, key string) (string, error) {
	out, err := RepoOutput(ctx, r, "config", "--get", key)
	var ge *Error
	if errors.As(err, &ge) && ge.ExitCode() == 1 {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", key, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// maxPathspecs bounds the paths of one git log: a command line has room
// for a few thousand.
const maxPathspecs = 2000

// AddedBy finds, for each of paths (files of the history of tips), the
// commit that added it: the newest commit of git log --diff-filter=A
// naming it, merges left out (a file that first appears in a merge was
// added by no commit of its own). --full-history: a merge whose tree
// lacks the file (the workflow branch's merges hold no events) is like
// its other parent for it, and git's default simplification would
// follow that parent alone, never reaching the commit that added the
// file. Read in dir, in this process's environment.
func AddedBy(ctx context.Context, dir string, tips, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	if len(paths) == 0 || len(tips) == 0 {
		return out, nil
	}
	for from := 0; from < len(paths); from += maxPathspecs {
		chunk := paths[from:min(len(paths), from+maxPathspecs)]
		args := append([]string{"log", "--format=%x01%H", "--name-only", "--diff-filter=A", "--no-renames", "--no-merges", "--full-history"}, tips...)
		args = append(append(args, "--"), chunk...)
		stdout, err := Output(ctx, dir, nil, args...)
		if err != nil {
			return nil, fmt.Errorf("find the commits that added events: %w", err)
		}
		commit := ""
		for _, line := range strings.Split(string(stdout), "\n") {
			if h, ok := strings.CutPrefix(line, "\x01"); ok {
				commit = h
				continue
			}
			if _, seen := out[line]; line != "" && commit != "" && !seen {
				out[line] = commit
			}
		}
	}
	return out, nil
}

// SigningPublicKey is the public key ("ssh-ed25519 AAAA…") of the
// repository's user.signingkey: the key itself when it is one ("key::"
// or a public key file), else the .pub file beside the private key.
func SigningPublicKey(ctx context.Context, r *Repo) (string, error) {
	key, err := configGet(ctx, r, "user.signingkey")
	if err != nil {
		return "", err
	}
	if key == "" {
		return "", errors.New("no signing key: set one with `git config user.signingkey ~/.ssh/id_ed25519` (an SSH key)")
	}
	if literal, ok := strings.CutPrefix(key, "key::"); ok {
		return PublicKeyLine(literal)
	}
	if strings.HasPrefix(key, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			key = filepath.Join(home, key[2:])
		}
	}
	for _, f := range []string{key, key + ".pub"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if line, err := PublicKeyLine(string(data)); err == nil {
			return line, nil
		}
	}
	return "", fmt.Errorf("user.signingkey %s: no public key there or in %s.pub", key, key)
}

// PublicKeyLine is the type and key of an SSH public key's text
// ("ssh-ed25519 AAAA… comment"), without the comment.
func PublicKeyLine(text string) (string, error) {
	f := strings.Fields(strings.TrimSpace(text))
	if len(f) < 2 || !(strings.HasPrefix(f[0], "ssh-") || strings.HasPrefix(f[0], "ecdsa-") || strings.HasPrefix(f[0], "sk-")) {
		return "", errors.New("not an SSH public key")
	}
	return f[0] + " " + f[1], nil
}
