package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/service/lockops"
)

// lfsClones serves the server serve makes, recording every request,
// beside an origin on branches main and feature; clone makes a clone on
// a branch whose git-lfs talks to it as user, and sent is every request
// so far (METHOD URI BODY, one a line). The server is reached through
// the recorder, as through a proxy: serve is given the recorder's URL
// as a public URL of the server.
func lfsClones(t *testing.T, serve func(Options) *Server) (clone func(user, token, branch string) func(args ...string) (string, error), sent func() string) {
	t.Helper()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Fatal("git-lfs is not installed: `make test` installs it (apt-get install git-lfs)")
	}
	srv := httptest.NewUnstartedServer(nil)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := serve(Options{PublicURLs: []PublicURL{{Scheme: "http", Host: "127.0.0.1", Port: port}}})
	var (
		mu  sync.Mutex
		got []string
	)
	h := s.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+string(b))
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	origin := gittest.New(t)
	origin.Write("a.bin", "a\n")
	origin.Commit("init")
	origin.Git("branch", "feature")
	clone = func(user, token, branch string) func(args ...string) (string, error) {
		dir := filepath.Join(t.TempDir(), user)
		if out, err := exec.Command("git", "clone", "-q", "-b", branch, origin.Dir, dir).CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v: %s", err, out)
		}
		git := func(args ...string) (string, error) {
			cmd := exec.Command("git", args...)
			cmd.Dir, cmd.Env = dir, origin.Env
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		if out, err := git("config", "lfs.url", strings.Replace(srv.URL, "http://", "http://"+user+":"+token+"@", 1)+"/lfs"); err != nil {
			t.Fatalf("git config: %v: %s", err, out)
		}
		return git
	}
	sent = func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(got, "\n")
	}
	return clone, sent
}

