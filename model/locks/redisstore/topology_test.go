package redisstore

import (
	"slices"
	"strings"
	"testing"
)

func TestParseMultiURL(t *testing.T) {
	for _, tc := range []struct {
		url    string
		kind   topology
		addrs  []string
		master string
		db     int
		tls    bool
		id     string
		shown  string
	}{
		{url: "redis+sentinel://s1:26379,s2:26380/mymaster", kind: sentinel, addrs: []string{"s1:26379", "s2:26380"}, master: "mymaster",
			id: "redis+sentinel:///mymaster/0", shown: "redis+sentinel://s1:26379,s2:26380/mymaster/0"},
		{url: "redis+sentinel://:pw@S2:26380,s1:26379/mymaster/3?dial_timeout=1s", kind: sentinel, addrs: []string{"S2:26380", "s1:26379"}, master: "mymaster", db: 3,
			id: "redis+sentinel:///mymaster/3", shown: "redis+sentinel://:xxxxx@S2:26380,s1:26379/mymaster/3?dial_timeout=1s"},
		{url: "rediss+sentinel://u:pw@[::1]:26379/m?sentinel_password=spw", kind: sentinel, addrs: []string{"[::1]:26379"}, master: "m", tls: true,
			id: "rediss+sentinel:///m/0", shown: "rediss+sentinel://u:xxxxx@[::1]:26379/m/0?sentinel_password=xxxxx"},
		{url: "redis+cluster://n1:7000,n2:7001,n3:7002", kind: cluster, addrs: []string{"n1:7000", "n2:7001", "n3:7002"},
			id: "redis+cluster://n1:7000,n2:7001,n3:7002", shown: "redis+cluster://n1:7000,n2:7001,n3:7002"},
		{url: "REDISS+CLUSTER://user:pw@n1:7000/", kind: cluster, addrs: []string{"n1:7000"}, tls: true,
			id: "rediss+cluster://n1:7000", shown: "rediss+cluster://user:xxxxx@n1:7000"},
	} {
		m, err := parseMultiURL(tc.url)
		if err != nil {
			t.Errorf("parseMultiURL(%q): %v", tc.url, err)
			continue
		}
		if m.kind != tc.kind || !slices.Equal(m.addrs, tc.addrs) || m.master != tc.master || m.db != tc.db || m.tls != tc.tls {
			t.Errorf("parseMultiURL(%q) = %+v", tc.url, m)
		}
		if id, err := ServerID(tc.url); err != nil || id != tc.id {
			t.Errorf("ServerID(%q) = %q, %v; want %q", tc.url, id, err, tc.id)
		}
		if got := Redact(tc.url); got != tc.shown {
			t.Errorf("Redact(%q) = %q, want %q", tc.url, got, tc.shown)
		}
		if !IsURL(tc.url) {
			t.Errorf("IsURL(%q) = false", tc.url)
		}
	}
}

// TestSentinelServerID: through Sentinel the master and database name the
// store, not the Sentinels asked for it: a URL that spells them otherwise,
// or names a subset of them, reaches the same locks.
func TestSentinelServerID(t *testing.T) {
	want, err := ServerID("redis+sentinel://localhost:26379,localhost:26380/locks")
	if err != nil {
		t.Fatal(err)
	}
	for _, same := range []string{
		"redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/locks",
		"redis+sentinel://127.0.0.1:26380/locks/0",
		"redis+sentinel://:pw@other:26381/locks?dial_timeout=1s",
	} {
		if id, err := ServerID(same); err != nil || id != want {
			t.Errorf("ServerID(%q) = %q, %v; want %q, the same store", same, id, err, want)
		}
	}
	for _, other := range []string{
		"redis+sentinel://localhost:26379/locks/1",
		"redis+sentinel://localhost:26379/other",
		"rediss+sentinel://localhost:26379/locks",
		"redis+cluster://localhost:26379",
	} {
		if id, err := ServerID(other); err != nil || id == want {
			t.Errorf("ServerID(%q) = %q, %v; want another store than %q", other, id, err, want)
		}
	}
}

