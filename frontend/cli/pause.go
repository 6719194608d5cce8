package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/queue"
	"github.com/lockgate/lockgate/service/session"
)

func pauseCommand() *command {
	var req lockops.PauseRequest
	return &command{
		takesLocks: true,
		oneArg:     "FEATURE",
		usage:      "pause FEATURE [--reason R] [--ttl D]",
		short:      "stop the line: take feature:FEATURE:pause (pause status, pause wait: its subcommands)",
		flags: func(fs *pflag.FlagSet) {
			fs.StringVar(&req.Reason, "reason", "", "why the line is stopped (shown to every worker)")
			durationVar(fs, &req.TTL, "ttl", "how long the pause lasts unless released (default by worker type)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			req.Feature = args[0]
			return run(ctx, a, func(e *service.Workspace) ([]locks.Result, error) { return e.Locks().Pause(ctx, req) },
				func(e *service.Workspace, res []locks.Result) error {
					return a.reply(session.AcquiredViews(res), func() {
						fmt.Fprintf(a.stdio.Err, "paused %s in %s until %s; `lockgate unpause %s` resumes\n",
							safetext.Field(req.Feature), e.StoreLabel(), stamp(res[0].Lock.ExpiresAt), hint.Quote(req.Feature))
					})
				})
		},
		sub: map[string]*command{"status": pauseStatusCommand(), "wait": pauseWaitCommand()},
	}
}

func unpauseCommand() *command {
	var req lockops.UnpauseRequest
	return &command{
		oneArg: "FEATURE",
		usage:  "unpause FEATURE [--force]",
		short:  "release feature:FEATURE:pause",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&req.Force, "force", false, "release another worker's pause (logged)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			req.Feature = args[0]
			return a.release(ctx, func(e *service.Workspace) (queue.Finished, error) { return released(e.Locks().Unpause(ctx, req)) }, nil)
		},
	}
}

func pauseStatusCommand() *command {
	return &command{
		oneArg: "FEATURE",
		usage:  "pause status FEATURE",
		short:  "exit 0 when not paused (or paused by you), 4 when paused by another",
		run: func(ctx context.Context, a *app, args []string) error {
			return run(ctx, a, func(e *service.Workspace) (lockops.PauseState, error) {
				return e.Locks().PauseStatus(ctx, lockops.PauseStatusRequest{Feature: args[0]})
			}, func(_ *service.Workspace, st lockops.PauseState) error {
				if err := a.reply(st, func() { fmt.Fprintln(a.stdio.Out, describePause(st)) }); err != nil || !st.Blocks() {
					return err
				}
				return &outcome.ExitError{Code: outcome.ExitLockFailed}
			})
		},
	}
}

func describePause(st lockops.PauseState) string {
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
		oneArg: "FEATURE",
		usage:  "pause wait FEATURE [--timeout D]",
		short:  "block until FEATURE is not paused by another (exit 4 on timeout)",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &timeout, "timeout", "give up after `D` (default: wait as long as it takes)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if timeout < 0 {
				return service.Usagef("--timeout must not be negative")
			}
			req := lockops.PauseWaitRequest{Feature: args[0], Timeout: timeout, Waiting: func(st lockops.PauseState) {
				fmt.Fprintf(a.stdio.Err, "waiting: %s\n", describePause(st))
			}}
			return run(ctx, a, func(e *service.Workspace) (lockops.PauseWait, error) { return e.Locks().WaitPause(ctx, req) },
				func(_ *service.Workspace, w lockops.PauseWait) error {
					if w.TimedOut {
						fmt.Fprintf(a.stdio.Err, "lockgate: timed out after %s: %s\n", timeout, describePause(w.State))
						return &outcome.ExitError{Code: outcome.ExitLockFailed}
					}
					return a.reply(w.State, func() { fmt.Fprintln(a.stdio.Out, describePause(w.State)) })
				})
		},
	}
}
