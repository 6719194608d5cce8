// Package signature checks the SSH signatures git puts on commits
// (gpg.format=ssh) against an allowed signers file, in process: the
// format and the checks of `git verify-commit` with
// gpg.ssh.allowedSignersFile, without one ssh-keygen run per commit.
package signature

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// namespace is the one git signs commits in.
const namespace = "git"

// MaxSignersBytes bounds the allowed signers file read.
const MaxSignersBytes = 1 << 20

// Signers is a parsed allowed signers file: which principals each key
// speaks for.
type Signers struct {
	byKey map[string][]string // SHA256 fingerprint → principals
}

// Parse reads an allowed signers file (git's gpg.ssh.allowedSignersFile,
// OpenSSH's ALLOWED SIGNERS format): per line, principals (comma
// separated), options, and a public key; blank lines and #-comments are
// skipped. A line lockgate cannot judge as git would — principals with
// wildcards, certificate authorities, validity windows — is an error,
// never silently ignored; a namespaces option without "git" makes its
// line count for nothing, as for git.
func Parse(data []byte) (*Signers, error) {
	if len(data) > MaxSignersBytes {
		return nil, fmt.Errorf("allowed signers: larger than %d bytes", MaxSignersBytes)
	}
	s := &Signers{byKey: map[string][]string{}}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := s.addLine(line); err != nil {
			return nil, fmt.Errorf("allowed signers line %d: %w", n+1, err)
		}
	}
	return s, nil
}

func (s *Signers) addLine(line string) error {
	principals, rest, ok := strings.Cut(line, " ")
	if !ok {
		return errors.New("want principals and a public key")
	}
	for _, p := range strings.Split(principals, ",") {
		if p == "" || strings.ContainsAny(p, "*?!") {
			return fmt.Errorf("principal %q: want worker ids, without wildcards", p)
		}
	}
	rest = strings.TrimSpace(rest)
	if !keyType(rest) {
		opts, key, ok := cutOptions(rest)
		if !ok {
			return errors.New("unreadable options")
		}
		use, err := options(opts)
		if err != nil {
			return err
		}
		if !use {
			return nil
		}
		rest = key
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(rest))
	if err != nil {
		return fmt.Errorf("public key: %w", err)
	}
	fp := ssh.FingerprintSHA256(pub)
	for _, p := range strings.Split(principals, ",") {
		if !slices.Contains(s.byKey[fp], p) {
			s.byKey[fp] = append(s.byKey[fp], p)
		}
	}
	return nil
}

// keyType reports whether s starts with a public key's type.
func keyType(s string) bool {
	return strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-") || strings.HasPrefix(s, "sk-")
}

// cutOptions splits the options (up to the first space outside quotes)
// from the key after them.
func cutOptions(s string) (opts, key string, ok bool) {
	quoted := false
	for i, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			return s[:i], strings.TrimSpace(s[i+1:]), true
		}
	}
	return "", "", false
}

// options judges a line's options: use is false when its namespaces
// leave out git's.
func options(opts string) (use bool, err error) {
	use = true
	for _, o := range splitOptions(opts) {
		name, val, _ := strings.Cut(o, "=")
		switch strings.ToLower(name) {
		case "namespaces":
			use = slices.Contains(strings.Split(strings.Trim(val, `"`), ","), namespace)
		case "cert-authority", "valid-after", "valid-before":
			return false, fmt.Errorf("option %s: lockgate does not read it; list the workers' keys", name)
		default:
			return false, fmt.Errorf("unknown option %q", name)
		}
	}
	return use, nil
}

func splitOptions(s string) []string {
	var out []string
	quoted, start := false, 0
	for i, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ',' && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// CommitSigners returns the principals whose key made a good signature of
// the raw commit object (as `git cat-file commit` prints it); none for a
// commit without an SSH signature, with a bad one, or by a key the file
// does not list.
func (s *Signers) CommitSigners(raw []byte) []string {
	if s == nil || len(s.byKey) == 0 {
		return nil
	}
	payload, armor, ok := splitSignature(raw)
	if !ok {
		return nil
	}
	sig, err := sshsig.Unarmor(armor)
	if err != nil {
		return nil
	}
	principals := s.byKey[ssh.FingerprintSHA256(sig.PublicKey)]
	if len(principals) == 0 {
		return nil
	}
	if err := sshsig.Verify(bytes.NewReader(payload), sig, sig.PublicKey, sig.HashAlgorithm, namespace); err != nil {
		return nil
	}
	return principals
}

// splitSignature takes the gpgsig header out of a raw commit: what remains
// is what was signed. ok is false when the commit has no such header.
func splitSignature(raw []byte) (payload, armor []byte, ok bool) {
	head, body, found := bytes.Cut(raw, []byte("\n\n"))
	if !found {
		return nil, nil, false
	}
	var kept, sig [][]byte
	in := false
	for _, l := range bytes.Split(head, []byte("\n")) {
		switch {
		case bytes.HasPrefix(l, []byte("gpgsig ")):
			if sig != nil {
				return nil, nil, false // two signatures: not one git made
			}
			in = true
			sig = append(sig, l[len("gpgsig "):])
		case in && bytes.HasPrefix(l, []byte(" ")):
			sig = append(sig, l[1:])
		default:
			in = false
			kept = append(kept, l)
		}
	}
	if sig == nil {
		return nil, nil, false
	}
	payload = append(bytes.Join(kept, []byte("\n")), '\n', '\n')
	payload = append(payload, body...)
	return payload, append(bytes.Join(sig, []byte("\n")), '\n'), true
}
