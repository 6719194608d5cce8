package main

import (
	"bufio"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestServeEnforcedAtTheServer drives the setup of docs/serve.md's
// "Enforcing git-lfs locks at the server" with real parts: a bare
// repository served by git's own http-backend (a CGI program, behind HTTP
// Basic authentication that names the user in REMOTE_USER, as a web
// server does) for pushes and by git daemon for reads, whose pre-receive
// hook is lockgate's, and lockgate serve running in that same repository.
// The clones are plain git-lfs clones. A lock taken with `git lfs lock`
// binds git-lfs's own push-time check alone; a push that skips it
// (--no-verify, and locksverify off) must still be refused by the server,
// naming the holder and the lock, without moving the branch. Both stores
// the recipe allows are run: the repository's own ref and its file store,
// and the file store with locks per branch, where git-lfs's lock holds on
// the branch its clone tracks and a push to another branch goes in.
func TestServeEnforcedAtTheServer(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Fatal("git-lfs is not installed: `make test` installs it (apt-get install git-lfs)")
	}
	for _, tc := range []struct {
		name, store string
		perBranch   bool
	}{{"git", "git", false}, {"file", "file", false}, {"file+per_branch", "file", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testEnforcedAtTheServer(t, tc.store, tc.perBranch)
		})
	}
}

