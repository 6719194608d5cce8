package redistest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Timings of the Sentinels StartSentinels starts: short, so that a test
// sees a failover within seconds, long enough that a busy machine does not
// make a Sentinel think a live primary is down.
const (
	SentinelDownAfter       = 1000 * time.Millisecond
	SentinelFailoverTimeout = 3000 * time.Millisecond
)

// clusterNodeTimeoutMS is cluster-node-timeout of StartCluster's nodes.
const clusterNodeTimeoutMS = 2000

// sentinelConf is what a Sentinel monitors.
type sentinelConf struct {
	master  string // the master name
	primary string // host:port of the primary
	quorum  int
}

// sentinelConf writes the Sentinel's configuration file the first time
// the server starts and returns its path; later starts keep the file,
// which Sentinel rewrites with what it learnt (the current primary).
func (s *Server) sentinelConf() string {
	path := filepath.Join(s.dir, "sentinel.conf")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	c := s.opts.sentinel
	host, port, _ := net.SplitHostPort(c.primary)
	conf := fmt.Sprintf(`port %d
bind 127.0.0.1
dir %s
sentinel monitor %s %s %s %d
sentinel down-after-milliseconds %[3]s %[7]d
sentinel failover-timeout %[3]s %[8]d
sentinel parallel-syncs %[3]s 1
`, s.port, s.dir, c.master, host, port, c.quorum, SentinelDownAfter.Milliseconds(), SentinelFailoverTimeout.Milliseconds())
	if s.opts.Password != "" {
		conf += fmt.Sprintf("sentinel auth-pass %s %s\n", c.master, s.opts.Password)
	}
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		s.t.Fatalf("redistest: write sentinel.conf: %v", err)
	}
	return path
}

// StartReplica starts a server that replicates primary (with primary's
// password, if any) and waits until its link to the primary is up, so
// that a write to the primary can be confirmed by it (WAIT).
func StartReplica(t testing.TB, primary *Server, opts Options) *Server {
	t.Helper()
	opts.ReplicaOf = primary.Addr()
	opts.Password = primary.opts.Password
	r := Start(t, opts)
	if err := waitFor(readyTimeout, func() (bool, error) {
		info, err := r.Do("INFO", "replication")
		return strings.Contains(info, "master_link_status:up"), err
	}); err != nil {
		t.Fatalf("redistest: replica %s of %s: %v\n%s", r.Addr(), primary.Addr(), err, r.logTail())
	}
	return r
}

// StartSentinels starts n Sentinels that monitor primary under the name
// master, with a quorum of n/2+1, and waits until each knows the primary's
// replicas and the other Sentinels.
func StartSentinels(t testing.TB, primary *Server, master string, n, replicas int) []*Server {
	t.Helper()
	quorum := n/2 + 1
	var ss []*Server
	for range n {
		ss = append(ss, Start(t, Options{Password: primary.opts.Password,
			sentinel: &sentinelConf{master: master, primary: primary.Addr(), quorum: quorum}}))
	}
	for _, s := range ss {
		if err := waitFor(readyTimeout, func() (bool, error) {
			out, err := s.Do("SENTINEL", "CKQUORUM", master)
			if err != nil {
				// Not yet enough Sentinels seen: keep waiting.
				return false, nil //nolint:nilerr // an answer to wait for, not a failure
			}
			info, err := s.Do("INFO", "sentinel")
			ok := strings.HasPrefix(out, "OK") &&
				strings.Contains(info, "slaves="+strconv.Itoa(replicas)+",") &&
				strings.Contains(info, "sentinels="+strconv.Itoa(n))
			return ok, err
		}); err != nil {
			t.Fatalf("redistest: sentinel %s: %v\n%s", s.Addr(), err, s.logTail())
		}
	}
	return ss
}

// PrimaryOf asks a Sentinel which server it takes for master's primary.
func PrimaryOf(sentinel *Server, master string) (string, error) {
	// The reply is an array of two bulk strings, which Do does not read:
	// INFO sentinel names the primary in one line.
	info, err := sentinel.Do("INFO", "sentinel")
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(info, "\n") {
		if strings.Contains(line, "name="+master+",") {
			for f := range strings.SplitSeq(strings.TrimSpace(line), ",") {
				if addr, ok := strings.CutPrefix(f, "address="); ok {
					return addr, nil
				}
			}
		}
	}
	return "", fmt.Errorf("sentinel %s does not monitor %s", sentinel.Addr(), master)
}

// SentinelURL is the redis+sentinel:// URL of master through the
// Sentinels, database 0, with the servers' password when one is set.
func SentinelURL(master string, sentinels []*Server) string {
	addrs := make([]string, len(sentinels))
	for i, s := range sentinels {
		addrs[i] = s.Addr()
	}
	user := ""
	if p := sentinels[0].opts.Password; p != "" {
		user = url.UserPassword("", p).String() + "@"
	}
	return "redis+sentinel://" + user + strings.Join(addrs, ",") + "/" + master + "/0"
}

// Cluster is a Redis Cluster of primaries started by StartCluster.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts n cluster nodes (n >= 3), each a primary, makes them
// one cluster with `redis-cli --cluster create` and waits until every node
// says the cluster is ok.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redistest: redis-cli is not installed (%v); it comes with redis-server (`apt-get install redis-tools`)", err)
	}
	c := &Cluster{}
	args := []string{"--cluster", "create"}
	for range n {
		s := Start(t, Options{clusterNode: true})
		c.Nodes = append(c.Nodes, s)
		args = append(args, s.Addr())
	}
	args = append(args, "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, s := range c.Nodes {
		if err := waitFor(readyTimeout, func() (bool, error) {
			info, err := s.Do("CLUSTER", "INFO")
			return strings.Contains(info, "cluster_state:ok") &&
				strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(n)), err
		}); err != nil {
			t.Fatalf("redistest: cluster node %s: %v\n%s", s.Addr(), err, s.logTail())
		}
	}
	return c
}

// URL is the redis+cluster:// URL of the cluster, naming every node.
func (c *Cluster) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr()
	}
	return "redis+cluster://" + strings.Join(addrs, ",")
}

// waitFor polls cond every 20ms until it says yes, or fails with its last
// error (or "not yet") after timeout.
func waitFor(timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok && err == nil {
			return nil
		}
		last = err
		if time.Now().After(deadline) {
			if last == nil {
				return fmt.Errorf("not ready within %s", timeout)
			}
			return fmt.Errorf("not ready within %s: %w", timeout, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitReplicated waits until replica has processed every write primary
// had when it was called (its replication offsets).
func WaitReplicated(primary, replica *Server) error {
	info, err := primary.Do("INFO", "replication")
	if err != nil {
		return err
	}
	want := infoField(info, "master_repl_offset")
	return waitFor(readyTimeout, func() (bool, error) {
		info, err := replica.Do("INFO", "replication")
		got := infoField(info, "slave_repl_offset")
		return err == nil && got >= want, err
	})
}

// infoField reads a number of an INFO reply; -1 when it is not there.
func infoField(info, name string) int64 {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}
