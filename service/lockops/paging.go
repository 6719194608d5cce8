package lockops

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strings"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// MaxPage is the most locks one page holds (git-lfs's list and verify,
// the JSON API's list, the board's snapshot), and what a page of git-lfs
// or the JSON API without a limit holds: git-lfs sends no limit, and
// follows next_cursor one request after another, so a table of up to
// this many locks costs it one round trip.
const MaxPage = 10000

// cursorMark starts every cursor of a page this server gives, so that
// one it did not give (an offset of earlier versions) is told apart.
const cursorMark = "k"

// maxCursor bounds the cursor a client sends back.
const maxCursor = 4096

// PageCursor is the cursor a client gets for store position pos (see
// locks.Store.Page), to ask for the page after it: opaque to it,
// URL-safe. git-lfs's list and verify, the JSON API's list and the
// board's snapshot all page with it.
func PageCursor(pos string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorMark + pos))
}

// PagePosition is the store position of cursor c, "" for none; a cursor
// this server cannot have given is a usage error (422 for git-lfs).
func PagePosition(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	if len(c) > maxCursor {
		return "", session.Usagef("cursor of %d bytes: not one this server gave (at most %d); list again without a cursor", len(c), maxCursor)
	}
	if strings.Trim(c, "0123456789") == "" {
		return "", session.Usagef("cursor %q is an offset, as earlier versions of lockgate serve gave: pages now go on from the last lock of the page before; list again without a cursor", c)
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	pos, ok := strings.CutPrefix(string(b), cursorMark)
	if err != nil || !ok || pos == "" {
		return "", session.Usagef("cursor %q: not one this server gave; list again without a cursor", lockkey.Shorten(c))
	}
	return pos, nil
}

// PageLimit is the page size of a request that asks for limit locks: 0,
// or above MaxPage, is MaxPage.
func PageLimit(limit int) int {
	if limit <= 0 || limit > MaxPage {
		return MaxPage
	}
	return limit
}

// SortByKey orders a page's records by key, as a whole listing is
// (locks.Store.List): a table of up to MaxPage locks, one page, is
// listed in the order it always was; pages follow the store's order.
func SortByKey(entries []locks.Entry) {
	slices.SortFunc(entries, func(a, b locks.Entry) int {
		return cmp.Or(strings.Compare(a.Key, b.Key), strings.Compare(a.Name, b.Name))
	})
}
