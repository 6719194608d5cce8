package httpserver

import (
	"bytes"
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
)

// TestGitLFSRefs drives git-lfs's client from clones on two branches:
// it names its branch with every lock, list, verify and unlock (ref,
// refspec), and a lock taken on one branch holds on the other, since
// lockgate locks are not per branch.
func TestGitLFSRefs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Fatal("git-lfs is not installed: `make test` installs it (apt-get install git-lfs)")
	}
	// The server is reached through a recorder in front of it, as
	// through a proxy: the recorder's URL is a public URL of the server.
	srv := httptest.NewUnstartedServer(nil)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, s, tokens := storeServerOf(t, "file", 2, Options{PublicURLs: []PublicURL{{Scheme: "http", Host: "127.0.0.1", Port: port}}}, nil)
	var (
		mu   sync.Mutex
		sent []string // METHOD URI BODY of each request
	)
	h := s.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		mu.Lock()
		sent = append(sent, r.Method+" "+r.URL.RequestURI()+" "+string(b))
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	origin := gittest.New(t)
	origin.Write("a.bin", "a\n")
	origin.Commit("init")
	origin.Git("branch", "feature")
	clone := func(user, token, branch string) func(args ...string) (string, error) {
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
	mainGit, featureGit := clone("u0", tokens[0], "main"), clone("u1", tokens[1], "feature")
	step := func(git func(...string) (string, error), wantErr bool, want string, args ...string) {
		t.Helper()
		out, err := git(args...)
		if (err != nil) != wantErr || !strings.Contains(out, want) {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	step(mainGit, false, "Locked a.bin", "lfs", "lock", "a.bin")
	step(featureGit, false, "a.bin\tu0", "lfs", "locks")
	step(featureGit, false, "a.bin\tu0", "lfs", "locks", "--verify")
	step(featureGit, true, "u0", "lfs", "lock", "a.bin")
	step(mainGit, false, "O a.bin\tu0", "lfs", "locks", "--verify")
	step(mainGit, false, "Unlocked a.bin", "lfs", "unlock", "a.bin")
	step(featureGit, false, "Locked a.bin", "lfs", "lock", "a.bin")

	all := strings.Join(sent, "\n")
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
