package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/lockgate/lockgate/service/outcome"

	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
)

func pauseCommand() *command {
	var reason string
	var ttl time.Duration
	return &command{
		takesLocks: true,
		usage:      "pause FEATURE [--reason R] [--ttl D]",
		short:      "stop the line: take feature:FEATURE:pause (status, wait: see below)",
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&reason, "reason", "", "why the line is stopped (shown to every worker)")
			durationVar(fs, &ttl, "ttl", "how long the pause lasts unless released (default by worker type)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("pause: give exactly one FEATURE")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			res, err := e.Pause(ctx, args[0], reason, ttl)
			if err != nil {
				return err
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, acquiredViews(res))
			}
			fmt.Fprintf(a.stdio.Err, "paused %s in %s until %s; `lockgate unpause %s` resumes\n", safetext.Field(args[0]), e.StoreLabel(), stamp(res[0].Lock.ExpiresAt), hint.Quote(args[0]))
			return nil
		},
		sub: map[string]*command{
			"status": pauseStatusCommand(),
			"wait":   pauseWaitCommand(),
		},
	}
}

func unpauseCommand() *command {
	var force bool
	return &command{
		usage: "unpause FEATURE [--force]",
		short: "release feature:FEATURE:pause",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&force, "force", false, "release another worker's pause (logged)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("unpause: give exactly one FEATURE")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			res, err := e.Unpause(ctx, args[0], force)
			a.reportRelease(e, res, err)
			return err
		},
	}
}

func pauseStatusCommand() *command {
	return &command{
		usage: "pause status FEATURE",
		short: "exit 0 when not paused (or paused by you), 4 when paused by another",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("pause status: give exactly one FEATURE")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			st, err := e.PauseStatus(ctx, args[0])
			if err != nil {
				return err
			}
			if a.globals.JSON {
				err = writeJSON(a.stdio.Out, st)
			} else {
				fmt.Fprintln(a.stdio.Out, describePause(st))
			}
			if err == nil && st.Paused && !st.Mine {
				return &outcome.ExitError{Code: outcome.ExitLockFailed}
			}
			return err
		},
	}
}

func describePause(st service.PauseState) string {
	f := safetext.Field
	if !st.Paused {
		return fmt.Sprintf("%s: not paused", f(st.Feature))
	}
	l := st.Lock
	s := fmt.Sprintf("%s: paused by %s (%s) until %s", f(st.Feature), f(l.Holder), f(l.HolderType), stamp(l.ExpiresAt))
	if l.Reason != "" {
		s += ": " + f(l.Reason)
	}
	if st.Mine {
		s += " (your pause)"
	}
	return s
}

func pauseWaitCommand() *command {
	var timeout time.Duration
	return &command{
		usage: "pause wait FEATURE [--timeout D]",
		short: "block until FEATURE is not paused by another (exit 4 on timeout)",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &timeout, "timeout", "give up after `D` (default: wait as long as it takes)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("pause wait: give exactly one FEATURE")
			}
			if timeout < 0 {
				return service.Usagef("--timeout must not be negative")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			start := time.Now()
			poll := 10 * time.Millisecond
			announced := false
			for {
				st, err := e.PauseStatus(ctx, args[0])
				if err != nil {
					return err
				}
				if !st.Paused || st.Mine {
					if a.globals.JSON {
						return writeJSON(a.stdio.Out, st)
					}
					fmt.Fprintln(a.stdio.Out, describePause(st))
					return nil
				}
				if !announced {
					fmt.Fprintf(a.stdio.Err, "waiting: %s\n", describePause(st))
					announced = true
				}
				if timeout > 0 && time.Since(start) >= timeout {
					fmt.Fprintf(a.stdio.Err, "lockgate: timed out after %s: %s\n", timeout, describePause(st))
					return &outcome.ExitError{Code: outcome.ExitLockFailed}
				}
				sleep := poll
				if timeout > 0 {
					sleep = min(sleep, timeout-time.Since(start))
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(max(sleep, time.Millisecond)):
				}
				poll = min(poll*2, 500*time.Millisecond)
			}
		},
	}
}
