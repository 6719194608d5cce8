package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/lockgate/lockgate/internal/outcome"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/locks"
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
			parsed, err := e.ParseKeys(keys)
			if err != nil {
				return err
			}
			if ttl == 0 {
				if ttl, err = e.DefaultTTL(parsed); err != nil {
					return err
				}
			}
			// A lock held before the hold is renewed, never shortened (no
			// ExactTTL), and outlives it: the hold gives back only what it took.
			req := locks.Request{Keys: service.Canonicals(parsed), Owner: e.Me, TTL: ttl, Reason: reason, Action: "hold", Wait: wait}
			res, err := e.Mgr.Acquire(ctx, req)
			if err != nil {
				return err
			}
			var taken []string
			for _, r := range res {
				if !r.Renewed {
					taken = append(taken, r.Lock.Key)
				}
			}
			fmt.Fprintf(a.stdio.Err, "holding %s in %s while %s runs\n", safetext.Field(strings.Join(req.Keys, " ")), e.StoreLabel(), safetext.Field(cmdArgs[0]))
			code, runErr := a.runHeld(ctx, e, req, cmdArgs)
			// Release even when ctx was cancelled: the locks must not outlive CMD.
			var relErr error
			if len(taken) > 0 {
				_, relErr = e.Mgr.Release(context.WithoutCancel(ctx), taken, e.Me, false)
			}
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

// runHeld runs CMD, refreshing the locks every ttl/3. A refresh that fails
// (the lock was lost) stops CMD: it would otherwise run unprotected.
func (a *app) runHeld(ctx context.Context, e *service.Workspace, req locks.Request, argv []string) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdio.In, a.stdio.Out, a.stdio.Err
	cmd.Dir = e.Cwd
	if err := cmd.Start(); err != nil {
		return 0, service.Usagef("lock hold: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	tick := time.NewTicker(max(req.TTL/3, 10*time.Millisecond))
	defer tick.Stop()
	var lost error
	for {
		select {
		case err := <-done:
			var ee *exec.ExitError
			switch {
			case lost != nil:
				return 0, lost
			case errors.As(err, &ee):
				if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
					return 128 + int(st.Signal()), nil
				}
				return ee.ExitCode(), nil
			case err != nil:
				return 0, fmt.Errorf("lock hold: %w", err)
			}
			return 0, nil
		case s := <-sigs:
			_ = cmd.Process.Signal(s) // let CMD decide; we release when it exits
		case <-tick.C:
			if lost != nil {
				continue
			}
			if _, err := e.Mgr.Refresh(ctx, req.Keys, e.Me, req.TTL, 0, false); err != nil {
				lost = fmt.Errorf("lock hold: lost the lock while %s ran, stopped it: %w", argv[0], err)
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		}
	}
}

func splitDashDash(args []string) (before, after []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}
