package webboard

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/browsertest"
	"github.com/lockgate/lockgate/model/locks"
)

// rowsShown is the script expression that holds once the locks table has
// rows.
const rowsShown = `document.querySelectorAll("#locks tbody tr").length > 0`

// tbody is the body of the table with id in dom.
func tbody(t *testing.T, dom, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<table id="` + id + `"[^>]*>.*?<tbody>(.*?)</tbody>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no table %q in the DOM:\n%s", id, dom)
	}
	return m[1]
}

// serve starts a server of h for the test. It is closed after the
// browsers the test opens next are stopped (cleanups run last first): a
// page's stream is an open request, which Close would wait for.
func serve(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// holders is the holder column of the locks table, top to bottom.
func holders(t *testing.T, p *browsertest.Page) []string {
	t.Helper()
	var got []string
	js := `Array.from(document.querySelectorAll("#locks tbody tr")).map(tr => tr.cells[0].textContent)`
	if err := json.Unmarshal(p.Eval(js), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPageInBrowser loads the board in a real headless chromium: the
// rows, the pause, the queue and the events are rendered, the hostile
// reason is text (escaped in the DOM, no <img> element), stale and
// corrupt records are marked, and inline script does not run.
func TestPageInBrowser(t *testing.T) {
	t.Parallel()
	url := serve(t, Handler(&fakeSource{view: snapshot(time.Now())}))
	p := browsertest.Open(t, url+"/", browsertest.Options{})
	p.WaitFor(rowsShown)
	dom := p.DOM()
	rows := tbody(t, dom, "locks")
	for _, want := range []string{
		`<td class="holder">bob</td>`, `<td class="key">src/api/**</td>`,
		`<td class="reason">&lt;img src=x onerror=alert(1)&gt;</td>`,
		`<tr class="stale">`, `<td class="holder">carol</td>`, `<td class="mark">STALE</td>`,
		`<tr class="corrupt">`, `<td class="key">broken.json</td>`, `<td class="mark">CORRUPT</td>`,
	} {
		if !strings.Contains(rows, want) {
			t.Errorf("the locks table lacks %s:\n%s", want, rows)
		}
	}
	if strings.Contains(dom, "<img") || string(p.Eval(`document.querySelectorAll("img").length`)) != "0" {
		t.Errorf("the hostile reason became an element:\n%s", rows)
	}
	for _, gone := range []string{"erin", "task:wp-0"} {
		if strings.Contains(rows, gone) {
			t.Errorf("the locks table shows %s (expired, or a finished package):\n%s", gone, rows)
		}
	}
	if n := strings.Count(rows, "<tr"); n != 3 {
		t.Errorf("the locks table has %d rows, want 3:\n%s", n, rows)
	}
	if !regexp.MustCompile(`<td class="left">(9m[0-5]\d|10m00)s</td>`).MatchString(rows) {
		t.Errorf("bob's lock does not show about 10 minutes left:\n%s", rows)
	}
	for _, want := range []string{
		`<section id="pauses-section">`, "PAUSED checkout", "by alice (agent)", "release freeze",
		`<section id="queue-section">`, "(workpackages.yml)", "1 ready, 1 claimed, 1 done, 0 failed", "wp-1 — the API",
		"bob  acquire  src/api/**", "carol  refresh  db:migrations",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %s:\n%s", want, dom)
		}
	}
	p.WaitFor(`document.getElementById("status").textContent === "live"`)
	// Had markup got into the page, the policy would still keep its
	// inline script from running.
	inject := `(() => { const s = document.createElement("script"); s.textContent = "window.injected = true"; document.body.append(s); return window.injected === undefined; })()`
	if string(p.Eval(inject)) != "true" {
		t.Error("an inline script ran in the page: the content security policy is not applied")
	}
}

// TestPageFilterFromURL: a filter in the address (#worker=, ?key=) is the
// filter box's first value, and only the matching rows are shown.
func TestPageFilterFromURL(t *testing.T) {
	t.Parallel()
	url := serve(t, Handler(&fakeSource{view: snapshot(time.Now())}))
	for _, c := range []struct{ path, holder, box string }{
		{"/#worker=bob", "bob", "worker:bob"},
		{"/?key=db:", "carol", "key:db:"},
	} {
		p := browsertest.Open(t, url+c.path, browsertest.Options{})
		p.WaitFor(rowsShown)
		if got := holders(t, p); !slices.Equal(got, []string{c.holder}) {
			t.Errorf("%s shows the rows of %v, want %s's only", c.path, got, c.holder)
		}
		if got := string(p.Eval(`document.getElementById("filter").value`)); got != `"`+c.box+`"` {
			t.Errorf("%s: the filter box holds %s, want %q", c.path, got, c.box)
		}
	}
}

// TestPageSortAndFilterBox: clicking a column sorts by it, again reverses
// it; typing in the filter box narrows the rows to the matching ones.
func TestPageSortAndFilterBox(t *testing.T) {
	t.Parallel()
	url := serve(t, Handler(&fakeSource{view: snapshot(time.Now())}))
	p := browsertest.Open(t, url+"/", browsertest.Options{})
	p.WaitFor(rowsShown)
	// By time left first: carol's (5 min), bob's (10 min), the corrupt record.
	if got, want := holders(t, p), []string{"carol", "bob", "?"}; !slices.Equal(got, want) {
		t.Fatalf("first order %v, want %v", got, want)
	}
	p.Eval(`document.querySelector('#locks th[data-sort="key"]').click()`)
	if got, want := holders(t, p), []string{"?", "carol", "bob"}; !slices.Equal(got, want) {
		t.Errorf("by key %v, want %v (broken.json, db:migrations, src/api/**)", got, want)
	}
	p.Eval(`document.querySelector('#locks th[data-sort="key"]').click()`)
	if got, want := holders(t, p), []string{"bob", "carol", "?"}; !slices.Equal(got, want) {
		t.Errorf("by key, reversed %v, want %v", got, want)
	}
	p.Eval(`(() => { const f = document.getElementById("filter"); f.value = "CAROL"; f.dispatchEvent(new Event("input")); })()`)
	if got := holders(t, p); !slices.Equal(got, []string{"carol"}) {
		t.Errorf("filtered by CAROL: %v, want carol's row only", got)
	}
	if got := string(p.Eval(`location.hash`)); got != `"#filter=CAROL"` {
		t.Errorf("the address does not keep the filter: hash %s", got)
	}
}

// TestPageLive: a lock taken after the page loaded shows without a
// reload, from the stream, and, when the stream cannot be opened, from
// polling.
func TestPageLive(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "stream", false: "polling"}[stream], func(t *testing.T) { live(t, stream) })
	}
}

