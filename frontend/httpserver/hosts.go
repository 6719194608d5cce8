package httpserver

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A page can be served from a name its author controls whose address
// later changes to the server's (DNS rebinding): the browser then sends
// the page's requests to the server as requests of the page's own
// origin, and lets the page read the answers. The Host header still
// names the author's name. So the server answers only to the names it
// knows are its own: the address it listens on, the loopback names when
// it listens on loopback, and the hosts its operator names with
// --public-url. The same names are the origins a write may come from.

// PublicURL is a URL the server is reached by (--public-url): behind a
// proxy, under a DNS name, at another port.
type PublicURL struct {
	// Scheme is http or https.
	Scheme string
	// Host is the host name or IP address, lower case, without brackets.
	Host string
	// Port is the port named in the URL, "" when it names none.
	Port string
}

// ParsePublicURL reads a --public-url: an http or https URL naming a
// host, optionally a port, and no user, path, query or fragment (the
// server answers at the root of its host).
func ParsePublicURL(s string) (PublicURL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return PublicURL{}, fmt.Errorf("not a URL: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return PublicURL{}, errors.New("give an http:// or https:// URL")
	case u.Opaque != "" || u.Hostname() == "":
		return PublicURL{}, errors.New("the URL names no host (http://HOST[:PORT])")
	case u.User != nil:
		return PublicURL{}, errors.New("a URL of the server names no user: users send their token with each request")
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return PublicURL{}, errors.New("the server answers at the root of its host: give the URL without a path, query or fragment")
	}
	p := PublicURL{Scheme: u.Scheme, Host: strings.ToLower(u.Hostname()), Port: u.Port()}
	if p.Port != "" {
		if n, err := strconv.Atoi(p.Port); err != nil || n < 1 || n > 65535 {
			return PublicURL{}, fmt.Errorf("port %q: a number from 1 to 65535", p.Port)
		}
	}
	if !hostName(p.Host) {
		return PublicURL{}, fmt.Errorf("host %q: a DNS name (xn-- for other scripts) or an IP address", p.Host)
	}
	return p, nil
}

// hostName reports whether h is an IP address or a DNS name as a Host
// header spells it: ASCII letters, digits, '-', '_' and dots between labels.
func hostName(h string) bool {
	if ip := net.ParseIP(h); ip != nil {
		return true
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || strings.ContainsFunc(label, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		}) {
			return false
		}
	}
	return true
}

// defaultPort is the port a URL of scheme means when it names none.
func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// hostPort is a host the server answers to: a name or address, lower
// case, and the port a Host header names with it ("" for none).
type hostPort struct{ host, port string }

func (h hostPort) String() string {
	host := h.host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if h.port == "" {
		return host
	}
	return host + ":" + h.port
}

// splitHost reads a Host header (or a URL's host): name, name:port,
// [v6] or [v6]:port; ok is false for anything else.
func splitHost(s string) (hostPort, bool) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = s, ""
		if v6, ok := strings.CutPrefix(s, "["); ok {
			host, ok = strings.CutSuffix(v6, "]")
			if !ok {
				return hostPort{}, false
			}
		} else if strings.Contains(s, ":") {
			return hostPort{}, false
		}
	}
	if host == "" {
		return hostPort{}, false
	}
	return hostPort{host: strings.ToLower(host), port: port}, true
}

// loopbackNames are the names of this machine's loopback interface that
// a client on it may use for a server listening there.
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// serverOrigins are the hosts the server is reached at, each at its
// port: the listen address as bound (and, when that is loopback or every
// interface, the loopback names) and each public URL's host at its port
// (its scheme's when it names none). A page's Origin must be one.
func serverOrigins(addr string, public []PublicURL) []hostPort {
	var out []hostPort
	add := func(host, port string) {
		h := hostPort{host: strings.ToLower(host), port: port}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		add(host, port)
		ip := net.ParseIP(host)
		if ip != nil && ip.IsUnspecified() {
			// Go binds 0.0.0.0 as [::] where it can: either is the
			// address asked for.
			add("0.0.0.0", port)
			add("::", port)
		}
		if ip != nil && (ip.IsLoopback() || ip.IsUnspecified()) {
			for _, n := range loopbackNames {
				add(n, port)
			}
		}
	}
	for _, u := range public {
		add(u.Host, cmp.Or(u.Port, defaultPort(u.Scheme)))
	}
	return out
}

// allowedHosts is what the Host header of a request may be: a host of
// serverOrigins at its port, or without a port where that is 80 or 443
// (a client leaves out its scheme's default port, and behind a proxy
// that ends TLS the server does not know which scheme the client used).
func allowedHosts(origins []hostPort) []hostPort {
	out := slices.Clone(origins)
	for _, h := range origins {
		if bare := (hostPort{host: h.host}); (h.port == "80" || h.port == "443") && !slices.Contains(out, bare) {
			out = append(out, bare)
		}
	}
	return out
}

// Hosts are the hosts the server answers to (host:port as a Host header
// names them), for its operator: requests naming any other are 421.
func (s *Server) Hosts() []string {
	var out []string
	for _, h := range s.hosts {
		out = append(out, h.String())
	}
	return out
}

// ownHost reports whether a Host header names this server.
func (s *Server) ownHost(host string) bool {
	h, ok := splitHost(host)
	return ok && slices.Contains(s.hosts, h)
}

// ownOrigin reports whether origin (scheme://host[:port], as a browser's
// Origin header gives it) is a page of this server: its host at its port
// (the scheme's when it names none) is one of serverOrigins.
func (s *Server) ownOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return false
	}
	h, ok := splitHost(u.Host)
	if !ok {
		return false
	}
	h.port = cmp.Or(h.port, defaultPort(u.Scheme))
	return slices.Contains(s.origins, h)
}

// MisdirectedError is a request whose Host header names no host the
// server answers to.
type MisdirectedError struct{ Host string }

func (e *MisdirectedError) Error() string {
	return fmt.Sprintf("misdirected: this server does not answer to the host %q; it answers to the address it listens on and to the hosts its operator names with `lockgate serve --public-url URL` (docs/serve.md)", e.Host)
}

// hostChecked answers 421 Misdirected Request to a request for a host
// the server does not answer to, except GET /healthz: a load balancer's
// or orchestrator's probe names whatever address it reaches the server
// by, and learns only "ok". Under /lfs the answer is git-lfs's error
// body, elsewhere the JSON API's, and the board's page text.
func (s *Server) hostChecked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || s.ownHost(r.Host) {
			h.ServeHTTP(w, r)
			return
		}
		err := &MisdirectedError{Host: r.Host}
		switch {
		case strings.HasPrefix(r.URL.Path, "/lfs/"):
			w.Header().Set("Content-Type", lfsType)
			s.fail(w, r, requestIDOf(r), err)
		case pageFile(r.URL.Path):
			http.Error(w, err.Error(), http.StatusMisdirectedRequest)
		default:
			s.apiFail(w, r, err)
		}
	})
}
