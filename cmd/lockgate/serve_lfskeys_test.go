package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestServeGitLFSFileLooksLikeKey: files whose names lockgate would read
// as a logical key or a pattern are locked through git-lfs as those
// files: `git lfs locks` shows their paths, lockgate's hook refuses
// another worker's commit of one, and `git lfs unlock` releases them. A
// path lockgate cannot lock is a 422 with the reason, never a 500.
func TestServeGitLFSFileLooksLikeKey(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Fatal("git-lfs is not installed: `make test` installs it (apt-get install git-lfs)")
	}
	files := []string{"db:dump.psd", "queue:x", "api:get /v1", "art/a*.psd"}
	c := newCLIRepo(t)
	for _, f := range files {
		c.repo.Write(f, "v1\n")
	}
	for _, args := range [][]string{{"init"}, {"install"}} {
		if code, out := c.run("admin", args...); code != 0 {
			t.Fatalf("lockgate %s: exit %d: %s", args[0], code, out)
		}
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-qm", "init")
	code, out := c.run("admin", "serve", "user", "add", "alice")
	if code != 0 {
		t.Fatalf("serve user add: exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	alice := lines[len(lines)-1]

	code, out = c.run("admin", "serve", "user", "add", "bob")
	if code != 0 {
		t.Fatalf("serve user add: exit %d: %s", code, out)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	bob := lines[len(lines)-1]
	addr := startServe(t, c)

	// clone is a clone of the user's, git-lfs pointed at the server, and
	// its git and sh.
	clone := func(user, token string) (git, sh func(args ...string) (string, error)) {
		dir := filepath.Join(t.TempDir(), user)
		if out, err := exec.Command("git", "clone", "-q", c.repo.Dir, dir).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v: %s", err, out)
		}
		run := func(name string) func(args ...string) (string, error) {
			return func(args ...string) (string, error) {
				cmd := exec.Command(name, args...)
				cmd.Dir, cmd.Env = dir, c.repo.Env
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
		}
		git, sh = run("git"), run("sh")
		if out, err := git("config", "lfs.url", "http://"+user+":"+token+"@"+addr+"/lfs"); err != nil {
			t.Fatalf("git config: %v: %s", err, out)
		}
		return git, sh
	}
	git, aliceSh := clone("alice", alice)
	bobGit, _ := clone("bob", bob)
	for _, f := range files {
		if out, err := git("lfs", "lock", "--", f); err != nil {
			t.Fatalf("git lfs lock %q: %v: %s", f, err, out)
		}
	}
	out, err := git("lfs", "locks", "--json")
	if err != nil {
		t.Fatalf("git lfs locks: %v: %s", err, out)
	}
	var listed []struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != len(files) {
		t.Fatalf("git lfs locks --json = %+v, %v: %s", listed, err, out)
	}
	got := map[string]bool{}
	for _, l := range listed {
		got[l.Path] = true
	}
	for _, f := range files {
		if !got[f] {
			t.Errorf("git lfs locks does not show %q: %s", f, out)
		}
	}

	// bob's commit of the file is refused: the lock covers it.
	c.repo.Write("db:dump.psd", "bob's\n")
	c.repo.Git("add", "db:dump.psd")
	commit := exec.Command("git", "commit", "-qm", "bob's change")
	commit.Dir, commit.Env = c.repo.Dir, append(append([]string(nil), c.repo.Env...), "LOCKGATE_WORKER=bob")
	if out, err := commit.CombinedOutput(); err == nil || !strings.Contains(string(out), "locked through [d]b:dump.psd by alice") {
		t.Fatalf("bob's commit of alice's git-lfs lock on db:dump.psd: %v: %s", err, out)
	}

	// bob's git lfs lock is refused, naming alice and the command that
	// ends her lock, which runs in her clone.
	out, err = bobGit("lfs", "lock", "--", "queue:x")
	if err == nil || !strings.Contains(out, "is held by alice") {
		t.Fatalf("bob's git lfs lock of alice's queue:x: %v: %s", err, out)
	}
	_, rest, _ := strings.Cut(out, "ask alice to run `")
	command, _, ok := strings.Cut(rest, "`")
	if !ok || !strings.HasPrefix(command, "git lfs unlock ") {
		t.Fatalf("bob's refusal names no command for alice: %s", out)
	}
	if out, err := aliceSh("-c", command); err != nil {
		t.Fatalf("alice runs %s: %v: %s", command, err, out)
	}
	files = slices.DeleteFunc(files, func(f string) bool { return f == "queue:x" })

	for _, f := range files {
		if out, err := git("lfs", "unlock", "--", f); err != nil {
			t.Fatalf("git lfs unlock %q: %v: %s", f, err, out)
		}
	}
	if code, out := c.run("viewer", "lock", "list"); code != 0 || strings.Contains(out, "alice") {
		t.Fatalf("lock list after the unlocks: exit %d: %s", code, out)
	}

	// What lockgate cannot lock as a file is the client's to change: 422.
	for _, p := range []string{".git/config", "x[1].bin", "a{b}.bin"} {
		body, err := json.Marshal(map[string]string{"path": p})
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/lfs/locks", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("alice", alice)
		req.Header.Set("Content-Type", "application/vnd.git-lfs+json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Message string `json:"message"`
		}
		err = json.NewDecoder(res.Body).Decode(&e)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(e.Message, "cannot lock this file") {
			t.Errorf("POST /lfs/locks %q: %s %q, %v; want 422 naming why", p, res.Status, e.Message, err)
		}
	}
}
