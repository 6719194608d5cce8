package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/redistest"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/serveusers"
)

// storeServer is a server on a fresh repository whose locks are in store
// ("file", "redis" or "git"; with "+workflow" each event is committed to
// the workflow branch too), with users u0…u(n-1), their tokens in order;
// env is the server's environment.
func storeServer(t testing.TB, store string, n int, opts Options, env map[string]string) (*httptest.Server, []string) {
	srv, _, tokens := storeServerOf(t, store, n, opts, env)
	return srv, tokens
}

// storeServerOf is storeServer and its Server.
func storeServerOf(t testing.TB, store string, n int, opts Options, env map[string]string) (*httptest.Server, *Server, []string) {
	t.Helper()
	return storeServerWith(t, store, n, opts, env, "")
}

// storeServerWith is storeServerOf with locks settings of the policy
// besides the store (a YAML flow mapping's inside, e.g. "per_branch: true").
func storeServerWith(t testing.TB, store string, n int, opts Options, env map[string]string, lockSettings string) (*httptest.Server, *Server, []string) {
	t.Helper()
	if lockSettings != "" {
		lockSettings = ", " + lockSettings
	}
	ctx := context.Background()
	r := gittest.New(t)
	if env == nil {
		env = map[string]string{}
	}
	store, workflow, _ := strings.Cut(store, "+")
	switch store {
	case "redis":
		env["LOCK_REDIS_URL"] = redistest.Start(t, redistest.Options{}).URL()
	case "git":
		origin := filepath.Join(t.TempDir(), "origin.git")
		if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", origin).CombinedOutput(); err != nil {
			t.Fatalf("git init --bare: %v: %s", err, out)
		}
		r.Git("remote", "add", "origin", origin)
	}
	r.Write(".lockgate.yaml", fmt.Sprintf("version: 1\nlocks: {store: %s%s}\nworkflow: {auto_commit: %t}\n", store, lockSettings, workflow != ""))
	r.Write("a.bin", "a\n")
	r.Commit("init")
	if store == "git" {
		r.Git("push", "-q", "origin", "main")
	}
	e, err := service.Load(ctx, service.Options{Dir: r.Dir, As: "server", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := e.Open(ctx, service.Purpose{TakesLocks: true, Server: true}); err != nil {
		t.Fatal(err)
	}
	srv, s := startServerOf(t, e, opts)
	tokens := make([]string, n)
	for i := range tokens {
		res, err := e.Users().Add(serveusers.AddRequest{Name: fmt.Sprintf("u%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		tokens[i] = res.Token
	}
	return srv, s, tokens
}

// send is one request as user and its status and body; an error is the
// connection's.
func send(srv *httptest.Server, method, path, user, token, body string) (int, []byte, error) {
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if user != "" {
		req.SetBasicAuth(user, token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// TestConcurrentClientsRaceForKeys has many clients, each its own user,
// race through one server for a few keys, half through the JSON API (with
// a wait) and half through the git-lfs API (retrying a 409): at no moment
// do two clients hold one key, every grant the clients saw is one
// lock_acquire and one lock_release in the log, and no lock is left.
func TestConcurrentClientsRaceForKeys(t *testing.T) {
	for _, store := range []string{"file", "file+workflow", "redis", "git"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			const clients = 8
			// A share of the full rounds (LOCKGATE_TEST_ROUNDS; `make
			// stress` runs them all).
			rounds := gittest.Rounds(t, 8)
			keys := []string{"art/a.psd", "art/b.psd", "env:staging"}
			srv, tokens := storeServer(t, store, clients, Options{}, nil)
			var (
				holders [3]atomic.Int32
				grants  [3]atomic.Int32
				wg      sync.WaitGroup
			)
			errs := make(chan error, clients)
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					user := fmt.Sprintf("u%d", c)
					for i := range rounds {
						k := (c + i) % len(keys)
						if err := holdOnce(srv, user, tokens[c], keys[k], c%2 == 0 && !strings.HasPrefix(keys[k], "env:"), &holders[k]); err != nil {
							errs <- fmt.Errorf("%s round %d on %s: %w", user, i, keys[k], err)
							return
						}
						grants[k].Add(1)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if t.Failed() {
				return
			}
			status, body, err := send(srv, "GET", "/api/v1/locks", "u0", tokens[0], "")
			if err != nil || status != http.StatusOK || strings.TrimSpace(string(body)) != "[]" {
				t.Fatalf("locks left: %d %v %s", status, err, body)
			}
			status, body, err = send(srv, "GET", "/api/v1/events", "u0", tokens[0], "")
			if err != nil || status != http.StatusOK {
				t.Fatalf("events: %d %v %s", status, err, body)
			}
			var evs []struct{ Action, Key, Worker string }
			if err := json.Unmarshal(body, &evs); err != nil {
				t.Fatal(err)
			}
			for k, key := range keys {
				count := map[string]int{}
				for _, ev := range evs {
					if ev.Key == key {
						count[ev.Action]++
					}
				}
				want := int(grants[k].Load())
				if count["lock_acquire"] != want || count["lock_release"] != want || len(count) != 2 {
					t.Errorf("%s: %d grants seen by the clients, events %v", key, want, count)
				}
			}
		})
	}
}

// holdOnce takes key as user (through the git-lfs API when lfs, else the
// JSON API with a wait), checks that no other client holds it meanwhile,
// and releases it.
func holdOnce(srv *httptest.Server, user, token, key string, lfs bool, holders *atomic.Int32) error {
	deadline := time.Now().Add(2 * time.Minute)
	var unlock func() (int, []byte, error)
	for {
		if time.Now().After(deadline) {
			return fmt.Errorf("not granted in 2 minutes")
		}
		if lfs {
			status, body, err := send(srv, "POST", "/lfs/locks", user, token, fmt.Sprintf(`{"path":%q}`, key))
			if err != nil {
				return err
			}
			if status == http.StatusConflict {
				time.Sleep(time.Millisecond)
				continue
			}
			var got struct{ Lock struct{ ID, Path string } }
			if status != http.StatusCreated || json.Unmarshal(body, &got) != nil || got.Lock.Path != key {
				return fmt.Errorf("git lfs lock: %d %s", status, body)
			}
			unlock = func() (int, []byte, error) {
				return send(srv, "POST", "/lfs/locks/"+got.Lock.ID+"/unlock", user, token, "{}")
			}
			break
		}
		status, body, err := send(srv, "POST", "/api/v1/locks", user, token, fmt.Sprintf(`{"keys":[%q],"wait":"20s"}`, key))
		if err != nil {
			return err
		}
		if status == http.StatusConflict {
			continue // the wait ran out: ask again
		}
		if status != http.StatusOK || strings.Contains(string(body), `"renewed":true`) {
			return fmt.Errorf("acquire: %d %s", status, body)
		}
		unlock = func() (int, []byte, error) { return send(srv, "DELETE", "/api/v1/locks/"+key, user, token, "") }
		break
	}
	if n := holders.Add(1); n != 1 {
		return fmt.Errorf("granted while %d other clients hold it", n-1)
	}
	time.Sleep(time.Millisecond)
	holders.Add(-1)
	status, body, err := unlock()
	if err != nil {
		return err
	}
	if status != http.StatusOK || (!lfs && !strings.Contains(string(body), `"released":[{`)) {
		return fmt.Errorf("release: %d %s", status, body)
	}
	return nil
}

// TestWaitEndsOnAnotherRequestsRelease: a request waiting for a key is
// granted it when another request to the same server releases it, the
// requests being answered at once, not in turn.
func TestWaitEndsOnAnotherRequestsRelease(t *testing.T) {
	t.Parallel()
	srv, tokens := storeServer(t, "file", 2, Options{}, nil)
	if status, body, err := send(srv, "POST", "/api/v1/locks", "u0", tokens[0], `{"keys":["art/a.psd"]}`); err != nil || status != http.StatusOK {
		t.Fatalf("u0 acquire: %d %v %s", status, err, body)
	}
	type answer struct {
		status int
		body   []byte
		err    error
	}
	waited := make(chan answer, 1)
	go func() {
		status, body, err := send(srv, "POST", "/api/v1/locks", "u1", tokens[1], `{"keys":["art/a.psd"],"wait":"25s"}`)
		waited <- answer{status, body, err}
	}()
	// The release goes out once the waiter is in (its 409 would end the
	// test otherwise); a release before the wait starts grants it too.
	time.Sleep(200 * time.Millisecond)
	released := make(chan answer, 1)
	go func() {
		status, body, err := send(srv, "DELETE", "/api/v1/locks/art/a.psd", "u0", tokens[0], "")
		released <- answer{status, body, err}
	}()
	// A waiter answered before the release (its wait refused, 409) fails
	// below; one granted because it came after the release is fine, and
	// both answers may be in by the time they are read.
	rel := <-released
	if rel.err != nil || rel.status != http.StatusOK {
		t.Fatalf("u0 release: %d %v %s", rel.status, rel.err, rel.body)
	}
	a := <-waited
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(string(a.body), `"holder":"u1"`) {
		t.Fatalf("u1's wait: %d %v %s", a.status, a.err, a.body)
	}
}
