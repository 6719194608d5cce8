package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/outcome"
)

func holdCommand() *command {
	var req lockops.HoldRequest
	return &command{
		takesLocks: true,
		usage:      "lock hold KEY... [--ttl D] [--wait D] -- CMD...",
		short:      "run CMD while holding the locks, refreshing them; release after; exit with CMD's code",
		keepDash:   true,
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &req.TTL, "ttl", "lock lifetime, renewed every third of it while CMD runs (default: by worker type, or LOCK_TTL_MS on Redis); never shortens a lock held before")
			durationVar(fs, &req.Wait, "wait", "wait up to `D` for held keys to become free")
			fs.StringVar(&req.Reason, "reason", "", "why the locks are held")
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
			if req.TTL < 0 || req.Wait < 0 {
				return service.Usagef("--ttl and --wait must not be negative")
			}
			// CMD may run for hours: a store that did not answer once (a
			// failover, a paused server) is asked again at the next
			// renewal, not given up on for the rest of the command.
			a.purpose.KeepsLocks = true
			e, err := a.workspace(ctx)
			if err != nil {
				return err
			}
			req.Keys = keys
			h, err := e.Locks().Hold(ctx, req)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdio.Err, "holding %s in %s while %s runs\n", safetext.Field(strings.Join(h.Keys(), " ")), e.StoreLabel(), safetext.Field(cmdArgs[0]))
			code, runErr := a.runHeld(ctx, h, cmdArgs)
			// The locks go however CMD ended; an error running it comes first.
			if err := cmp.Or(runErr, h.Release(ctx)); err != nil || code == 0 {
				return err
			}
			return &outcome.ExitError{Code: code}
		},
	}
}

// runHeld runs CMD, refreshing the hold's locks. A refresh the store
// could not confirm is tried again while the locks' expiry is ahead; one
// that fails (a lock was lost, or not renewed in time) stops CMD: it would
// otherwise run unprotected.
func (a *app) runHeld(ctx context.Context, h *lockops.Hold, argv []string) (int, error) {
	c := newChild(argv, h.Dir, nil, a.stdio, false)
	if err := c.start(); err != nil {
		return 0, service.Usagef("lock hold: %v", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	warned := false
	refresh := func() error {
		if err := h.Refresh(ctx); err != nil {
			return err
		}
		// Once per outage: that the store did not answer, and that it did
		// again.
		switch u := h.Unconfirmed(); {
		case u != nil && !warned:
			fmt.Fprintf(a.stdio.Err, "lockgate: warning: lock hold: could not renew the locks (they are held until %s; trying again until shortly before then): %v\n",
				h.Expires().UTC().Format(time.RFC3339), u)
			warned = true
		case u == nil && warned:
			fmt.Fprintf(a.stdio.Err, "lock hold: renewed the locks again\n")
			warned = false
		}
		return nil
	}
	stop := func() { c.signal(syscall.SIGTERM) }
	code, lost, err := runKept(c, h.Next, refresh, stop, sigs, c.signal) // let CMD decide; we release when it exits
	var expiring *locks.ExpiringError
	switch {
	case errors.As(lost, &expiring):
		return 0, fmt.Errorf("lock hold: the lock store did not confirm a renewal while %s ran, stopped it before the locks expire: %w", argv[0], lost)
	case lost != nil:
		return 0, fmt.Errorf("lock hold: lost the lock while %s ran, stopped it: %w", argv[0], lost)
	case err != nil:
		return 0, fmt.Errorf("lock hold: %w", err)
	}
	return code, nil
}
