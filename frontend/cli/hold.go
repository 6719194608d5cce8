package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
)

func holdCommand() *command {
	var ttl, wait time.Duration
	var reason string
	return &command{
		takesLocks: true,
		usage:      "lock hold KEY... [--ttl D] [--wait D] -- CMD...",
		short:      "run CMD while holding the locks, refreshing them; release after; exit with CMD's code",
		keepDash:   true,
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &ttl, "ttl", "lock lifetime, renewed every third of it while CMD runs (default: by worker type, or LOCK_TTL_MS on Redis); never shortens a lock held before")
			durationVar(fs, &wait, "wait", "wait up to `D` for held keys to become free")
			fs.StringVar(&reason, "reason", "", "why the locks are held")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			keys, cmdArgs := splitDashDash(args)
			if len(keys) == 0 && slices.Contains(cmdArgs, "--") {
				// lock hold -- -KEY... -- CMD...: keys that start with "-".
				keys, cmdArgs = splitDashDash(cmdArgs)
			}
			if len(keys) == 0 || len(cmdArgs) == 0 {
				return service.Usagef("lock hold: want KEY... -- CMD...")
			}
			if ttl < 0 || wait < 0 {
				return service.Usagef("--ttl and --wait must not be negative")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			h, err := e.HoldLocks(ctx, service.HoldRequest{Keys: keys, TTL: ttl, Wait: wait, Reason: reason})
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdio.Err, "holding %s in %s while %s runs\n", safetext.Field(strings.Join(h.Keys(), " ")), e.StoreLabel(), safetext.Field(cmdArgs[0]))
			code, runErr := a.runHeld(ctx, h, cmdArgs)
			relErr := h.Release(ctx)
			if runErr != nil {
				return runErr
			}
			if relErr != nil {
				return relErr
			}
			if code != 0 {
				return &outcome.ExitError{Code: code}
			}
			return nil
		},
	}
}

// runHeld runs CMD, refreshing the hold's locks. A refresh that fails
// (the lock was lost) stops CMD: it would otherwise run unprotected.
func (a *app) runHeld(ctx context.Context, h *service.Hold, argv []string) (int, error) {
	c := newChild(argv, h.Dir, nil, a.stdio, false)
	if err := c.start(); err != nil {
		return 0, service.Usagef("lock hold: %v", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	refresh := func() error { return h.Refresh(ctx) }
	stop := func() { c.signal(syscall.SIGTERM) }
	code, lost, err := runKept(c, h.Interval(), refresh, stop, sigs, c.signal) // let CMD decide; we release when it exits
	switch {
	case lost != nil:
		return 0, fmt.Errorf("lock hold: lost the lock while %s ran, stopped it: %w", argv[0], lost)
	case err != nil:
		return 0, fmt.Errorf("lock hold: %w", err)
	}
	return code, nil
}

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

// runKept waits for c, started, calling refresh every interval while it
// runs to keep its locks. A refresh that fails means they were lost: lost
// stops CMD, which must not run unprotected, and runKept returns the
// refresh's error once CMD has exited. A signal on sigs goes to onSignal.
// status is CMD's exit code, 128+N when a signal N ended it.
func runKept(c *child, interval time.Duration, refresh func() error, lost func(), sigs <-chan os.Signal, onSignal func(os.Signal)) (status int, lostErr, err error) {
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	tick := time.NewTicker(max(interval, 10*time.Millisecond))
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
			}
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

func splitDashDash(args []string) (before, after []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}
