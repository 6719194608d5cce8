package main

import (
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/browsertest"
)

// TestServeWebBoard opens the web board of `lockgate serve --public-read`
// in a real headless chromium: a lock taken with the command line shows
// with its holder and its reason as text (a reason written as markup
// stays characters), a lock taken while the page is open appears without
// a reload, and the server still stops on SIGTERM with the page's stream
// open (startServe's cleanup requires exit 0 within its deadline).
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
	if code, out := c.run("bob", "lock", "acquire", "src/b.go", "--reason", "live"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	p.WaitFor(`[...document.querySelectorAll("#locks td.holder")].some(td => td.textContent === "bob")`)
}
