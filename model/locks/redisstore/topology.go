package redisstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Schemes of the URLs that name a Redis deployment of more than one
// server (docs/config.md: Redis URLs). The single-server forms redis://,
// rediss:// and unix:// are go-redis's own.
const (
	SchemeSentinel    = "redis+sentinel"
	SchemeSentinelTLS = "rediss+sentinel"
	SchemeCluster     = "redis+cluster"
	SchemeClusterTLS  = "rediss+cluster"
)

// topology is the kind of deployment a URL names.
type topology int

const (
	single   topology = iota // one server (redis://, rediss://, unix://)
	sentinel                 // a primary and its replicas, found through Sentinel
	cluster                  // Redis Cluster
)

// multiURL is a parsed redis+sentinel:// or redis+cluster:// URL:
//
//	redis+sentinel://[user:password@]host:port[,host:port...]/MASTER[/DB][?options]
//	redis+cluster://[user:password@]host:port[,host:port...][/][?options]
//
// The rediss+ forms connect with TLS. The user and password are the Redis
// servers' (the primary's and its replicas', or the cluster nodes');
// Sentinel's own, if it has any, are the options sentinel_username and
// sentinel_password. Other options are go-redis's, as for redis://.
type multiURL struct {
	kind       topology
	tls        bool
	user, pass string
	hasPass    bool
	addrs      []string // host:port, at least one
	master     string   // sentinel: the master name
	db         int      // sentinel: the database
	query      url.Values
}

// topologyOf says which deployment rawURL names, by its scheme.
func topologyOf(rawURL string) topology {
	scheme, _, _ := strings.Cut(rawURL, "://")
	switch strings.ToLower(scheme) {
	case SchemeSentinel, SchemeSentinelTLS:
		return sentinel
	case SchemeCluster, SchemeClusterTLS:
		return cluster
	}
	return single
}

// parseMultiURL parses a redis+sentinel:// or redis+cluster:// URL (either
// with rediss+). Whatever it cannot read whole is an error: a URL that
// named fewer servers, or another master, than its writer meant would lock
// elsewhere.
func parseMultiURL(rawURL string) (*multiURL, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, errors.New("no scheme")
	}
	m := &multiURL{kind: topologyOf(rawURL)}
	if m.kind == single {
		return nil, fmt.Errorf("scheme %q is not %s or %s", scheme, SchemeSentinel, SchemeCluster)
	}
	m.tls = strings.HasPrefix(strings.ToLower(scheme), "rediss")
	rest, rawQuery, _ := strings.Cut(rest, "?")
	if strings.Contains(rest, "#") || strings.Contains(rawQuery, "#") {
		return nil, errors.New("a fragment (#) is not part of a Redis URL")
	}
	authority, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		info, err := url.Parse("redis://" + authority[:at+1] + "h")
		if err != nil || info.User == nil {
			return nil, errors.New("malformed user and password")
		}
		m.user = info.User.Username()
		m.pass, m.hasPass = info.User.Password()
		authority = authority[at+1:]
	}
	for _, a := range strings.Split(authority, ",") {
		host, port, err := net.SplitHostPort(a)
		if err != nil || !validHost(host) || strings.HasPrefix(a, "[") != strings.Contains(host, ":") {
			return nil, fmt.Errorf("server %q is not host:port", a)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return nil, fmt.Errorf("server %q: port %q is not a number from 1 to 65535", a, port)
		}
		m.addrs = append(m.addrs, net.JoinHostPort(host, port))
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, fmt.Errorf("malformed options: %w", err)
	}
	// The path and the server list say these; a second place to say them
	// could disagree.
	for _, k := range []string{"addr", "master_name", "db", "username", "password"} {
		if q.Has(k) {
			return nil, fmt.Errorf("option %s: give it in the URL's path or servers, not as an option", k)
		}
	}
	m.query = q
	if err := m.checkOptions(); err != nil {
		return nil, err
	}
	segs := strings.Split(path, "/")
	if path == "" {
		segs = nil
	}
	switch m.kind {
	case sentinel:
		if len(segs) == 0 || segs[0] == "" {
			return nil, errors.New("no master name: redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER[/DB]")
		}
		if m.master, err = url.PathUnescape(segs[0]); err != nil || !nameChars.MatchString(m.master) {
			return nil, fmt.Errorf("master name %q is not a valid path segment", segs[0])
		}
		switch len(segs) {
		case 1:
		case 2:
			if m.db, err = strconv.Atoi(segs[1]); err != nil || m.db < 0 || segs[1] != strconv.Itoa(m.db) {
				return nil, fmt.Errorf("database %q is not a whole number", segs[1])
			}
		default:
			return nil, fmt.Errorf("path %q: want /MASTER or /MASTER/DB", "/"+path)
		}
	case cluster:
		// A cluster has database 0 only.
		if path != "" && path != "0" {
			return nil, fmt.Errorf("path %q: a cluster URL names no master or database", "/"+path)
		}
	}
	return m, nil
}

