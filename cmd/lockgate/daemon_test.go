package main

import (
	"fmt"
	"net"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lockgate/lockgate/internal/gittest"
)

var (
	daemonsMu sync.Mutex
	daemons   = map[*testscript.TestScript]*exec.Cmd{}
)

func gitDaemonCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: gitdaemon start BASEDIR VAR | gitdaemon stop")
	}
	daemonsMu.Lock()
	defer daemonsMu.Unlock()
	switch {
	case args[0] == "stop" && len(args) == 1:
		cmd := daemons[ts]
		if cmd == nil {
			ts.Fatalf("gitdaemon stop: no daemon running")
		}
		stopDaemon(cmd)
		delete(daemons, ts)
	case args[0] == "start" && len(args) == 3:
		if daemons[ts] != nil {
			ts.Fatalf("gitdaemon start: one is running")
		}
		cmd, url, err := startGitDaemon(ts.MkAbs(args[1]), gittest.Env(ts.Getenv("HOME")))
		if err != nil {
			ts.Fatalf("gitdaemon: %v", err)
		}
		daemons[ts] = cmd
		ts.Defer(func() {
			daemonsMu.Lock()
			defer daemonsMu.Unlock()
			if c := daemons[ts]; c != nil {
				stopDaemon(c)
				delete(daemons, ts)
			}
		})
		ts.Setenv(args[2], url)
	default:
		ts.Fatalf("usage: gitdaemon start BASEDIR VAR | gitdaemon stop")
	}
}

// startGitDaemon serves the repositories under base with `git daemon` on
// 127.0.0.1, pushes allowed, and returns it once it listens, with its
// git:// URL (ending in '/').
func startGitDaemon(base string, env []string) (*exec.Cmd, string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--informative-errors", "--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), base)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return cmd, "git://" + addr + "/", nil
		}
		if time.Now().After(deadline) {
			stopDaemon(cmd)
			return nil, "", fmt.Errorf("not listening on %s: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopDaemon stops git daemon and the processes it forked.
func stopDaemon(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}