// live is TestPageLive, with the stream or without.
func live(t *testing.T, stream bool) {
	t.Parallel()
	src := &fakeSource{view: snapshot(time.Now())}
	h := Handler(src)
	if !stream {
		next := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/board/stream" {
				http.Error(w, "no streams here", http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	url := serve(t, h)
	p := browsertest.Open(t, url+"/", browsertest.Options{})
	p.WaitFor(rowsShown)
	p.Eval(`window.notReloaded = true`)
	src.mu.Lock()
	now := time.Now()
	src.view.Now = now
	src.view.Locks = append(src.view.Locks, locks.Entry{Lock: locks.Lock{Key: "late.txt", Holder: "frank", HolderType: "human",
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}})
	src.mu.Unlock()
	p.WaitFor(`Array.from(document.querySelectorAll("#locks td.holder")).some(td => td.textContent === "frank")`)
	if string(p.Eval(`window.notReloaded === true`)) != "true" {
		t.Errorf("stream %v: the page was reloaded", stream)
	}
	want := map[bool]string{true: `"live"`, false: `"updating every 2 s"`}[stream]
	if got := string(p.Eval(`document.getElementById("status").textContent`)); got != want {
		t.Errorf("stream %v: the status is %s, want %s", stream, got, want)
	}
}