// lfsStep runs git in a clone and wants it to fail or not, saying want.
func lfsStep(t *testing.T, git func(...string) (string, error), wantErr bool, want string, args ...string) {
	t.Helper()
	out, err := git(args...)
	if (err != nil) != wantErr || !strings.Contains(out, want) {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// TestGitLFSRefs drives git-lfs's client from clones on two branches:
// it names its branch with every lock, list, verify and unlock (ref,
// refspec), and without locks.per_branch a lock taken on one branch
// holds on the other.
func TestGitLFSRefs(t *testing.T) {
	t.Parallel()
	var tokens []string
	clone, sent := lfsClones(t, func(o Options) *Server {
		_, s, tk := storeServerOf(t, "file", 2, o, nil)
		tokens = tk
		return s
	})
	mainGit, featureGit := clone("u0", tokens[0], "main"), clone("u1", tokens[1], "feature")
	lfsStep(t, mainGit, false, "Locked a.bin", "lfs", "lock", "a.bin")
	lfsStep(t, featureGit, false, "a.bin\tu0", "lfs", "locks")
	lfsStep(t, featureGit, false, "a.bin\tu0", "lfs", "locks", "--verify")
	lfsStep(t, featureGit, true, "u0", "lfs", "lock", "a.bin")
	lfsStep(t, mainGit, false, "O a.bin\tu0", "lfs", "locks", "--verify")
	lfsStep(t, mainGit, false, "Unlocked a.bin", "lfs", "unlock", "a.bin")
	lfsStep(t, featureGit, false, "Locked a.bin", "lfs", "lock", "a.bin")

	all := sent()
	for _, want := range []string{
		`POST /lfs/locks {"path":"a.bin","ref":{"name":"refs/heads/main"}}`,
		`GET /lfs/locks?refspec=refs%2Fheads%2Ffeature `,
		`POST /lfs/locks/verify {"ref":{"name":"refs/heads/feature"}}`,
		`"ref":{"name":"refs/heads/main"}}`, // the unlock
	} {
		if !strings.Contains(all, want) {
			t.Errorf("git-lfs did not send %s; it sent:\n%s", want, all)
		}
	}
}

// TestGitLFSPerBranch: under locks.per_branch the ref git-lfs sends
// picks the branch a lock holds on. alice's lock on main does not stop
// bob on feature, nor shows in his `git lfs locks`; each branch's
// locks show on their own branch; a lock without a branch (taken with
// lockgate) still holds on both.
func TestGitLFSPerBranch(t *testing.T) {
	t.Parallel()
	var (
		s      *Server
		tokens []string
	)
	clone, sent := lfsClones(t, func(o Options) *Server {
		_, s, tokens = storeServerWith(t, "file", 3, o, nil, "per_branch: true")
		return s
	})
	alice, bob := clone("u0", tokens[0], "main"), clone("u1", tokens[1], "feature")
	carol := clone("u2", tokens[2], "main")
	lfsStep(t, alice, false, "Locked a.bin", "lfs", "lock", "a.bin")
	if out, _ := bob("lfs", "locks"); strings.Contains(out, "a.bin") {
		t.Fatalf("bob on feature sees main's lock: %s", out)
	}
	lfsStep(t, bob, false, "Locked a.bin", "lfs", "lock", "a.bin")
	lfsStep(t, carol, true, "u0", "lfs", "lock", "a.bin") // main's is alice's
	lfsStep(t, alice, false, "O a.bin\tu0", "lfs", "locks", "--verify")
	out, err := bob("lfs", "locks", "--verify")
	if err != nil || !strings.Contains(out, "O a.bin\tu1") || strings.Contains(out, "u0") {
		t.Fatalf("bob's verify on feature: %v: %s", err, out)
	}
	// The JSON answer names the branch; git-lfs itself drops it.
	if !strings.Contains(sent(), `POST /lfs/locks {"path":"a.bin","ref":{"name":"refs/heads/feature"}}`) {
		t.Fatalf("git-lfs sent no ref for feature:\n%s", sent())
	}
	if out, err := bob("lfs", "unlock", "a.bin"); err != nil {
		t.Fatalf("%v: %s\n%s", err, out, sent())
	}
	lfsStep(t, alice, false, "Unlocked a.bin", "lfs", "unlock", "a.bin")

	// A lock without a branch holds on both.
	if _, err := s.e.Locks().Acquire(context.Background(), lockops.AcquireRequest{Keys: []string{"a.bin"}}); err != nil {
		t.Fatal(err)
	}
	lfsStep(t, bob, true, "server", "lfs", "lock", "a.bin")
	lfsStep(t, alice, true, "server", "lfs", "lock", "a.bin")
	lfsStep(t, bob, false, "a.bin\tserver", "lfs", "locks")
}

// TestLFSRefRefused: a ref that is not a full git ref name is refused
// (422), on each request that carries one.
func TestLFSRefRefused(t *testing.T) {
	t.Parallel()
	srv, tokens := storeServer(t, "file", 1, Options{}, nil)
	for _, bad := range []string{"main", "refs/heads/a..b", "refs/heads/x.lock", "refs/heads/ a", "refs/heads/a\x01", "refs/heads/", "refs/heads/@{1}", "refs/heads/.hidden"} {
		ref := `{"name":` + jsonString(bad) + `}`
		for _, req := range [][3]string{
			{"POST", "/lfs/locks", `{"path":"a.bin","ref":` + ref + `}`},
			{"POST", "/lfs/locks/verify", `{"ref":` + ref + `}`},
			{"POST", "/lfs/locks/0000/unlock", `{"ref":` + ref + `}`},
			{"GET", "/lfs/locks?refspec=" + urlQuery(bad), ""},
		} {
			status, body, err := send(srv, req[0], req[1], "u0", tokens[0], req[2])
			if err != nil || status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "not a full git ref name") {
				t.Errorf("%s %s %s: %d %v %s", req[0], req[1], req[2], status, err, body)
			}
		}
	}
	if status, body, err := send(srv, "GET", "/lfs/locks", "u0", tokens[0], ""); err != nil || status != http.StatusOK || strings.Contains(string(body), "a.bin") {
		t.Fatalf("a lock was taken with a refused ref: %d %v %s", status, err, body)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

func urlQuery(s string) string { return url.QueryEscape(s) }