func testEnforcedAtTheServer(t *testing.T, store string, perBranch bool) {
	locksPolicy := "locks:\n  store: " + store + "\n"
	locked := "art/hero.psd: locked: locked by alice (human)"
	if perBranch {
		locksPolicy += "  per_branch: true\n"
		locked = "art/hero.psd: locked: locked through branch:main:art/hero.psd by alice (human)"
	}
	admin := newCLIRepo(t) // the operator's clone, which starts the project
	env := admin.repo.Env
	root := t.TempDir()
	gitIn := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(dir string, args ...string) string {
		t.Helper()
		out, err := gitIn(dir, args...)
		if err != nil {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(out)
	}

	// The server: /srv/git/project.git, its policy committed on main. Its
	// HTTP users are not named as lockgate's workers: trust.pushers maps
	// alice's login to her serve user.
	projects := filepath.Join(root, "srv")
	bare := filepath.Join(projects, "project.git")
	must(root, "init", "-q", "--bare", "-b", "main", bare)
	admin.repo.Write(".lockgate.yaml", "version: 1\n"+locksPolicy+"trust:\n  pushers:\n    alice.smith: alice\n")
	admin.repo.Write("art/hero.psd", "hero v1\n")
	admin.repo.Git("add", "-A")
	admin.repo.Git("commit", "-qm", "init")
	admin.repo.Git("push", "-q", bare, "main")
	srv := &cliRepo{t: t, repo: &gittest.Repo{Dir: bare, Env: env}}
	if code, out := srv.run("operator", "install", "--hook", "pre-receive"); code != 0 {
		t.Fatalf("lockgate install --hook pre-receive: exit %d: %s", code, out)
	}
	token := func(name string) string {
		code, out := srv.run("operator", "serve", "user", "add", name)
		if code != 0 {
			t.Fatalf("serve user add %s: exit %d: %s", name, code, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	aliceToken, bobToken := token("alice"), token("bob")
	addr, said := startServeSaying(t, srv)
	if store == "file" && (!strings.Contains(said, "pre-receive hook in it (lockgate install --hook pre-receive) refuses pushes over them") || strings.Contains(said, "other clones' commits are not refused")) {
		t.Errorf("lockgate serve in a bare repository on the file store said\n%s\nwant that its pre-receive hook refuses pushes, not that clones' commits are not refused", said)
	}
	if strings.Contains(said, "warning: push") || strings.Contains(said, "origin") {
		t.Errorf("lockgate serve in the server's repository said\n%s\nwant nothing of a remote", said)
	}

	// git http-backend for pushes. net/http/cgi passes no REMOTE_USER:
	// the handler that checked the password names the user, as Apache's
	// authentication does for its CGI programs.
	backend := filepath.Join(must(root, "--exec-path"), "git-http-backend")
	logins := map[string]string{"alice.smith": "alice-pw", "bob": "bob-pw"}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if want, known := logins[user]; !ok || !known || pass != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h := &cgi.Handler{Path: backend, Root: "/git", Stderr: os.Stderr,
			Env: append(append([]string(nil), env...), "GIT_PROJECT_ROOT="+projects, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER="+user)}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(web.Close)
	pushURL := web.URL + "/git/project.git"

	// git daemon for reads, pushes enabled to show what becomes of them:
	// git:// names no user, so its environment names every pusher
	// "anonymous", a worker that holds no lock.
	daemon, daemonURL, err := startGitDaemon(projects, append(append([]string(nil), env...), "LOCKGATE_PUSHER=anonymous"))
	if err != nil {
		t.Fatalf("git daemon: %v", err)
	}
	t.Cleanup(func() { stopDaemon(daemon) })
	readURL := daemonURL + "project.git"

	// A person's clone: read over git://, pushed over HTTP, git-lfs's
	// hooks installed and its locks sent to lockgate serve; both passwords
	// in a credential store.
	clone := func(login, password, user, tok string, locksverify bool) func(args ...string) (string, error) {
		dir := filepath.Join(root, user)
		must(root, "clone", "-q", readURL, dir)
		credentials := filepath.Join(root, user+".credentials")
		for _, kv := range [][2]string{
			{"remote.origin.pushurl", pushURL},
			{"credential.helper", "store --file=" + credentials},
			{"lfs.url", "http://" + addr + "/lfs"},
			{"lfs.http://" + addr + "/lfs.locksverify", strconv.FormatBool(locksverify)},
		} {
			must(dir, "config", kv[0], kv[1])
		}
		must(dir, "lfs", "install", "--local")
		for _, c := range [][3]string{{strings.TrimPrefix(web.URL, "http://"), login, password}, {addr, user, tok}} {
			approve := exec.Command("git", "credential", "approve")
			approve.Dir, approve.Env = dir, env
			approve.Stdin = strings.NewReader("protocol=http\nhost=" + c[0] + "\nusername=" + c[1] + "\npassword=" + c[2] + "\n\n")
			if out, err := approve.CombinedOutput(); err != nil {
				t.Fatalf("git credential approve: %v: %s", err, out)
			}
		}
		return func(args ...string) (string, error) { return gitIn(dir, args...) }
	}
	alice := clone("alice.smith", "alice-pw", "alice", aliceToken, true)
	bob := clone("bob", "bob-pw", "bob", bobToken, false)
	edit := func(git func(...string) (string, error), content, msg string, args ...string) {
		t.Helper()
		dir, err := git("rev-parse", "--show-toplevel")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(strings.TrimSpace(dir), "art", "hero.psd"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := git(append([]string{"commit", "-q", "-a", "-m", msg}, args...)...); err != nil {
			t.Fatalf("git commit %s: %v: %s", msg, err, out)
		}
	}
	tip := func() string { return must(bare, "rev-parse", "refs/heads/main") }
	refused := func(what, out string, err error, before string) {
		t.Helper()
		for _, want := range []string{"pre-receive refused", locked, "git lfs lock", "pre-receive hook declined"} {
			if err == nil || !strings.Contains(out, want) {
				t.Fatalf("%s: %v, want it refused by the server's hook (%q):\n%s", what, err, want, out)
			}
		}
		if now := tip(); now != before {
			t.Fatalf("%s moved the server's main from %s to %s", what, before, now)
		}
	}

	out, err := alice("lfs", "lock", "art/hero.psd")
	if err != nil || strings.Contains(out, aliceToken) {
		t.Fatalf("alice's git lfs lock: %v: %s", err, out)
	}
	// The server's repository holds it, and its events, with nothing to
	// push: the repository is the remote.
	if code, out := srv.run("operator", "lock", "list"); code != 0 || !strings.Contains(out, "art/hero.psd") || !strings.Contains(out, "alice") || strings.Contains(out, "warning") {
		t.Fatalf("lock list in the server's repository: exit %d: %s", code, out)
	}

	if store == "git" {
		// A clone that runs lockgate's own hooks reads the same lock table
		// through its remote: its commit is refused before any push.
		admin.repo.Git("remote", "add", "origin", readURL)
		if code, out := admin.run("carol", "install"); code != 0 {
			t.Fatalf("lockgate install: exit %d: %s", code, out)
		}
		admin.repo.Write("art/hero.psd", "hero by carol\n")
		admin.repo.Git("add", "art/hero.psd")
		commit := exec.Command("git", "commit", "-qm", "carol's hero")
		commit.Dir, commit.Env = admin.repo.Dir, append(append([]string(nil), env...), "LOCKGATE_WORKER=carol")
		if out, err := commit.CombinedOutput(); err == nil || !strings.Contains(string(out), "locked by alice") {
			t.Fatalf("carol's commit in a clone with lockgate's hooks: %v: %s", err, out)
		}
	}

	// bob skips every check on his side: his commit and push hooks
	// (git-lfs's pre-push among them), and git-lfs's lock verification.
	before := tip()
	edit(bob, "hero by bob\n", "bob's hero", "--no-verify")
	out, err = bob("push", "--no-verify", "origin", "main")
	refused("bob's push over HTTP", out, err, before)
	out, err = bob("push", "--no-verify", readURL, "main")
	refused("bob's push over git://", out, err, before)

	// alice's own push over git:// is anonymous: refused as well.
	edit(alice, "hero v2\n", "hero v2")
	out, err = alice("push", readURL, "main")
	refused("alice's push over git://", out, err, before)
	// Her login is not her worker's name: without trust.pushers (an
	// operator's policy in the repository's directory, which overrides
	// the committed one) she pushes as another worker.
	override := filepath.Join(bare, ".lockgate.yaml")
	if err := os.WriteFile(override, []byte("version: 1\n"+locksPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = alice("push", "origin", "main")
	refused("alice's push over HTTP, her login mapped to no worker", out, err, before)
	if err := os.Remove(override); err != nil {
		t.Fatal(err)
	}
	// Mapped, her login is her worker, and git-lfs's own check passes.
	if out, err := alice("push", "origin", "main"); err != nil {
		t.Fatalf("alice's push under her own lock: %v: %s", err, out)
	}
	if now, want := tip(), must(filepath.Join(root, "alice"), "rev-parse", "HEAD"); now != want {
		t.Fatalf("the server's main is %s after alice's push, want %s", now, want)
	}

	// Unlocked, bob's change (on top of alice's) goes in.
	if out, err := alice("lfs", "unlock", "art/hero.psd"); err != nil {
		t.Fatalf("alice's git lfs unlock: %v: %s", err, out)
	}
	for _, args := range [][]string{{"fetch", "-q", "origin"}, {"reset", "-q", "--hard", "origin/main"}} {
		if out, err := bob(args...); err != nil {
			t.Fatalf("bob's git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	edit(bob, "hero by bob\n", "bob's hero", "--no-verify")
	if out, err := bob("push", "--no-verify", "origin", "main"); err != nil {
		t.Fatalf("bob's push once alice unlocked: %v: %s", err, out)
	}
	if now, want := tip(), must(filepath.Join(root, "bob"), "rev-parse", "HEAD"); now != want {
		t.Fatalf("the server's main is %s after bob's push, want %s", now, want)
	}
	if !perBranch {
		return
	}

	// Per branch: alice's git-lfs lock, taken in her clone of main, holds
	// on main alone. bob's change of the file goes to a release branch,
	// past every check of his own; the same change to main is refused.
	if out, err := alice("pull", "-q", "origin", "main"); err != nil {
		t.Fatalf("alice's git pull: %v: %s", err, out)
	}
	if out, err := alice("lfs", "lock", "art/hero.psd"); err != nil {
		t.Fatalf("alice's git lfs lock: %v: %s", err, out)
	}
	if code, out := srv.run("operator", "lock", "list", "--json"); code != 0 || !strings.Contains(out, `"branch:main:art/hero.psd"`) {
		t.Fatalf("lock list in the server's repository: exit %d: %s, want alice's lock on main", code, out)
	}
	if out, err := bob("switch", "-q", "-c", "release"); err != nil {
		t.Fatalf("bob's git switch: %v: %s", err, out)
	}
	edit(bob, "hero on release\n", "bob's hero on release", "--no-verify")
	if out, err := bob("push", "--no-verify", "origin", "release"); err != nil {
		t.Fatalf("bob's push to release while alice holds the file on main: %v: %s", err, out)
	}
	if now, want := must(bare, "rev-parse", "refs/heads/release"), must(filepath.Join(root, "bob"), "rev-parse", "HEAD"); now != want {
		t.Fatalf("the server's release is %s after bob's push, want %s", now, want)
	}
	before = tip()
	out, err = bob("push", "--no-verify", "origin", "release:main")
	refused("bob's push of release to main", out, err, before)
}

// startServeSaying starts `lockgate serve` in c's repository as startServe
// does, and also returns what it said as it started: every line before the
// log line of its first request.
func startServeSaying(t *testing.T, c *cliRepo) (addr, said string) {
	t.Helper()
	cmd := c.cmd("server", "serve", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var start []string
	for addr == "" && lines.Scan() {
		start = append(start, lines.Text())
		if _, rest, ok := strings.Cut(lines.Text(), " on http://"); ok {
			addr, _, _ = strings.Cut(rest, " ")
		}
	}
	if addr == "" {
		t.Fatalf("lockgate serve said no address: %v\n%s", cmd.Wait(), strings.Join(start, "\n"))
	}
	// Ask /healthz until it answers; the server logs the first answer
	// after everything it says as it starts.
	ready := make(chan error, 1)
	go func() {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			res, err := http.Get("http://" + addr + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					ready <- nil
					return
				}
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				ready <- err
				return
			}
		}
	}()
	for lines.Scan() && !strings.Contains(lines.Text(), "GET /healthz") {
		start = append(start, lines.Text())
	}
	if err := <-ready; err != nil {
		t.Fatalf("/healthz never answered: %v\n%s", err, strings.Join(start, "\n"))
	}
	exited := make(chan error, 1)
	go func() {
		for lines.Scan() {
			t.Log("serve:", lines.Text())
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { stopServe(t, cmd, exited) })
	return addr, strings.Join(start, "\n")
}
