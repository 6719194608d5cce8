package main

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/browsertest"
)

// TestServeWebBoard opens the web board of `lockgate serve --public-read`
// in a real headless chromium: a lock taken with the command line shows
// with its holder and its reason as text (a reason written as markup
// stays characters), the page read without credentials shows no clear
// button, a lock taken while the page is open appears without a reload,
// and the server still stops on SIGTERM with the page's stream open
// (startServe's cleanup requires exit 0 within its deadline).
func TestServeWebBoard(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	c.repo.Write("src/a.go", "package a\n")
	c.repo.Write("src/b.go", "package b\n")
	if code, out := c.run("admin", "init"); code != 0 {
		t.Fatalf("lockgate init: exit %d: %s", code, out)
	}
	c.repo.Git("add", "-A")
	c.repo.Git("commit", "-qm", "init")
	hostile := "<img src=x onerror=alert(1)>"
	if code, out := c.run("alice", "lock", "acquire", "src/a.go", "--reason", hostile); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	addr := startServe(t, c, "--public-read")
	p := browsertest.Open(t, "http://"+addr+"/", browsertest.Options{})
	p.WaitFor(`[...document.querySelectorAll("#locks td.key")].some(td => td.textContent === "src/a.go")`)
	dom := p.DOM()
	for _, want := range []string{`<td class="holder">alice</td>`, `&lt;img src=x onerror=alert(1)&gt;`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the board lacks %s:\n%s", want, dom)
		}
	}
	if n := string(p.Eval(`document.querySelectorAll("img").length`)); n != "0" {
		t.Errorf("the reason became markup: %s img elements", n)
	}
	// Read without credentials, the page may not clear.
	p.WaitFor(`document.getElementById("locks").dataset.session === "read-only"`)
	if n := string(p.Eval(`document.querySelectorAll("#locks button").length`)); n != "0" {
		t.Errorf("a page read without credentials shows %s clear buttons", n)
	}
	if code, out := c.run("bob", "lock", "acquire", "src/b.go", "--reason", "live"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	p.WaitFor(`[...document.querySelectorAll("#locks td.holder")].some(td => td.textContent === "bob")`)
}

// TestServeWebBoardClear clears a lock from the web board of `lockgate
// serve` in a real headless chromium, signed in as bob, an admin: the confirmation
// is answered yes, the lock leaves the page and the store, and the
// journal records bob's lock_clear.
func TestServeWebBoardClear(t *testing.T) {
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
	if code, out := c.run("alice", "lock", "acquire", "src/a.go", "--reason", "refactor"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	addr := startServe(t, c)
	// A URL's user:password reaches the page but not its fetch() (a
	// relative URL resolved against it is refused): the header carries them.
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:"+token))
	p := browsertest.Open(t, "http://"+addr+"/", browsertest.Options{Headers: map[string]string{"Authorization": basic}})
	p.WaitFor(`document.querySelector("#locks td.clear button") !== null`)
	p.Eval(`window.confirm = (text) => { window.asked = text; return true; };
		document.querySelector("#locks td.clear button").click();`)
	p.WaitFor(`document.getElementById("no-locks").hidden === false`)
	if asked := string(p.Eval(`window.asked`)); !strings.Contains(asked, "src/a.go") || !strings.Contains(asked, "alice") {
		t.Errorf("the confirmation %s does not name the key and its holder", asked)
	}
	if code, out := c.runOut("bob", "lock", "list", "--json"); code != 0 || strings.Contains(out, "src/a.go") {
		t.Errorf("lock list --json: exit %d, still the lock: %s", code, out)
	}
	code, out = c.runOut("bob", "log", "--json")
	if code != 0 {
		t.Fatalf("log --json: exit %d: %s", code, out)
	}
	var events []struct{ Worker, Action, Key string }
	if err := json.Unmarshal([]byte(out), &events); err != nil {
		t.Fatalf("log --json: %v: %s", err, out)
	}
	cleared := false
	for _, ev := range events {
		cleared = cleared || ev.Action == "lock_clear" && ev.Worker == "bob" && ev.Key == "src/a.go"
	}
	if !cleared {
		t.Errorf("the log has no lock_clear of src/a.go by bob:\n%s", out)
	}
}
