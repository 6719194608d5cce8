package redistest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStartStopRestart(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING = %q, %v", got, err)
	}
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") {
		t.Fatalf("URL = %q", s.URL())
	}
	if _, err := s.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	port := s.Port()
	s.Stop()
	if _, err := s.Do("PING"); err == nil {
		t.Fatal("PING answered after Stop")
	}
	s.Restart()
	if s.Port() != port {
		t.Fatalf("port changed across Restart: %d -> %d", port, s.Port())
	}
	// Persistence is off: the restart lost the key.
	if got, err := s.Do("GET", "k"); err != nil || got != "" {
		t.Fatalf("GET after restart of a non-persistent server = %q, %v; want nothing", got, err)
	}
}

func TestPersistentRestartKeepsData(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Persistent: true})
	if _, err := s.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	s.Kill() // no clean shutdown: appendfsync always must have it on disk
	s.Restart()
	if got, err := s.Do("GET", "k"); err != nil || got != "v" {
		t.Fatalf("GET after restart = %q, %v; want v", got, err)
	}
}

func TestPassword(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{Password: "s3cret"})
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING with password = %q, %v", got, err)
	}
	if !strings.Contains(s.URL(), ":s3cret@") {
		t.Fatalf("URL %q lacks the password", s.URL())
	}
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	s.Pause()
	done := make(chan error, 1)
	go func() {
		_, err := s.Do("PING")
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("a paused server answered: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	s.Resume()
	if err := <-done; err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}
}

func TestParseBenchmark(t *testing.T) {
	t.Parallel()
	out := "SET: rps=0.0 (overall: inf) avg_msec=0.007 (overall: 0.007)\r                \rSET: 91743.12 requests per second, p50=0.007 msec\n" +
		"GET: rps=14561.8 (overall: 110757.6)\r   \rGET: 105263.16 requests per second, p50=0.015 msec\n\n"
	res, err := ParseBenchmark(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Test != "SET" || res[0].RPS != 91743.12 || res[1].Test != "GET" || res[1].P50 != 15*time.Microsecond {
		t.Fatalf("ParseBenchmark = %+v", res)
	}
	if _, err := ParseBenchmark("garbage"); err == nil {
		t.Fatal("ParseBenchmark of garbage succeeded")
	}
}

func TestBenchmark(t *testing.T) {
	t.Parallel()
	s := Start(t, Options{})
	res, err := s.Benchmark("-t", "set,get", "-n", "2000", "-c", "1")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].RPS <= 0 {
		t.Fatalf("Benchmark = %+v", res)
	}
}

func TestSentinelFailover(t *testing.T) {
	t.Parallel()
	primary := Start(t, Options{})
	replica := StartReplica(t, primary, Options{})
	sentinels := StartSentinels(t, primary, "lockgate", 3, 1)
	if got, err := PrimaryOf(sentinels[0], "lockgate"); err != nil || got != primary.Addr() {
		t.Fatalf("PrimaryOf = %q, %v; want %s", got, err, primary.Addr())
	}
	if u := SentinelURL("lockgate", sentinels); !strings.HasPrefix(u, "redis+sentinel://127.0.0.1:") || !strings.HasSuffix(u, "/lockgate/0") {
		t.Fatalf("SentinelURL = %q", u)
	}
	primary.Kill()
	if err := waitFor(30*time.Second, func() (bool, error) {
		got, err := PrimaryOf(sentinels[1], "lockgate")
		return got == replica.Addr(), err
	}); err != nil {
		t.Fatalf("the replica was not promoted: %v", err)
	}
	info, err := replica.Do("INFO", "replication")
	if err != nil || !strings.Contains(info, "role:master") {
		t.Fatalf("promoted replica: INFO replication = %q, %v", info, err)
	}
}

func TestCluster(t *testing.T) {
	t.Parallel()
	c := StartCluster(t, 3)
	for _, n := range c.Nodes {
		info, err := n.Do("CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_slots_assigned:16384") {
			t.Fatalf("CLUSTER INFO of %s = %q, %v", n.Addr(), info, err)
		}
	}
	if !strings.HasPrefix(c.URL(), "redis+cluster://127.0.0.1:") || strings.Count(c.URL(), ",") != 2 {
		t.Fatalf("URL = %q", c.URL())
	}
}

// TestSentinelConf: the Sentinels are configured with the timings the
// package names.
func TestSentinelConf(t *testing.T) {
	t.Parallel()
	primary := Start(t, Options{})
	sentinels := StartSentinels(t, primary, "lockgate", 1, 0)
	for _, want := range []string{
		"down-after-milliseconds lockgate " + strconv.FormatInt(SentinelDownAfter.Milliseconds(), 10) + "\n",
		"failover-timeout lockgate " + strconv.FormatInt(SentinelFailoverTimeout.Milliseconds(), 10) + "\n",
		"monitor lockgate " + primary.Addr()[:strings.LastIndex(primary.Addr(), ":")] + " " + strconv.Itoa(primary.Port()) + " 1\n",
	} {
		b, err := os.ReadFile(filepath.Join(sentinels[0].Dir(), "sentinel.conf"))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("sentinel.conf does not say %q: %v\n%s", want, err, b)
		}
	}
}
