package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeLFSManyLocksOnePage: with 1,200 locks, `git lfs locks` and
// `git lfs locks --verify` (Debian's git-lfs, which sends no limit) get
// every lock in one answer, one request each; a client that asks for
// pages walks them with the cursors the server gives; and a cursor the
// server did not give, an offset of earlier versions among them, is
// refused with 422 and says why.
func TestServeLFSManyLocksOnePage(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git-lfs"); err != nil {
		t.Fatal("git-lfs is not installed: `make test` installs it (apt-get install git-lfs)")
	}
	const n = 1200
	c := newCLIRepo(t)
	c.repo.Write(".lockgate.yaml", "version: 1\nworkflow: {auto_commit: false, auto_push: false}\n")
	c.repo.Commit("init")
	code, out := c.run("admin", "serve", "user", "add", "dana")
	if code != 0 {
		t.Fatalf("serve user add: exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("art/f%05d.psd", i)
	}
	if code, out := c.run("carol", append([]string{"lock", "acquire"}, keys...)...); code != 0 {
		t.Fatalf("lock acquire of %d keys: exit %d: %s", n, code, out[:min(len(out), 2000)])
	}
	if code, out := c.run("dana", "lock", "acquire", "art/mine.psd"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	addr := startServe(t, c)

	dir := filepath.Join(t.TempDir(), "dana")
	if out, err := exec.Command("git", "clone", "-q", c.repo.Dir, dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v: %s", err, out)
	}
	// GIT_TRACE: git-lfs names each HTTP request it sends.
	git := func(args ...string) (stdout, trace string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, append(append([]string(nil), c.repo.Env...), "GIT_TRACE=1")
		var errb strings.Builder
		cmd.Stderr = &errb
		o, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return string(o), errb.String()
	}
	git("config", "lfs.url", "http://dana:"+token+"@"+addr+"/lfs")
	requests := func(trace, what string) int { return strings.Count(trace, "HTTP: "+what+" ") }

	stdout, trace := git("lfs", "locks", "--json")
	var listed []struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal([]byte(stdout), &listed); err != nil {
		t.Fatalf("git lfs locks --json: %v: %.300s", err, stdout)
	}
	paths := map[string]bool{}
	for _, l := range listed {
		paths[l.Path] = true
	}
	if len(listed) != n+1 || len(paths) != n+1 {
		t.Errorf("git lfs locks listed %d locks on %d paths, want %d", len(listed), len(paths), n+1)
	}
	if got := requests(trace, "GET"); got != 1 {
		t.Errorf("git lfs locks sent %d GET requests, want 1 answer with every lock", got)
	}

	stdout, trace = git("lfs", "locks", "--verify", "--json")
	var verified struct {
		Ours   []json.RawMessage `json:"ours"`
		Theirs []json.RawMessage `json:"theirs"`
	}
	if err := json.Unmarshal([]byte(stdout), &verified); err != nil || len(verified.Ours) != 1 || len(verified.Theirs) != n {
		t.Errorf("git lfs locks --verify: %d ours, %d theirs, %v; want 1 and %d", len(verified.Ours), len(verified.Theirs), err, n)
	}
	if got := requests(trace, "POST"); got != 1 {
		t.Errorf("git lfs locks --verify sent %d POST requests, want 1", got)
	}

	get := func(query string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/lfs/locks?"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("dana", token)
		req.Header.Set("Accept", "application/vnd.git-lfs+json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("GET /lfs/locks?%s: %s: %v: %.300s", query, res.Status, err, body)
		}
		return res.StatusCode, v
	}
	seen := map[string]bool{}
	pages := 0
	for cursor := ""; ; pages++ {
		status, v := get("limit=500&cursor=" + url.QueryEscape(cursor))
		ls, _ := v["locks"].([]any)
		if status != http.StatusOK || len(ls) > 500 {
			t.Fatalf("page %d: %d, %d locks: %v", pages, status, len(ls), v["message"])
		}
		for _, l := range ls {
			p := l.(map[string]any)["path"].(string)
			if seen[p] {
				t.Errorf("page %d lists %s again", pages, p)
			}
			seen[p] = true
		}
		next, _ := v["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != n+1 || pages != 2 {
		t.Errorf("pages of 500 gave %d locks in %d pages after the first; want %d in 2", len(seen), pages, n+1)
	}

	for _, tc := range []struct{ cursor, says string }{
		{"100", "is an offset"},
		{"not-a-cursor!", "not one this server gave"},
		{strings.Repeat("A", 5000), "not one this server gave"},
	} {
		status, v := get("cursor=" + url.QueryEscape(tc.cursor))
		if msg, _ := v["message"].(string); status != http.StatusUnprocessableEntity || !strings.Contains(msg, tc.says) || !strings.Contains(msg, "without a cursor") {
			t.Errorf("cursor %.20q: %d %q; want 422 saying %q", tc.cursor, status, msg, tc.says)
		}
	}
}