// checkOptions has go-redis read the options, so that an unknown or
// malformed one is refused with the URL, as redis.ParseURL refuses one of
// a redis:// URL, not only when the store is opened.
func (m *multiURL) checkOptions() error {
	q := maps(m.query)
	if m.kind == cluster && (q.Has("sentinel_username") || q.Has("sentinel_password")) {
		return errors.New("sentinel_username and sentinel_password are options of a redis+sentinel:// URL")
	}
	q.Del("sentinel_username")
	q.Del("sentinel_password")
	c := *m
	c.query = q
	var err error
	if m.kind == sentinel {
		_, err = redis.ParseFailoverURL(c.base())
	} else {
		_, err = redis.ParseClusterURL(c.base())
	}
	return err
}

// nameChars are the characters of a host name and a master name: a
// Sentinel's configuration names a master in one word.
var nameChars = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// validHost reports whether host is a host name or an IP address (an IPv6
// one without its brackets, as net.SplitHostPort leaves it).
func validHost(host string) bool {
	if strings.Contains(host, ":") {
		return net.ParseIP(host) != nil
	}
	return nameChars.MatchString(host)
}

// base is a redis:// URL of the first server with the options, for
// go-redis's parsers of the option names and values.
func (m *multiURL) base() string {
	u := url.URL{Scheme: "redis", Host: m.addrs[0], RawQuery: m.query.Encode()}
	if m.tls {
		u.Scheme = "rediss"
	}
	return u.String()
}

// redacted is the URL as given, without the password, for messages.
func (m *multiURL) redacted() string {
	var b strings.Builder
	b.WriteString(m.scheme())
	b.WriteString("://")
	if m.user != "" || m.hasPass {
		b.WriteString(url.User(m.user).String())
		if m.hasPass {
			b.WriteString(":xxxxx")
		}
		b.WriteString("@")
	}
	b.WriteString(strings.Join(m.addrs, ","))
	if m.kind == sentinel {
		b.WriteString("/" + url.PathEscape(m.master) + "/" + strconv.Itoa(m.db))
	}
	if q := m.query; len(q) > 0 {
		if q.Has("sentinel_password") {
			q = maps(q)
			q.Set("sentinel_password", "xxxxx")
		}
		b.WriteString("?" + q.Encode())
	}
	return b.String()
}

// maps copies q.
func maps(q url.Values) url.Values {
	c := make(url.Values, len(q))
	for k, v := range q {
		c[k] = slices.Clone(v)
	}
	return c
}

// scheme is the URL's scheme, lowercase.
func (m *multiURL) scheme() string {
	s := SchemeCluster
	if m.kind == sentinel {
		s = SchemeSentinel
	}
	if m.tls {
		s = "rediss" + strings.TrimPrefix(s, "redis")
	}
	return s
}

// serverID names the deployment and database (see ServerID). Through
// Sentinel that is the master and the database: the Sentinels are only
// how to find the primary, so URLs that name others of them, or spell
// them otherwise, reach the same locks. A cluster is its servers, sorted
// and lowercased.
func (m *multiURL) serverID() string {
	if m.kind == sentinel {
		return m.scheme() + ":///" + url.PathEscape(m.master) + "/" + strconv.Itoa(m.db)
	}
	addrs := make([]string, len(m.addrs))
	for i, a := range m.addrs {
		addrs[i] = strings.ToLower(a)
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	return m.scheme() + "://" + strings.Join(addrs, ",")
}
