// Package webboard is the web board of `lockgate serve`: what `lockgate
// board` shows, as a page a browser keeps up to date. Handler serves, at
// the root the server mounts it on:
//
//	GET /              the page (HTML, its script and style are embedded:
//	                   no CDN, no build step, it works offline)
//	GET /board.json    one snapshot as JSON (the shape is View's)
//	GET /board/stream  server-sent events: a snapshot when the client
//	                   connects and every 2 s after, until it goes away
//	GET /static/...    the page's script and style
//
// The page shows the paused features, every live lock with its holder,
// type, key, reason and time left (counting down), stale and corrupt
// records marked, the work-package queue when there is one and the last
// events; it filters by worker or key and sorts by a clicked column. What
// other workers wrote is shown as text, never as markup: the script builds
// the page with textContent only, and a Content-Security-Policy of
// default-src 'self' keeps any script but the page's own from running.
//
// A page whose server answers GET /board/session with the signed-in user
// and a CSRF token shows a clear button on each lock row: it asks for
// confirmation, then posts the key with the token to POST /board/clear.
// Both routes are the mounting server's (frontend/httpserver), which
// knows the user; under a server without them the page shows no button.
//
// The snapshot comes from a Source (the service's Board): the package
// renders what the service read and reads nothing itself.
package webboard
