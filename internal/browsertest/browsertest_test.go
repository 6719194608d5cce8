package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPageRunsScripts loads a page whose script writes, after a while,
// the text the test waits for; a click runs the page's handler; the DOM
// returned is the one the script left.
func TestPageRunsScripts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/s.js" {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `setTimeout(() => { document.getElementById("out").textContent = "written " + location.hash; }, 300);
document.getElementById("b").addEventListener("click", () => { document.getElementById("out").textContent = "clicked"; });`)
			return
		}
		fmt.Fprint(w, `<!DOCTYPE html><html><body><p id="out">empty</p><button id="b">b</button><script src="/s.js"></script></body></html>`)
	}))
	defer srv.Close()
	p := Open(t, srv.URL+"/#x=1", Options{})
	p.WaitFor(`document.getElementById("out").textContent !== "empty"`)
	if dom := p.DOM(); !strings.Contains(dom, `<p id="out">written #x=1</p>`) {
		t.Fatalf("the DOM does not show the script's text:\n%s", dom)
	}
	p.Eval(`document.getElementById("b").click()`)
	if got := string(p.Eval(`document.getElementById("out").textContent`)); got != `"clicked"` {
		t.Fatalf("after the click the text is %s", got)
	}
}

// TestPathNamesTheInstall: with no chromium on PATH the error says how to
// install it, for the test that fails on it.
func TestPathNamesTheInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Path()
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y chromium") {
		t.Fatalf("Path() with an empty PATH = %v, want an error naming the install", err)
	}
}
