package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestServeStopAnswersWaiters: SIGTERM while a request of the JSON API
// waits for a lock another holds answers that request 503 interrupted
// with the error object, logs its line, and exits 0 after the drain.
func TestServeStopAnswersWaiters(t *testing.T) {
	t.Parallel()
	c := newCLIRepo(t)
	if code, out := c.run("admin", "init"); code != 0 {
		t.Fatalf("lockgate init: exit %d: %s", code, out)
	}
	code, out := c.run("admin", "serve", "user", "add", "alice")
	if code != 0 {
		t.Fatalf("serve user add: exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	alice := lines[len(lines)-1]
	if code, out := c.run("bob", "lock", "acquire", "art/w.psd"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}

	cmd := c.cmd("server", "serve", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // after a failure only: it has exited otherwise
	scan := bufio.NewScanner(stderr)
	addr := ""
	for addr == "" && scan.Scan() {
		if _, rest, ok := strings.Cut(scan.Text(), " on http://"); ok {
			addr, _, _ = strings.Cut(rest, " ")
		}
	}
	if addr == "" {
		t.Fatal("lockgate serve said no address")
	}
	var (
		logMu sync.Mutex
		log   []string
	)
	exited := make(chan error, 1)
	go func() {
		for scan.Scan() {
			logMu.Lock()
			log = append(log, scan.Text())
			logMu.Unlock()
		}
		exited <- cmd.Wait()
	}()

	// One connection: the waiting request goes on the connection that
	// has answered /healthz, so the server has accepted it before the
	// signal and the listener's close cannot drop it.
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := client.Get("http://" + addr + "/healthz")
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz never answered: %v", err)
		}
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	answered := make(chan answer, 1)
	go func() {
		req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/locks", strings.NewReader(`{"keys":["art/w.psd"],"wait":"30s"}`))
		if err != nil {
			answered <- answer{err: err}
			return
		}
		req.SetBasicAuth("alice", alice)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		answered <- answer{status: res.StatusCode, body: string(raw), err: err}
	}()
	// The request is on its way: a signal before the server reads it
	// still finds the connection accepted, and the request is answered
	// as interrupted all the same.
	time.Sleep(500 * time.Millisecond)
	select {
	case a := <-answered:
		t.Fatalf("the request was answered before the stop: %+v", a)
	default:
	}
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var a answer
	select {
	case a = <-answered:
	case <-time.After(25 * time.Second):
		t.Fatal("the waiting request had no answer 25s after SIGTERM")
	}
	if a.err != nil {
		t.Fatalf("the waiting request: %v", a.err)
	}
	var body struct {
		Error struct {
			Code      int    `json:"code"`
			Class     string `json:"class"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &body); err != nil || a.status != http.StatusServiceUnavailable ||
		body.Error.Code != 130 || body.Error.RequestID == "" || body.Error.Message == "" {
		t.Fatalf("the waiting request after SIGTERM: %d %v: %s; want 503 with the error object, code 130", a.status, err, a.body)
	}
	var exitErr error
	select {
	case exitErr = <-exited:
	case <-time.After(25 * time.Second):
		t.Fatal("lockgate serve did not stop on SIGTERM")
	}
	logMu.Lock()
	defer logMu.Unlock()
	all := strings.Join(log, "\n")
	var ee *exec.ExitError
	if exitErr != nil {
		if errors.As(exitErr, &ee) {
			t.Fatalf("lockgate serve after SIGTERM: exit %d (%s after the signal): %s", ee.ExitCode(), time.Since(start), all)
		}
		t.Fatal(exitErr)
	}
	if !strings.Contains(all, "POST /api/v1/locks 503 user=alice") || !strings.Contains(all, "lockgate: stopped") {
		t.Fatalf("the log after SIGTERM lacks the request's line or the stop: %s", all)
	}
}
