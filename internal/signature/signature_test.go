package signature

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// signedCommit makes a commit signed by git with a fresh SSH key and
// returns the raw commit and the key's public line.
func signedCommit(t *testing.T, msg string) (raw []byte, pub string) {
	t.Helper()
	key := filepath.Join(t.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	data, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data))
	r := gittest.New(t)
	r.Write("a.txt", msg)
	r.Git("add", "a.txt")
	r.Git("-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "commit", "-q", "-S", "-m", msg)
	cmd := exec.Command("git", "cat-file", "commit", "HEAD")
	cmd.Dir, cmd.Env = r.Dir, r.Env
	raw, err = cmd.Output() // whole: a trailing newline is signed too
	if err != nil {
		t.Fatal(err)
	}
	return raw, f[0] + " " + f[1]
}

func TestCommitSigners(t *testing.T) {
	raw, pub := signedCommit(t, "signed\n\nLockgate-Worker: bob\n")
	_, other := signedCommit(t, "other")
	parse := func(text string) *Signers {
		t.Helper()
		s, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		signers string
		raw     []byte
		want    []string
	}{
		{"listed", "bob " + pub + "\n", raw, []string{"bob"}},
		{"several principals", "# team\nbob,bob@corp " + pub + " bob's laptop\n", raw, []string{"bob", "bob@corp"}},
		{"namespaces with git", `bob namespaces="file,git" ` + pub, raw, []string{"bob"}},
		{"namespaces without git", `bob namespaces="file" ` + pub, raw, nil},
		{"another key", "bob " + other, raw, nil},
		{"no signers", "", raw, nil},
		{"message changed", "bob " + pub, bytes.Replace(raw, []byte("Lockgate-Worker: bob"), []byte("Lockgate-Worker: mal"), 1), nil},
		{"header changed", "bob " + pub, bytes.Replace(raw, []byte("author "), []byte("author X"), 1), nil},
		{"unsigned", "bob " + pub, []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a> 1 +0000\ncommitter a <a> 1 +0000\n\nx\n"), nil},
		{"not a commit", "bob " + pub, []byte("garbage"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parse(tc.signers).CommitSigners(tc.raw); !slices.Equal(got, tc.want) {
				t.Fatalf("signers %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, line := range []string{
		"bob",
		"* ssh-ed25519 AAAA",
		"bob ssh-ed25519 not-base64!",
		`bob cert-authority ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO4q`,
		`bob valid-after="20260101" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO4q`,
		`bob frobnicate ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO4q`,
		strings.Repeat("x", MaxSignersBytes+1),
	} {
		if _, err := Parse([]byte(line)); err == nil {
			t.Errorf("Parse(%.60q): no error", line)
		}
	}
}

// FuzzParse: any file parses or is refused, without a panic, and a parsed
// one judges any commit without one.
func FuzzParse(f *testing.F) {
	f.Add([]byte("bob ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO4q\n"), []byte("tree x\ngpgsig -----BEGIN SSH SIGNATURE-----\n abc\n -----END SSH SIGNATURE-----\n\nmsg\n"))
	f.Add([]byte(`bob namespaces="git" ssh-ed25519 AAAA`), []byte("x\n\ny"))
	f.Add([]byte("# c\n\n"), []byte(""))
	f.Fuzz(func(t *testing.T, signers, raw []byte) {
		s, err := Parse(signers)
		if err != nil {
			return
		}
		_ = s.CommitSigners(raw)
	})
}
