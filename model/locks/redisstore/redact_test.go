package redisstore

import (
	"strings"
	"testing"
)

// A Sentinel or Cluster URL that does not parse is shown as written, so
// that its message says what is wrong, but never with a password.
func TestRedactUnparsedURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"redis+sentinel://127.0.0.1:26391/locks?foo=1":                       "redis+sentinel://127.0.0.1:26391/locks?foo=1",
		"redis+sentinel://u:secret@h1:1,h2:2/locks?foo=1":                    "redis+sentinel://u:xxxxx@h1:1,h2:2/locks?foo=1",
		"redis+cluster://:secret@h1:1?foo=1":                                 "redis+cluster://:xxxxx@h1:1?foo=1",
		"rediss+sentinel://h:1/m?sentinel_password=secret&foo=1&password=pw": "rediss+sentinel://h:1/m?sentinel_password=xxxxx&foo=1&password=xxxxx",
	} {
		got := redactURL(in)
		if got != want || strings.Contains(got, "secret") {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
