package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
	"github.com/lockgate/lockgate/service/queue"
)

// workStopGrace is how long a stopped CMD has to exit after SIGTERM
// before its process group is killed.
const workStopGrace = 10 * time.Second

func workCommand() *command {
	req := queue.WorkRequest{Retries: 1}
	return &command{
		takesLocks: true,
		usage:      "work [--max N] [--retries N] [--ttl D] [--packages FILE] [--json] -- CMD...",
		short:      "the worker loop: claim the next package, run CMD on it, mark it done (or give it back); until the queue is drained",
		long: `The worker loop: claim the next ready package (highest priority, its
dependencies done, its locks free), run CMD for it, and mark it done when
CMD exits 0 (at HEAD). While CMD runs the claim is renewed every third of
its lifetime; a claim found lost (taken over after it expired, or cleared)
stops CMD, which is never marked done. A CMD that fails gives its package
back, to be tried again; after --retries failures of one package the loop
marks it failed. With nothing to claim now the loop waits; it ends when
every package is done (exit 0), when nothing left can be finished because
packages failed (exit 1, naming them), after --max packages, or on SIGINT
or SIGTERM (CMD stopped, its package given back, exit 130).

CMD runs in a process group of its own, without input, with:
  LOCKGATE_PACKAGE        the package id
  LOCKGATE_PACKAGE_TITLE  its title
  LOCKGATE_PACKAGE_FILES  its files and patterns, one a line
  LOCKGATE_PACKAGE_KEYS   its other lock keys, one a line
  LOCKGATE_WORKER, LOCKGATE_WORKER_TYPE, LOCKGATE_SESSION
                          the loop's identity: lockgate commands and hooks
                          CMD runs hold the claim's locks
Without --session or LOCKGATE_SESSION each loop has a session of its own.`,
		keepDash: true,
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &req.Packages)
			fs.IntVar(&req.Max, "max", 0, "stop after `N` packages finished (done or failed) by this loop (0: no limit)")
			fs.IntVar(&req.Retries, "retries", req.Retries, "give a package back `N` times when CMD fails on it, then mark it failed at the next failure (0: at the first)")
			durationVar(fs, &req.TTL, "ttl", "claim lifetime `D`, renewed every third of it while CMD runs (default: the package's ttl, else by worker type)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			before, argv := splitDashDash(args)
			if len(before) > 0 || len(argv) == 0 {
				return service.Usagef("work: want -- CMD... (the command to run for each package)")
			}
			if req.Max < 0 || req.Retries < 0 || req.TTL < 0 {
				return service.Usagef("work: --max, --retries and --ttl must not be negative")
			}
			a.globals.Session = queue.WorkSession(a.globals.Session, getenv)
			// The workspace records events with the context it is opened
			// with: what the loop does after a signal (giving the package
			// back) must reach the workflow branch too.
			// Like lock hold's: a store that did not answer once is asked
			// again at the next renewal of a claim.
			a.purpose.KeepsLocks = true
			// Each package's events are on the remote before the next
			// (queue.WorkLoop settles them), and the summary says so.
			a.purpose.Settles = true
			e, err := a.workspace(context.WithoutCancel(ctx))
			if err != nil {
				return err
			}
			req.Command = argv[0]
			req.Say = func(line string) { fmt.Fprintf(a.stdio.Err, "lockgate work: %s\n", safetext.Text(line)) }
			w := e.Queue().NewWorkLoop(req)
			err = a.runWork(ctx, w, argv)
			var exit *outcome.ExitError
			if err != nil && !errors.As(err, &exit) {
				sum := w.Summary()
				sum.Status = queue.WorkError
				a.partial = map[string]any{"work": sum}
			}
			return err
		},
	}
}

// runWork drives the loop w: runs CMD for each package it hands out,
// forwarding SIGINT and SIGTERM (which interrupt the loop) to CMD, until
// the loop ends; its exit status is 0 when the queue is drained or --max
// packages are finished, 1 when packages failed, 130 when interrupted.
func (a *app) runWork(ctx context.Context, w *queue.WorkLoop, argv []string) error {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	toCMD := make(chan os.Signal, 1)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				w.Interrupt()
				select {
				case toCMD <- s:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	stdio := a.stdio
	if a.globals.JSON {
		stdio.Out = stdio.Err // stdout holds the summary alone
	}
	for {
		job, end, err := w.Next(ctx)
		switch {
		case err != nil:
			return err
		case end != nil:
			return a.endWork(end)
		}
		c := newChild(argv, job.Dir, job.Env, stdio, true)
		if err := c.start(); err != nil {
			w.GiveBack(ctx, job, "CMD cannot be started")
			return service.Usagef("work: %v", err)
		}
		stop := func() { c.stop(workStopGrace) }
		status, lost, err := runKept(c, func() time.Duration { return w.KeepAfter(job) }, func() error { return w.Keep(ctx, job) }, stop, toCMD, func(os.Signal) { stop() })
		if err := w.Conclude(ctx, job, queue.CommandResult{Status: status, Lost: lost, Err: err}); err != nil {
			return err
		}
	}
}

// endWork prints the summary under --json and returns the loop's exit status.
func (a *app) endWork(end *queue.WorkEnd) error {
	// The summary goes to stdout under --json; the loop said what it did.
	if err := a.reply(end.Summary, func() {}); err != nil {
		return err
	}
	switch {
	case end.Summary.Status == queue.WorkInterrupted:
		return &outcome.ExitError{Code: outcome.ExitInterrupted}
	case end.Failed:
		return &outcome.ExitError{Code: outcome.ExitPolicy}
	}
	return nil
}
