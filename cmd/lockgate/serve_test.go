package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestServeGitLFS drives Debian's git-lfs client against `lockgate serve`:
// locks taken with `git lfs lock` from clones are lockgate locks of their
// users, which lockgate's pre-commit hook enforces and `lockgate lock list`
// shows, and lockgate's own locks are listed by `git lfs locks`.
func TestServeGitLFS(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Fatal("git-lfs is not installed: `make test` installs it (apt-get install git-lfs)")
	}
	c := newCLIRepo(t)
	c.repo.Write("art/model.bin", "model\n")
	for _, args := range [][]string{{"init"}, {"install"}} {
		if code, out := c.run("admin", args...); code != 0 {
			t.Fatalf("lockgate %s: exit %d: %s", args[0], code, out)
		}
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-qm", "init")
	token := func(name string) string {
		code, out := c.run("admin", "serve", "user", "add", name)
		if code != 0 {
			t.Fatalf("serve user add %s: exit %d: %s", name, code, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	alice, bob := token("alice"), token("bob")

	addr := startServe(t, c)
	clone := func(user, tok string) func(args ...string) (string, error) {
		dir := filepath.Join(t.TempDir(), user)
		if out, err := exec.Command("git", "clone", "-q", c.repo.Dir, dir).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v: %s", err, out)
		}
		git := func(args ...string) (string, error) {
			cmd := exec.Command("git", args...)
			cmd.Dir, cmd.Env = dir, c.repo.Env
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		for _, kv := range [][2]string{{"lfs.url", "http://" + user + ":" + tok + "@" + addr + "/lfs"}, {"lfs.locksverify", "true"}} {
			if out, err := git("config", kv[0], kv[1]); err != nil {
				t.Fatalf("git config: %v: %s", err, out)
			}
		}
		return git
	}
	aliceGit, bobGit := clone("alice", alice), clone("bob", bob)

	if out, err := aliceGit("lfs", "lock", "art/model.bin"); err != nil {
		t.Fatalf("git lfs lock: %v: %s", err, out)
	}
	if code, out := c.run("viewer", "lock", "list"); code != 0 || !strings.Contains(out, "art/model.bin") || !strings.Contains(out, "alice") {
		t.Fatalf("lock list: exit %d: %s", code, out)
	}
	// Another worker's commit of the file is refused by the hook.
	c.repo.Write("art/model.bin", "changed\n")
	c.repo.Git("add", "art/model.bin")
	commit := exec.Command("git", "commit", "-qm", "bob's change")
	commit.Dir, commit.Env = c.repo.Dir, append(append([]string(nil), c.repo.Env...), "LOCKGATE_WORKER=bob")
	if out, err := commit.CombinedOutput(); err == nil || !strings.Contains(string(out), "locked by alice") {
		t.Fatalf("bob's commit of alice's git-lfs lock: %v: %s", err, out)
	}

	// Held: bob's lock and unlock are refused, naming alice.
	if out, err := bobGit("lfs", "lock", "art/model.bin"); err == nil || !strings.Contains(out, "alice") {
		t.Fatalf("bob's git lfs lock: %v: %s", err, out)
	}
	if out, err := bobGit("lfs", "unlock", "art/model.bin"); err == nil || !strings.Contains(out, "alice") {
		t.Fatalf("bob's git lfs unlock: %v: %s", err, out)
	}
	// bob is no admin of the server: --force does not clear alice's lock.
	if out, err := bobGit("lfs", "unlock", "--force", "art/model.bin"); err == nil || !strings.Contains(out, "only an admin") {
		t.Fatalf("bob's git lfs unlock --force: %v: %s", err, out)
	}

	// A lock taken with lockgate is a git-lfs lock.
	if code, out := c.run("carol", "lock", "acquire", "docs/x.md"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	out, err := bobGit("lfs", "locks", "--json")
	if err != nil {
		t.Fatalf("git lfs locks: %v: %s", err, out)
	}
	var listed []struct {
		Path  string `json:"path"`
		Owner struct {
			Name string `json:"name"`
		} `json:"owner"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 2 || listed[1].Path != "docs/x.md" || listed[1].Owner.Name != "carol" {
		t.Fatalf("git lfs locks --json = %+v, %v: %s", listed, err, out)
	}

	if out, err := aliceGit("lfs", "unlock", "art/model.bin"); err != nil {
		t.Fatalf("git lfs unlock: %v: %s", err, out)
	}
	if code, out := c.run("viewer", "lock", "list"); code != 0 || strings.Contains(out, "art/model.bin") {
		t.Fatalf("lock list after the unlock: exit %d: %s", code, out)
	}

	// No token, or a wrong one: 401 with the challenge git-lfs answers.
	for _, auth := range []string{"", "Bearer lgs_0000000000000000_wrong"} {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/lfs/locks", nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("LFS-Authenticate") == "" {
			t.Errorf("%q: %s, LFS-Authenticate %q; want 401 with a challenge", auth, res.Status, res.Header.Get("LFS-Authenticate"))
		}
	}
	if out, err := bobGit("-c", "lfs.url=http://bob:wrong@"+addr+"/lfs", "lfs", "locks"); err == nil {
		t.Errorf("git lfs locks with a wrong token succeeded: %s", out)
	}
}

// startServe starts `lockgate serve [args]` in c's repository on a free port,
// waits until /healthz answers, and stops it with SIGTERM at the test's
// end, which it must survive with exit 0. It returns HOST:PORT.
func startServe(t *testing.T, c *cliRepo, args ...string) string {
	t.Helper()
	addr, _ := startServeLogged(t, c, args...)
	return addr
}

// startServeLogged is startServe, with what the server has written to
// stderr so far (one entry a line) at every call of logged.
func startServeLogged(t *testing.T, c *cliRepo, args ...string) (addr string, logged func() []string) {
	t.Helper()
	var (
		mu    sync.Mutex
		lines []string
	)
	logged = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
	cmd := c.cmd("server", append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	scan := bufio.NewScanner(stderr)
	keep := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, line)
	}
	for addr == "" && scan.Scan() {
		keep(scan.Text())
		if _, rest, ok := strings.Cut(scan.Text(), " on http://"); ok {
			addr, _, _ = strings.Cut(rest, " ")
		}
	}
	go func() {
		for scan.Scan() {
			keep(scan.Text())
			t.Log("serve:", scan.Text())
		}
		exited <- cmd.Wait()
	}()
	if addr == "" {
		t.Fatalf("lockgate serve said no address: %v", <-exited)
	}
	t.Cleanup(func() { stopServe(t, cmd, exited) })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return addr, logged
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz never answered: %v", err)
		}
	}
}
