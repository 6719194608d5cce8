package browsertest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDumpDOMRunsScripts loads a page whose script writes the text the
// test looks for: the DOM returned is the one the script left.
func TestDumpDOMRunsScripts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/s.js" {
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, `setTimeout(() => { document.getElementById("out").textContent = "written " + location.hash; }, 500);`)
			return
		}
		fmt.Fprint(w, `<!DOCTYPE html><html><body><p id="out">empty</p><script src="/s.js"></script></body></html>`)
	}))
	defer srv.Close()
	dom := DumpDOM(t, srv.URL+"/#x=1", Options{})
	if !strings.Contains(dom, `<p id="out">written #x=1</p>`) {
		t.Fatalf("the DOM does not show the script's text:\n%s", dom)
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
