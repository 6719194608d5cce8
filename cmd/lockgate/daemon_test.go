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
		base := ts.MkAbs(args[1])
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			ts.Fatalf("gitdaemon: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
			"--informative-errors", "--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), base)
		cmd.Env = gittest.Env(ts.Getenv("HOME"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
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
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("gitdaemon: not listening on %s: %v", addr, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		ts.Setenv(args[2], "git://"+addr+"/")
	default:
		ts.Fatalf("usage: gitdaemon start BASEDIR VAR | gitdaemon stop")
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
