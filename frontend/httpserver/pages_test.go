package httpserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestListPages walks the JSON API's list and the board's snapshot in
// pages: the API's body stays the array of rows, the next page named by
// its Link header; the board's by next_cursor. Without a limit either
// answers every lock of a small table at once, and a cursor the server
// did not give is 400 naming it.
func TestListPages(t *testing.T) {
	srv, tokens := storeServer(t, "file", 1, Options{}, nil)
	const n = 25
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("art/f%02d.psd", i)
	}
	body, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	if status, b, err := send(srv, "POST", "/api/v1/locks", "u0", tokens[0], string(body)); err != nil || status != http.StatusOK {
		t.Fatalf("acquire: %d %v %s", status, err, b)
	}
	get := func(path string) (int, http.Header, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("u0", tokens[0])
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, res.Header, b
	}
	type row struct {
		Key string `json:"key"`
	}

	// The JSON API: pages of 10 by the Link header.
	seen := map[string]bool{}
	pages := 0
	for path := "/api/v1/locks?limit=10"; path != ""; pages++ {
		status, h, b := get(path)
		var rows []row
		if err := json.Unmarshal(b, &rows); status != http.StatusOK || err != nil || len(rows) > 10 {
			t.Fatalf("GET %s: %d, %d rows, %v: %s", path, status, len(rows), err, b)
		}
		for _, r := range rows {
			if seen[r.Key] {
				t.Errorf("%s listed again on page %d", r.Key, pages)
			}
			seen[r.Key] = true
		}
		path = ""
		if link := h.Get("Link"); link != "" {
			target, _, ok := strings.Cut(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			u, err := url.Parse(target)
			if !ok || err != nil || u.Query().Get("cursor") != h.Get("Lockgate-Next-Cursor") || u.Query().Get("limit") != "10" {
				t.Fatalf("Link %q, Lockgate-Next-Cursor %q", link, h.Get("Lockgate-Next-Cursor"))
			}
			path = target
		}
	}
	if len(seen) != n || pages != 3 {
		t.Errorf("pages of 10 gave %d locks in %d pages; want %d in 3", len(seen), pages, n)
	}
	status, h, b := get("/api/v1/locks")
	var rows []row
	if err := json.Unmarshal(b, &rows); status != http.StatusOK || err != nil || len(rows) != n || h.Get("Link") != "" {
		t.Errorf("GET /api/v1/locks: %d, %d rows, Link %q, %v", status, len(rows), h.Get("Link"), err)
	}

	// The board: pages of 10 by next_cursor.
	type view struct {
		Locks      []row  `json:"locks"`
		NextCursor string `json:"next_cursor"`
		Events     []any  `json:"events"`
	}
	seen = map[string]bool{}
	pages = 0
	for cursor := ""; ; pages++ {
		status, _, b := get("/board.json?limit=10&cursor=" + url.QueryEscape(cursor))
		var v view
		if err := json.Unmarshal(b, &v); status != http.StatusOK || err != nil || len(v.Locks) > 10 || v.Events == nil {
			t.Fatalf("board page %d: %d, %v: %s", pages, status, err, b)
		}
		for _, l := range v.Locks {
			if seen[l.Key] {
				t.Errorf("%s on the board again on page %d", l.Key, pages)
			}
			seen[l.Key] = true
		}
		if v.NextCursor == "" {
			break
		}
		cursor = v.NextCursor
	}
	if len(seen) != n || pages != 2 {
		t.Errorf("board pages of 10 gave %d locks in %d pages after the first; want %d in 2", len(seen), pages, n)
	}
	var whole view
	if status, _, b := get("/board.json"); status != http.StatusOK || json.Unmarshal(b, &whole) != nil || len(whole.Locks) != n || whole.NextCursor != "" {
		t.Errorf("GET /board.json: %d, %d locks, next %q", status, len(whole.Locks), whole.NextCursor)
	}

	for _, path := range []string{"/api/v1/locks?cursor=100", "/api/v1/locks?cursor=nope", "/board.json?cursor=nope", "/board.json?limit=-1"} {
		status, _, b := get(path)
		if status != http.StatusBadRequest || !strings.Contains(string(b), "cursor") && !strings.Contains(string(b), "limit") {
			t.Errorf("GET %s: %d %s; want 400 naming the cursor or limit", path, status, b)
		}
	}
	if status, _, b := get("/lfs/locks?cursor=100"); status != http.StatusUnprocessableEntity || !strings.Contains(string(b), "offset") {
		t.Errorf("GET /lfs/locks?cursor=100: %d %s; want 422 saying it is an offset", status, b)
	}
}
