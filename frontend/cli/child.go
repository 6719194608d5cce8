package cli

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"time"
)

// child is the user's command that lockgate runs while it keeps locks for
// it: lock hold's and work's.
type child struct {
	cmd *exec.Cmd
	// group: CMD runs in a process group of its own, which is stopped as a
	// whole, so that what CMD started stops with it; on Linux it is also
	// told to stop (SIGTERM) when lockgate dies.
	group bool
	// kill fires once a stop's grace has passed: the group is killed.
	kill <-chan time.Time
}

// newChild prepares argv to run in dir with stdio (no input in a group of
// its own: a background process group reading the terminal would be
// stopped), with env added to lockgate's environment.
func newChild(argv []string, dir string, env []string, stdio Stdio, group bool) *child {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.In, stdio.Out, stdio.Err
	if group {
		cmd.Stdin = nil
	}
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...) // the last of a name wins
	}
	return &child{cmd: cmd, group: group}
}

func (c *child) start() error {
	if !c.group {
		return c.cmd.Start()
	}
	c.cmd.SysProcAttr = groupAttrs()
	// The kernel's signal on lockgate's death follows the thread that
	// forks: keep this goroutine on one thread while starting (the
	// runtime never ends a thread it did not lock).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return c.cmd.Start()
}

// signal sends s to CMD, or to its whole group.
func (c *child) signal(s os.Signal) {
	if sig, ok := s.(syscall.Signal); ok && c.group {
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
		return
	}
	_ = c.cmd.Process.Signal(s)
}

// stop asks CMD to stop (SIGTERM) and has runKept kill it (SIGKILL) if it
// has not exited after grace. Only runKept's goroutine calls it.
func (c *child) stop(grace time.Duration) {
	if c.kill != nil {
		return
	}
	c.signal(syscall.SIGTERM)
	c.kill = time.After(grace)
}

// runKept waits for c, started, calling refresh while it runs to keep its
// locks, each time after the wait next returns (asked again after each
// refresh: a refresh the store could not confirm is tried again sooner).
// A refresh that fails means they were lost: lost stops CMD, which must
// not run unprotected, and runKept returns the refresh's error once CMD
// has exited. A signal on sigs goes to onSignal. status is CMD's exit
// code, 128+N when a signal N ended it.
func runKept(c *child, next func() time.Duration, refresh func() error, lost func(), sigs <-chan os.Signal, onSignal func(os.Signal)) (status int, lostErr, err error) {
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	tick := time.NewTimer(max(next(), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			status, err := exitStatus(err)
			return status, lostErr, err
		case s := <-sigs:
			onSignal(s)
		case <-c.kill:
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			c.kill = nil
		case <-tick.C:
			if lostErr != nil {
				continue
			}
			if err := refresh(); err != nil {
				lostErr = err
				lost()
				continue
			}
			tick.Reset(max(next(), 10*time.Millisecond))
		}
	}
}

// exitStatus is the exit code of a command that ended with err (from
// Wait): 128+N when signal N killed it.
func exitStatus(err error) (int, error) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

// splitDashDash splits args at their first "--": what comes before it,
// and the command line after it.
func splitDashDash(args []string) (before, after []string) {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i], args[i+1:]
	}
	return args, nil
}
