package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServeLFSStoredFiles drives the real git-lfs client through the
// setup docs/serve.md gives for files stored with git-lfs: their
// contents go to the repository's own LFS server (here a bare file://
// remote, which git-lfs serves with its standalone file transfer), and
// the locks to lockgate serve through a remote of their own, whose
// lfsurl names the server and whose token a credential helper holds. A
// push and a clone move the LFS contents, the lock is lockgate's, and
// another clone's commit of the file is refused. It also checks what
// git-lfs says when lfs.url points at the server for the contents.
func TestServeLFSStoredFiles(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Fatal("git-lfs is not installed: `make test` installs it (apt-get install git-lfs)")
	}
	c := newCLIRepo(t)
	root := t.TempDir()
	// git-lfs's filters live in the global config: a file of the test's.
	c.repo.Env = append(c.repo.Env, "GIT_CONFIG_GLOBAL="+filepath.Join(root, "gitconfig"))
	git := func(dir, worker string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(append([]string(nil), c.repo.Env...), "LOCKGATE_WORKER="+worker)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(dir string, args ...string) {
		t.Helper()
		if out, err := git(dir, "admin", args...); err != nil {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	must(c.repo.Dir, "lfs", "install")
	origin := "file://" + filepath.Join(root, "origin.git")
	must(root, "init", "-q", "--bare", "-b", "main", "origin.git")

	// The server's clone: the policy puts the locks on the remote (the git
	// store), so that every clone's hooks read the locks the server takes.
	c.repo.Write(".lockgate.yaml", "version: 1\nlocks:\n  store: git\n")
	must(c.repo.Dir, "lfs", "track", "*.psd")
	c.repo.Write("art/hero.psd", "hero v1\n")
	must(c.repo.Dir, "add", "-A")
	must(c.repo.Dir, "commit", "-qm", "init")
	must(c.repo.Dir, "remote", "add", "origin", origin)
	must(c.repo.Dir, "push", "-q", "origin", "main")
	token := func(name string) string {
		code, out := c.run("admin", "serve", "user", "add", name)
		if code != 0 {
			t.Fatalf("serve user add %s: exit %d: %s", name, code, out)
		}
		if !strings.Contains(out, "export LOCKGATE_WORKER="+name+"\n") {
			t.Errorf("serve user add %s names no worker line: %s", name, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	aliceToken, bobToken := token("alice"), token("bob")
	addr := startServe(t, c)

	// clone is a person's clone, set up as docs/serve.md says: origin
	// untouched, a remote "locks" whose lfsurl is the server, the token
	// in a credential store.
	clone := func(user, tok string) string {
		dir := filepath.Join(root, user)
		must(root, "clone", "-q", origin, dir)
		if code, out := c.run(user, "-C", dir, "install"); code != 0 {
			t.Fatalf("lockgate install: exit %d: %s", code, out)
		}
		must(dir, "remote", "add", "locks", origin)
		must(dir, "config", "remote.locks.lfsurl", "http://"+addr+"/lfs")
		must(dir, "config", "credential.helper", "store --file="+filepath.Join(root, user+".credentials"))
		approve := exec.Command("git", "credential", "approve")
		approve.Dir, approve.Env = dir, c.repo.Env
		approve.Stdin = strings.NewReader("protocol=http\nhost=" + addr + "\nusername=" + user + "\npassword=" + tok + "\n\n")
		if out, err := approve.CombinedOutput(); err != nil {
			t.Fatalf("git credential approve: %v: %s", err, out)
		}
		return dir
	}
	alice := clone("alice", aliceToken)

	out, err := git(alice, "alice", "lfs", "lock", "--remote", "locks", "art/hero.psd")
	if err != nil {
		t.Fatalf("git lfs lock --remote locks: %v: %s", err, out)
	}
	if strings.Contains(out, aliceToken) {
		t.Errorf("git lfs lock printed the token: %s", out)
	}
	if code, out := c.run("viewer", "lock", "list"); code != 0 || !strings.Contains(out, "art/hero.psd") || !strings.Contains(out, "alice") {
		t.Fatalf("lock list in the server's clone: exit %d: %s", code, out)
	}

	// alice, her hooks acting as the serve user, commits under her own
	// lock and pushes the new contents to origin's LFS storage.
	if err := os.WriteFile(filepath.Join(alice, "art", "hero.psd"), []byte("hero v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(alice, "add", "art/hero.psd")
	if out, err := git(alice, "alice", "commit", "-qm", "hero v2"); err != nil {
		t.Fatalf("alice's commit under her own lock: %v: %s", err, out)
	}
	if out, err := git(alice, "alice", "push", "-q", "origin", "main"); err != nil {
		t.Fatalf("alice's push of LFS contents to origin: %v: %s", err, out)
	}
	if out, err := git(filepath.Join(root, "origin.git"), "admin", "lfs", "ls-files", "--all"); err != nil || !strings.Contains(out, "art/hero.psd") {
		t.Fatalf("origin's LFS files: %v: %s", err, out)
	}

	// bob's clone gets the contents from origin, sees alice's lock
	// through the locks remote, and his commit of the file is refused.
	bob := clone("bob", bobToken)
	if data, err := os.ReadFile(filepath.Join(bob, "art", "hero.psd")); err != nil || string(data) != "hero v2\n" {
		t.Fatalf("bob's checkout of art/hero.psd = %q, %v; want the LFS contents alice pushed", data, err)
	}
	if out, err := git(bob, "bob", "lfs", "locks", "--remote", "locks"); err != nil || !strings.Contains(out, "art/hero.psd") || !strings.Contains(out, "alice") {
		t.Fatalf("bob's git lfs locks --remote locks: %v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(bob, "art", "hero.psd"), []byte("hero by bob\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(bob, "add", "art/hero.psd")
	if out, err := git(bob, "bob", "commit", "-qm", "bob's hero"); err == nil || !strings.Contains(out, "alice") {
		t.Fatalf("bob's commit of alice's locked file: %v: %s", err, out)
	}

	// lfs.url pointed at the server sends the contents there: git-lfs
	// shows the server's answer, what to set up instead.
	out, err = git(bob, "bob", "-c", "lfs.url=http://"+addr+"/lfs", "lfs", "push", "--all", "origin")
	if err == nil || !strings.Contains(out, "lockgate serve stores no files") || !strings.Contains(out, "--remote locks") {
		t.Fatalf("git lfs push to the server: %v: %s", err, out)
	}
	if out, err := git(alice, "alice", "lfs", "unlock", "--remote", "locks", "art/hero.psd"); err != nil {
		t.Fatalf("git lfs unlock --remote locks: %v: %s", err, out)
	}
	if out, err := git(bob, "bob", "commit", "-qm", "bob's hero"); err != nil {
		t.Fatalf("bob's commit once alice unlocked: %v: %s", err, out)
	}
}

// TestServeWarnsOfTheFileStore: served from the file store, whose locks
// only the server's clone reads, the server says so when it starts and
// names the shared stores; served from the git store, it does not.
func TestServeWarnsOfTheFileStore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		policy string
		warns  bool
	}{
		{"version: 1\nlocks:\n  store: file\n", true},
		{"version: 1\nlocks:\n  store: git\n", false},
	} {
		c := newCLIRepo(t)
		root := t.TempDir()
		c.repo.Write(".lockgate.yaml", tt.policy)
		c.repo.Commit("init")
		c.repo.Git("init", "-q", "--bare", "-b", "main", filepath.Join(root, "origin.git"))
		c.repo.Git("remote", "add", "origin", filepath.Join(root, "origin.git"))
		c.repo.Git("push", "-q", "origin", "main")
		// The start: every line before the first request's log line.
		cmd := c.cmd("server", "serve", "--listen", "127.0.0.1:0")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var start []string
		for lines := bufio.NewScanner(stderr); lines.Scan(); {
			line := lines.Text()
			if _, rest, ok := strings.Cut(line, " on http://"); ok {
				addr, _, _ := strings.Cut(rest, " ")
				go func() {
					if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
						res.Body.Close()
					}
				}()
			}
			if strings.Contains(line, "GET /healthz") {
				break
			}
			start = append(start, line)
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait() // its exit is TestServeGitLFS's to check
		said := strings.Join(start, "\n")
		warned := strings.Contains(said, "warning: the file store keeps its locks in this clone") && strings.Contains(said, "locks.store: git")
		if warned != tt.warns || !strings.Contains(said, "serving the locks of") {
			t.Errorf("%q: the server's start said\n%s\nwant the file store's warning: %v", tt.policy, said, tt.warns)
		}
	}
}
