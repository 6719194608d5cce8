package main

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestServeRateFlags: --rate-limit and --rate-burst set each user's
// bucket, and values that could admit nothing are refused (exit 2).
func TestServeRateFlags(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate-limit", "-1"}, "give requests a second, 0 or more"},
		{[]string{"--rate-limit", "NaN"}, "give requests a second, 0 or more"},
		{[]string{"--rate-burst", "0"}, "give at least 1 request"},
		{[]string{"--rate-limit", "fast"}, "rate-limit"},
	} {
		args := append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)
		if code, out := c.run("server", args...); code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("lockgate %s: exit %d, want 2 saying %q: %s", strings.Join(args, " "), code, tc.want, out)
		}
	}
	code, out := c.run("admin", "serve", "user", "add", "alice")
	if code != 0 {
		t.Fatalf("serve user add: exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	addr := startServe(t, c, "--rate-limit", "0.01", "--rate-burst", "2")
	get := func() *http.Response {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/locks", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("alice", token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	for i := range 2 {
		if res := get(); res.StatusCode != http.StatusOK {
			t.Fatalf("request %d within the burst: %d", i+1, res.StatusCode)
		}
	}
	// 0.01 a second: the next request is 100 s away, less what refilled
	// since the burst.
	res := get()
	if after, err := strconv.Atoi(res.Header.Get("Retry-After")); res.StatusCode != http.StatusTooManyRequests || err != nil || after < 50 || after > 100 {
		t.Fatalf("past the burst: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
}
