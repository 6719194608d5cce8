package redistest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readyTimeout bounds how long Start and Restart wait for the server to
// answer PING (loading an append-only file included).
const readyTimeout = 20 * time.Second

// Options configure a server.
type Options struct {
	// Persistent turns on the append-only file with an fsync per write, so
	// that every acknowledged write survives Stop, Kill and Restart.
	// Without it the server keeps nothing on disk and a restart starts
	// empty.
	Persistent bool
	// Password, when set, is required from clients (requirepass).
	Password string
	// Args are extra redis-server arguments ("--maxmemory", "10mb", …).
	Args []string
	// ReplicaOf, when set, is the host:port of the primary the server
	// replicates (--replicaof).
	ReplicaOf string
	// clusterNode turns on cluster mode (StartCluster).
	clusterNode bool
	// sentinel runs the server as a Sentinel (StartSentinels).
	sentinel *sentinelConf
}

// Server is one redis-server process owned by a test.
type Server struct {
	t    testing.TB
	opts Options
	bin  string
	port int
	dir  string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Start starts redis-server on a free loopback port and waits until it
// answers PING; the server is killed when the test ends. It fails the test
// when redis-server is not installed.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redistest: redis-server is not installed (%v); `make test` installs it (scripts/test-deps.sh), or run `apt-get install redis-server`", err)
	}
	s := &Server{t: t, opts: opts, bin: bin, dir: t.TempDir()}
	s.log = filepath.Join(s.dir, "redis.log")
	t.Cleanup(s.Kill)
	// Another process may take the port between our probe and the
	// server's bind: try a few ports.
	var lastErr error
	for range 5 {
		s.port, err = freePort(opts.clusterNode)
		if err != nil {
			t.Fatalf("redistest: %v", err)
		}
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

// freePort returns a loopback TCP port that was free a moment ago. With
// bus, the port 10000 above it (a cluster node's bus) was free too.
func freePort(bus bool) (int, error) {
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if !bus {
			l.Close()
			return port, nil
		}
		if port+10000 <= 65535 {
			if b, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000))); err == nil {
				b.Close()
				l.Close()
				return port, nil
			}
		}
		l.Close()
	}
	return 0, errors.New("find a free port with a free bus port 10000 above it: none in 100 tries")
}

func (s *Server) args() []string {
	if s.opts.sentinel != nil {
		// Sentinel reads and rewrites a file of its own (sentinelArgs).
		return []string{s.sentinelConf(), "--sentinel"}
	}
	a := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--daemonize", "no",
		"--save", "",
		"--logfile", "",
	}
	if s.opts.Persistent {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		a = append(a, "--appendonly", "no")
	}
	if s.opts.Password != "" {
		a = append(a, "--requirepass", s.opts.Password, "--masterauth", s.opts.Password)
	}
	if s.opts.ReplicaOf != "" {
		host, port, _ := net.SplitHostPort(s.opts.ReplicaOf)
		a = append(a, "--replicaof", host, port)
	}
	if s.opts.clusterNode {
		a = append(a, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.Itoa(clusterNodeTimeoutMS))
	}
	return append(a, s.opts.Args...)
}

// start launches the process and waits for PING.
func (s *Server) start() error {
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, s.args()...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = s.dir
	dieWithParent(cmd)
	// Pdeathsig follows the thread that forks: keep this goroutine on one
	// thread while starting, and the runtime never ends a thread it did
	// not lock.
	runtime.LockOSThread()
	err = cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		logf.Close()
		return fmt.Errorf("start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(done); err != nil {
		s.Kill()
		return fmt.Errorf("redis-server on port %d: %w\n%s", s.port, err, s.logTail())
	}
	return nil
}

