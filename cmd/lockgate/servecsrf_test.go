package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/browsertest"
)

// hostileForm is a page that, once loaded, posts a text/plain form to
// action whose body is the JSON object body: the form's one field is
// named body up to its last `"`, and its value closes it, so that the
// browser sends NAME=VALUE, `{…,"x":"="}`.
func hostileForm(action, body string) string {
	name, value := strings.TrimSuffix(body, "}")+`,"x":"`, `"}`
	return fmt.Sprintf(`<!doctype html><form method="POST" enctype="text/plain" action="%s"><input type="hidden" name="%s" value="%s"></form>`+
		`<script>document.forms[0].submit()</script>`, html.EscapeString(action), html.EscapeString(name), html.EscapeString(value))
}

// TestServeRefusesHostilePages opens, in a real headless chromium signed
// in to `lockgate serve` as bob, an admin, who may clear anyone's lock
// (its every request carries bob's credentials, as a browser that was
// given them sends them), a page of
// another site that posts text/plain forms to the server: one force-
// unlocks alice's lock through git-lfs's API, one takes a lock through
// the JSON API. Each post reaches the server, which logs its refusal
// (403: from another site), and the locks are as they were.
func TestServeRefusesHostilePages(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.repo.Write("src/a.go", "package a\n")
	if code, out := c.run("admin", "init"); code != 0 {
		t.Fatalf("lockgate init: exit %d: %s", code, out)
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-qm", "init")
	code, out := c.run("admin", "serve", "user", "add", "bob", "--admin")
	if code != 0 {
		t.Fatalf("serve user add bob: exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	if code, out := c.run("alice", "lock", "acquire", "src/a.go"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	addr, logged := startServeLogged(t, c)
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:"+token))

	// The lock's id, as any user reads it.
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/lfs/locks?path=src/a.go", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", basic)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Locks []struct{ ID string } `json:"locks"`
	}
	err = json.NewDecoder(res.Body).Decode(&listed)
	res.Body.Close()
	if err != nil || len(listed.Locks) != 1 {
		t.Fatalf("GET /lfs/locks?path=src/a.go: %v %+v", err, listed)
	}
	unlock := "/lfs/locks/" + listed.Locks[0].ID + "/unlock"

	// The hostile site: localhost, where the server is 127.0.0.1, so
	// another site to the browser.
	pages := map[string]string{
		"/unlock":  hostileForm("http://"+addr+unlock, `{"force":true}`),
		"/acquire": hostileForm("http://"+addr+"/api/v1/locks", `{"keys":["src/b.go"]}`),
	}
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(pages[r.URL.Path]))
	}))
	t.Cleanup(hostile.Close)
	site := strings.Replace(hostile.URL, "127.0.0.1", "localhost", 1)

	p := browsertest.Open(t, site+"/unlock", browsertest.Options{Headers: map[string]string{"Authorization": basic}})
	refused := func(path string) {
		t.Helper()
		prefix := "lockgate: POST " + path + " "
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			for _, l := range logged() {
				if rest, ok := strings.CutPrefix(l, prefix); ok {
					// 403: the browser says the post comes from another site.
					if !strings.HasPrefix(rest, "403 ") {
						t.Errorf("the hostile post was not refused as another site's: %s", l)
					}
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the hostile post to %s never reached the server; its log:\n%s", path, strings.Join(logged(), "\n"))
			}
		}
	}
	refused(unlock)
	p.Eval(`location.href = ` + jsString(site+"/acquire"))
	refused("/api/v1/locks")

	code, out = c.runOut("viewer", "lock", "list", "--json")
	if code != 0 {
		t.Fatalf("lock list --json: exit %d: %s", code, out)
	}
	var rows []struct{ Key, Holder string }
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("lock list --json: %v: %s", err, out)
	}
	if len(rows) != 1 || rows[0].Key != "src/a.go" || rows[0].Holder != "alice" {
		t.Errorf("the locks after the hostile posts: %+v, want alice's src/a.go alone", rows)
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