func TestParseMultiURLRefuses(t *testing.T) {
	for url, want := range map[string]string{
		"redis+sentinel://s1:26379":                          "no master name",
		"redis+sentinel://s1:26379/":                         "no master name",
		"redis+sentinel://s1:26379/m/x":                      "database",
		"redis+sentinel://s1:26379/m/-1":                     "database",
		"redis+sentinel://s1:26379/m/0/more":                 "want /MASTER or /MASTER/DB",
		"redis+sentinel://s1/m":                              "not host:port",
		"redis+sentinel://s1:0/m":                            "port",
		"redis+sentinel://s1:99999/m":                        "port",
		"redis+sentinel://s1:26379,/m":                       "not host:port",
		"redis+sentinel://s1:26379/m?master_name=other":      "master_name",
		"redis+sentinel://s1:26379/m?addr=s2:1":              "addr",
		"redis+sentinel://s1:26379/m#x":                      "fragment",
		"redis+sentinel://s1:26379/m?%zz":                    "malformed options",
		"redis+cluster://n1:7000/1":                          "names no master or database",
		"redis+cluster://n1:7000?db=1":                       "db",
		"redis+cluster://n1:7000?password=p":                 "password",
		"redis+cluster://n1:x":                               "port",
		"redis+cluster://:7000":                              "not host:port",
		"redis://h:1":                                        "is not",
		"redis+cluster://n1:7000?sentinel_password=x":        "options of a redis+sentinel:// URL",
		"redis+sentinel://s1:26379/m?no_such_option=1":       "unexpected option",
		"redis+cluster://n1:7000?dial_timeout=soon":          "dial_timeout",
		"redis+sentinel://u:p%zz@s1:26379/m":                 "malformed user and password",
		"redis+sentinel://s1:26379/%zz":                      "master name",
		"redis+sentinel://s1:26379/a%20b":                    "master name",
		"redis+sentinel://h\xd7:1/m":                         "not host:port",
		"redis+sentinel://[zz]:1/m":                          "not host:port",
		"rediss+cluster://n1:7000,n2:7000?read_only=perhaps": "read_only",
		"redis+cluster://127.0.0.1:17400?foo=1":              "redis: unexpected option: foo",
		"redis+sentinel://127.0.0.1:26379/locks?foo=1":       "redis: unexpected option: foo",
	} {
		_, err := parseMultiURL(url)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", url, err, want)
		}
		// ServerID, which the service asks before it opens a store to
		// tell a malformed URL (exit 2) from a server that cannot be
		// used, refuses it too.
		if _, idErr := ServerID(url); url != "redis://h:1" && (idErr == nil || !strings.Contains(idErr.Error(), want)) {
			t.Errorf("ServerID(%s): error %v, want one saying %q", url, idErr, want)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", url, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("%s: error %v shows the password", url, err)
		}
	}
}

// TestClusterPrefix: on a cluster the prefix is a hash tag, and a prefix
// with a brace, which could end the tag early, is refused.
func TestClusterPrefix(t *testing.T) {
	s := &Store{topo: cluster}
	if err := s.setPrefix("lockgate:abc:"); err != nil || s.p != "{lockgate:abc:}" || s.recKey("a{b}") != "{lockgate:abc:}r:a{b}" {
		t.Fatalf("setPrefix on a cluster: %v, %q", err, s.p)
	}
	for _, p := range []string{"a{b:", "a}b:", "{x}:"} {
		if err := s.setPrefix(p); err == nil || !strings.Contains(err.Error(), "brace") {
			t.Errorf("setPrefix(%q) on a cluster: %v, want a brace refused", p, err)
		}
	}
	s = &Store{topo: sentinel}
	if err := s.setPrefix("lockgate:abc:"); err != nil || s.p != "lockgate:abc:" {
		t.Fatalf("setPrefix through Sentinel: %v, %q; want the prefix as it is", err, s.p)
	}
}

func FuzzParseMultiURL(f *testing.F) {
	for _, s := range []string{
		"redis+sentinel://s1:26379,s2:26380/mymaster",
		"redis+sentinel://:pw@s1:26379/m/3?dial_timeout=1s",
		"rediss+sentinel://u:pw@[::1]:26379/m?sentinel_password=spw",
		"redis+cluster://n1:7000,n2:7001",
		"rediss+cluster://u:p@n1:7000/",
		"redis+cluster://a@b@n1:7000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		m, err := parseMultiURL(raw)
		if err != nil {
			return
		}
		if len(m.addrs) == 0 || (m.kind == sentinel && !nameChars.MatchString(m.master)) || m.db < 0 {
			t.Fatalf("parseMultiURL(%q) = %+v: no server, master or a negative database", raw, m)
		}
		shown := m.redacted()
		if m.pass != "" && len(m.pass) > 5 && strings.Contains(shown, m.pass) {
			t.Fatalf("redacted %q shows the password of %q", shown, raw)
		}
		// What is shown names the same servers, master and database.
		again, err := parseMultiURL(shown)
		if err != nil {
			t.Fatalf("the redacted form %q of %q does not parse: %v", shown, raw, err)
		}
		if again.serverID() != m.serverID() {
			t.Fatalf("redacted %q names %q, the URL %q names %q", shown, again.serverID(), raw, m.serverID())
		}
	})
}

func TestConnectedReplicas(t *testing.T) {
	if n, err := connectedReplicas("# Replication\r\nrole:master\r\nconnected_slaves:2\r\nslave0:ip=127.0.0.1\r\n"); err != nil || n != 2 {
		t.Errorf("connectedReplicas = %d, %v; want 2", n, err)
	}
	for _, bad := range []string{"", "role:master\r\n", "connected_slaves:-1\r\n", "connected_slaves:two\r\n"} {
		if n, err := connectedReplicas(bad); err == nil {
			t.Errorf("connectedReplicas(%q) = %d, want an error", bad, n)
		}
	}
}

func FuzzConnectedReplicas(f *testing.F) {
	f.Add("# Replication\r\nrole:master\r\nconnected_slaves:2\r\n")
	f.Add("connected_slaves:x")
	f.Fuzz(func(t *testing.T, info string) {
		if n, err := connectedReplicas(info); err == nil && n < 0 {
			t.Fatalf("connectedReplicas(%q) = %d: a negative count", info, n)
		}
	})
}