// waitReady polls PING until the server answers PONG, exits, or
// readyTimeout passes. A server still loading its data answers -LOADING.
func (s *Server) waitReady(done <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errors.New("exited before it answered PING")
		default:
		}
		reply, err := s.Do("PING")
		if err == nil && reply == "PONG" {
			return nil
		}
		last = err
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("no PONG within %s: %v", readyTimeout, last)
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// Port is the server's TCP port; it stays the same across Restart.
func (s *Server) Port() int { return s.port }

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Dir is the server's working directory (its append-only file, its log).
func (s *Server) Dir() string { return s.dir }

// URL is a redis:// URL of database 0, with the password when one is set.
func (s *Server) URL() string {
	u := url.URL{Scheme: "redis", Host: s.Addr(), Path: "/0"}
	if s.opts.Password != "" {
		u.User = url.UserPassword("", s.opts.Password)
	}
	return u.String()
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 10s) and waits
// until it has exited, so that its port is free. A persistent server has
// every acknowledged write on disk; any other loses its data.
func (s *Server) Stop() {
	s.signalAndWait(syscall.SIGTERM, 10*time.Second)
}

// Kill kills the server with SIGKILL and waits for it; it is a no-op for a
// server that is not running.
func (s *Server) Kill() {
	s.signalAndWait(syscall.SIGKILL, 10*time.Second)
}

func (s *Server) signalAndWait(sig syscall.Signal, grace time.Duration) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	// A paused server would ignore SIGTERM until continued.
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
	s.mu.Lock()
	if s.cmd == cmd {
		s.cmd, s.done = nil, nil
	}
	s.mu.Unlock()
}

// Restart stops the server if it runs and starts it again on the same port
// and directory, failing the test when it does not come back.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

// Pause stops the server process (SIGSTOP): connections stay open but
// nothing is answered, the way a hung or overloaded server behaves.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Do sends one command on a new connection (authenticating first when the
// server has a password) and returns the reply of a simple string, an
// integer or a bulk string; an error reply is returned as an error. It is
// for setting a server up in tests, not for speed.
func (s *Server) Do(args ...string) (string, error) {
	conn, err := net.DialTimeout("tcp", s.Addr(), 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(conn)
	if s.opts.Password != "" {
		if _, err := roundTrip(conn, r, "AUTH", s.opts.Password); err != nil {
			return "", fmt.Errorf("AUTH: %w", err)
		}
	}
	return roundTrip(conn, r, args...)
}

func roundTrip(conn net.Conn, r *bufio.Reader, args ...string) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write(b.Bytes()); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", fmt.Errorf("bad bulk length %q", line)
		}
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	default:
		return "", fmt.Errorf("unsupported reply %q", line)
	}
}

// BenchResult is one line of `redis-benchmark -q`.
type BenchResult struct {
	Test string  // SET, GET, …
	RPS  float64 // requests per second
	P50  time.Duration
}

var benchLine = regexp.MustCompile(`^([A-Za-z_ ()0-9-]+): ([0-9.]+) requests per second(?:, p50=([0-9.]+) msec)?`)

// Benchmark runs redis-benchmark against the server with -q and the given
// arguments ("-t", "set,get", "-n", "100000", "-c", "1") and parses its
// summary lines.
func (s *Server) Benchmark(args ...string) ([]BenchResult, error) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark is not installed (%w); `make test` installs it", err)
	}
	full := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.port), "-q"}, args...)
	if s.opts.Password != "" {
		full = append(full, "-a", s.opts.Password)
	}
	out, err := exec.Command(bin, full...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark: %w\n%s", err, out)
	}
	return ParseBenchmark(string(out))
}

// ParseBenchmark parses the output of `redis-benchmark -q`, whose progress
// updates are separated by carriage returns.
func ParseBenchmark(out string) ([]BenchResult, error) {
	var res []BenchResult
	for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\r' || r == '\n' }) {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		rps, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		r := BenchResult{Test: m[1], RPS: rps}
		if m[3] != "" {
			if ms, err := strconv.ParseFloat(m[3], 64); err == nil {
				r.P50 = time.Duration(ms * float64(time.Millisecond))
			}
		}
		res = append(res, r)
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("no results in redis-benchmark output %q", out)
	}
	return res, nil
}
