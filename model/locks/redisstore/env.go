package redisstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Environment variables of the Redis store (docs/stores.md: The Redis
// store; docs/config.md: Environment variables), shared with other lock
// clients of the same Redis, so the names are theirs.
const (
	EnvLockRedisURL     = "LOCK_REDIS_URL"
	EnvRedisURL         = "REDIS_URL"
	EnvTTL              = "LOCK_TTL_MS"
	EnvRateLimitPerMin  = "LOCK_RATE_LIMIT_PER_MIN"
	EnvRateLimitWindow  = "LOCK_RATE_LIMIT_WINDOW_MS"
	EnvHistoryTTLSecond = "LOCK_HISTORY_TTL_SEC"
)

// URLFromEnv returns LOCK_REDIS_URL, else REDIS_URL, else "".
func URLFromEnv(getenv func(string) string) string {
	if u := strings.TrimSpace(getenv(EnvLockRedisURL)); u != "" {
		return u
	}
	return strings.TrimSpace(getenv(EnvRedisURL))
}

// IsURL reports whether a --store value names a Redis server rather than a
// store kind: redis://, rediss:// (TLS) or unix:// (a Redis socket), or a
// deployment of several, redis+sentinel:// or redis+cluster:// (rediss+
// for TLS).
func IsURL(s string) bool {
	for _, p := range []string{"redis://", "rediss://", "unix://",
		SchemeSentinel + "://", SchemeSentinelTLS + "://", SchemeCluster + "://", SchemeClusterTLS + "://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

// OptionsFromEnv reads the rate limit and history settings: LOCK_RATE_LIMIT_PER_MIN
// (acquisitions per window, 0 or unset: no limit), LOCK_RATE_LIMIT_WINDOW_MS
// (default 60000) and LOCK_HISTORY_TTL_SEC (0 or unset: history kept until
// released). A malformed value is an error, so that a typo never turns a
// limit off silently. Prefix and timeouts are left for the caller.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	var o Options
	n, err := envInt(getenv, EnvRateLimitPerMin, 0)
	if err != nil {
		return o, err
	}
	o.RateLimitPerMin = int(n)
	if n, err = envInt(getenv, EnvRateLimitWindow, 1); err != nil {
		return o, err
	}
	o.RateLimitWindow = time.Duration(n) * time.Millisecond
	if n, err = envInt(getenv, EnvHistoryTTLSecond, 0); err != nil {
		return o, err
	}
	o.HistoryTTL = time.Duration(n) * time.Second
	return o, nil
}

// TTLFromEnv returns LOCK_TTL_MS as a duration and whether it is set.
func TTLFromEnv(getenv func(string) string) (time.Duration, bool, error) {
	n, err := envInt(getenv, EnvTTL, 1)
	if err != nil || n == 0 {
		return 0, false, err
	}
	return time.Duration(n) * time.Millisecond, true, nil
}

// envInt parses a whole number of at least minimum; unset (or blank) is 0.
func envInt(getenv func(string) string, name string, minimum int64) (int64, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < minimum || n > 1<<40 {
		return 0, fmt.Errorf("%s=%q: want a whole number from %d to %d", name, v, minimum, int64(1)<<40)
	}
	return n, nil
}

// RepoPrefix derives a key prefix from a repository's identity (its
// normalized remote URL, else its git directory): "lockgate:" and 16
// hex digits of the identity's SHA-256, then ":". Every clone and worktree
// of one repository gets the same prefix, other repositories another.
func RepoPrefix(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return DefaultPrefix + hex.EncodeToString(sum[:8]) + ":"
}

// defaultPorts are the ports a remote URL may name or leave out alike.
var defaultPorts = map[string]string{"ssh": "22", "git+ssh": "22", "ssh+git": "22", "https": "443", "http": "80", "git": "9418"}

// NormalizeRemote reduces a git remote URL to host/path, so that every
// spelling of one repository's address derives one key prefix:
// git@github.com:acme/proj.git, https://github.com/acme/proj,
// ssh://git@GitHub.com:22/acme/proj/ all give github.com/acme/proj. The
// scheme, user (and password), the scheme's default port, a trailing ".git"
// and slashes go; the host is lowercased, the path kept as written. A local
// path is kept, without a trailing ".git" or slash.
func NormalizeRemote(remote string) string {
	s := strings.TrimSpace(remote)
	host, path := "", s
	if i := strings.Index(s, "://"); i > 0 {
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			host = strings.ToLower(u.Hostname())
			if p := u.Port(); p != "" && p != defaultPorts[strings.ToLower(u.Scheme)] {
				host += ":" + p
			}
			path = u.Path
		} else if err == nil {
			path = u.Path // file:///srv/proj.git
		}
	} else if colon := strings.Index(s, ":"); colon > 1 && !strings.ContainsAny(s[:colon], "/\\") {
		// scp-like [user@]host:path; a colon after a slash, or after a
		// drive letter (C:\…), is in a local path.
		host = s[:colon]
		if at := strings.LastIndex(host, "@"); at >= 0 {
			host = host[at+1:]
		}
		host, path = strings.ToLower(host), s[colon+1:]
	}
	path = strings.TrimRight(path, "/")
	path = strings.TrimRight(strings.TrimSuffix(path, ".git"), "/")
	if host == "" {
		return path
	}
	return host + "/" + strings.TrimLeft(path, "/")
}

// ServerID names the server and database rawURL points at, without
// credentials, options or spelling differences ("redis://h:6379/0" for
// "redis://:pw@H/0?dial_timeout=3"): two URLs with the same ServerID reach
// the same locks, given the same key prefix.
//
// For a Sentinel URL it is the scheme, the master and the database,
// whichever Sentinels the URL names: "redis+sentinel:///mymaster/0". For
// a Cluster URL it is the scheme and the servers, sorted and lowercased:
// "redis+cluster://h1:7000,h2:7001".
func ServerID(rawURL string) (string, error) {
	if topologyOf(rawURL) != single {
		m, err := parseMultiURL(rawURL)
		if err != nil {
			return "", fmt.Errorf("redis store: invalid URL %s: %w", Redact(rawURL), err)
		}
		return m.serverID(), nil
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return "", fmt.Errorf("redis store: invalid URL %s: %w", Redact(rawURL), err)
	}
	switch {
	case o.Network == "unix":
		return fmt.Sprintf("unix://%s?db=%d", o.Addr, o.DB), nil
	case o.TLSConfig != nil:
		return fmt.Sprintf("rediss://%s/%d", strings.ToLower(o.Addr), o.DB), nil
	}
	return fmt.Sprintf("redis://%s/%d", strings.ToLower(o.Addr), o.DB), nil
}

// KeyPrefix is the prefix the keys of rawURL's store start with, given
// the configured prefix ("" for DefaultPrefix): on a cluster the prefix
// in braces, a hash tag (see Options.Prefix), elsewhere the prefix as it
// is. A prefix a cluster refuses is returned as it is; opening the store
// reports it.
func KeyPrefix(rawURL, prefix string) string {
	s := &Store{topo: topologyOf(rawURL)}
	if err := s.setPrefix(prefix); err != nil {
		return prefix
	}
	return s.p
}

// Redact is rawURL without its password, for messages.
func Redact(rawURL string) string { return redactURL(rawURL) }
