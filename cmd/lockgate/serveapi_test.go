package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
)

// TestServeJSONAPI drives `lockgate serve`'s JSON API as a program would:
// a lock taken through POST /api/v1/locks as alice is hers in `lockgate
// lock list --json` and in GET /api/v1/locks, bob's commit of the file is
// refused by the pre-commit hook, DELETE releases it, and the release is
// an event of GET /api/v1/events.
func TestServeJSONAPI(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.repo.Write("art/model.bin", "model\n")
	for _, args := range [][]string{{"init"}, {"install"}} {
		if code, out := c.run("admin", args...); code != 0 {
			t.Fatalf("lockgate %s: exit %d: %s", args[0], code, out)
		}
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-qm", "init")
	code, out := c.run("admin", "serve", "user", "add", "alice", "--type", "agent")
	if code != 0 {
		t.Fatalf("serve user add: exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	alice := lines[len(lines)-1]
	addr := startServe(t, c)

	call := func(method, path, body string, into any) int {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("alice", alice)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
		return res.StatusCode
	}
	type lock struct {
		Key        string `json:"key"`
		Holder     string `json:"holder"`
		HolderType string `json:"holder_type"`
		Reason     string `json:"reason"`
	}
	var taken []map[string]any
	if status := call("POST", "/api/v1/locks", `{"keys":["art/model.bin"],"ttl":"20m","reason":"retopology"}`, &taken); status != 200 || len(taken) != 1 {
		t.Fatalf("POST /api/v1/locks: %d %v", status, taken)
	}

	var listed, served []lock
	code, out = c.runOut("viewer", "lock", "list", "--json")
	if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil {
		t.Fatalf("lock list --json: exit %d, %v: %s", code, err, out)
	}
	if status := call("GET", "/api/v1/locks", "", &served); status != 200 {
		t.Fatalf("GET /api/v1/locks: %d", status)
	}
	want := lock{Key: "art/model.bin", Holder: "alice", HolderType: "agent", Reason: "retopology"}
	for name, got := range map[string][]lock{"lock list --json": listed, "GET /api/v1/locks": served} {
		if len(got) != 1 || got[0] != want {
			t.Fatalf("%s = %+v, want %+v", name, got, want)
		}
	}

	c.repo.Write("art/model.bin", "changed\n")
	c.repo.Git("add", "art/model.bin")
	commit := exec.Command("git", "commit", "-qm", "bob's change")
	commit.Dir, commit.Env = c.repo.Dir, append(append([]string(nil), c.repo.Env...), "LOCKGATE_WORKER=bob")
	if out, err := commit.CombinedOutput(); err == nil || !strings.Contains(string(out), "locked by alice") {
		t.Fatalf("bob's commit of alice's lock: %v: %s", err, out)
	}

	var released struct {
		Released []struct {
			Key string `json:"key"`
		} `json:"released"`
	}
	if status := call("DELETE", "/api/v1/locks/art/model.bin", "", &released); status != 200 || len(released.Released) != 1 {
		t.Fatalf("DELETE /api/v1/locks/art/model.bin: %d %+v", status, released)
	}
	var events []struct {
		Worker string `json:"worker"`
		Action string `json:"action"`
		Key    string `json:"key"`
	}
	if status := call("GET", "/api/v1/events?key=art/model.bin&limit=1", "", &events); status != 200 || len(events) != 1 ||
		events[0].Worker != "alice" || events[0].Action != "lock_release" {
		t.Fatalf("GET /api/v1/events: %d %+v", status, events)
	}
}

// TestServeTLSFlags: --tls-cert and --tls-key go together, and files that
// are no certificate and key are refused before anything is served.
func TestServeTLSFlags(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.repo.Write("cert.pem", "not a certificate\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "cert.pem"}, "give --tls-cert and --tls-key together, or neither"},
		{[]string{"--tls-key", "cert.pem"}, "give --tls-cert and --tls-key together, or neither"},
		{[]string{"--tls-cert", "cert.pem", "--tls-key", "cert.pem"}, "the TLS certificate and key"},
	} {
		args := append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)
		if code, out := c.run("server", args...); code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("lockgate %s: exit %d, want 2 saying %q: %s", strings.Join(args, " "), code, tc.want, out)
		}
	}
}
