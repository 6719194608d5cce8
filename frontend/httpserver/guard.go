package httpserver

import (
	"fmt"
	"mime"
	"net/http"
)

// A browser sends a user's credentials (HTTP Basic, once given) with
// every request to the server, whichever page makes it: a page of
// another site could post a form to /lfs or /api/v1 and change the locks
// as the user. Such a form can only be text/plain, urlencoded or
// multipart, and a script of another origin cannot send anything else
// without the server's consent (a CORS preflight, which the server never
// gives). So every request that may change something must carry a JSON
// body declared as JSON, and must not say it comes from another site.

// CrossSiteError is a request a browser sent for a page of another site.
type CrossSiteError struct {
	// Why names the header that gave it away.
	Why string
}

func (e *CrossSiteError) Error() string {
	return fmt.Sprintf("refused: the request comes from another site (%s); a change of the locks must come from this server's own pages or from a client that is no browser (git lfs, curl): docs/serve.md", e.Why)
}

// MediaTypeError is a request body not declared as JSON.
type MediaTypeError struct {
	// Got is the Content-Type sent, "" for none.
	Got string
}

func (e *MediaTypeError) Error() string {
	got := "none"
	if e.Got != "" {
		got = fmt.Sprintf("%q", e.Got)
	}
	return fmt.Sprintf("refused: Content-Type %s: the body is JSON, sent as application/json or %s (docs/serve.md)", got, lfsType)
}

// jsonTypes are the media types a body under /lfs and /api/v1 is taken
// as: git-lfs sends its own, other clients plain JSON.
var jsonTypes = map[string]bool{"application/json": true, lfsType: true}

// guardWrite refuses a request under /lfs or /api/v1 that is not a read
// (GET, HEAD) when a browser says it comes from another site, or when it
// carries a body (every POST does) not declared as JSON. It runs before
// the token is looked at: nothing a page of another site sends is
// weighed further.
func (s *Server) guardWrite(r *http.Request) error {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	// Sec-Fetch-Site is set by the browser, never by a page: same-origin
	// is this server's own page, none a request the user made (a typed
	// URL, a bookmark). same-site is refused too: another port of this
	// host, or a sibling subdomain, is another server.
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return &CrossSiteError{Why: "Sec-Fetch-Site: " + site}
	}
	// A browser that sends no Sec-Fetch-Site still names the page's
	// origin on a POST or DELETE; a client that is no browser sends none.
	if origin := r.Header.Get("Origin"); origin != "" && !s.ownOrigin(origin) {
		return &CrossSiteError{Why: fmt.Sprintf("Origin: %q", origin)}
	}
	if r.Method != http.MethodPost && r.ContentLength == 0 {
		return nil // DELETE: no body, and a browser preflights it
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !jsonTypes[mt] {
		return &MediaTypeError{Got: ct}
	}
	return nil
}
