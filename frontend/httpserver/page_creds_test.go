package httpserver

import (
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/browsertest"
)

// TestBoardOpenedWithCredentialsInURL: the board opened in headless
// chromium at http://NAME:TOKEN@host/ (the form the start banner gives)
// reads the board, signs in and shows the clear buttons, and no read
// fails: every request of the page is built without the credentials,
// which fetch refuses in a URL.
func TestBoardOpenedWithCredentialsInURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	if status, _, body := apiDo(t, f.srv, "POST", "/api/v1/locks", f.alice, `{"keys":["a.bin"]}`); status != 200 {
		t.Fatalf("acquire: %d %v", status, body)
	}
	withCreds := strings.Replace(f.srv.URL, "http://", "http://bob:"+f.bob+"@", 1) + "/"
	p := browsertest.Open(t, withCreds, browsertest.Options{})
	p.WaitFor(`document.querySelectorAll("#locks tbody tr").length > 0`)
	p.WaitFor(`document.getElementById("locks").dataset.session !== undefined`)
	if got := string(p.Eval(`document.getElementById("locks").dataset.session`)); got != `"signed-in"` {
		t.Fatalf("the page opened with credentials is %s, want signed-in; status %s", got, p.Eval(`document.getElementById("status").textContent`))
	}
	p.WaitFor(`document.querySelectorAll("#locks tbody td.clear button").length === 1`)
	if got := string(p.Eval(`document.getElementById("status").textContent`)); strings.Contains(got, "cannot") {
		t.Errorf("status %s: a read failed", got)
	}
}
