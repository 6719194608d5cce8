package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/queue"
)

func portsAllocateCommand() *command {
	var req lockops.PortsRequest
	return &command{
		takesLocks: true,
		noArgs:     true,
		usage:      "ports allocate [--count N] [--ttl D]",
		short:      "lease N free TCP ports to this session (printed one per line)",
		flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&req.Count, "count", 1, "how many ports")
			durationVar(fs, &req.TTL, "ttl", "lease lifetime (default: as a lock, by worker type; LOCK_TTL_MS on Redis)")
		},
		run: func(ctx context.Context, a *app, _ []string) error {
			if req.Count < 1 || req.Count > 1000 || req.TTL < 0 {
				return service.Usagef("ports allocate: --count from 1 to 1000, --ttl not negative")
			}
			return run(ctx, a, func(e *service.Workspace) ([]locks.Lock, error) { return e.Locks().AllocatePorts(ctx, req) },
				func(e *service.Workspace, leased []locks.Lock) error {
					return a.reply(lockops.PortRows(leased), func() {
						for _, l := range leased {
							fmt.Fprintln(a.stdio.Out, strings.TrimPrefix(l.Key, lockops.PortNS+":"))
						}
						fmt.Fprintf(a.stdio.Err, "leased %d port(s) in %s until %s; `lockgate ports refresh` extends, `lockgate ports release` gives back\n",
							len(leased), e.StoreLabel(), stamp(leased[0].ExpiresAt))
					})
				})
		},
	}
}

func portsRefreshCommand() *command {
	var req lockops.PortsRefreshRequest
	return &command{
		usage: "ports refresh [PORT...] [--ttl D]",
		short: "extend this session's port leases (all of them without PORT)",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &req.TTL, "ttl", "new lifetime from now")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			req.Ports = args
			return run(ctx, a, func(e *service.Workspace) ([]locks.Lock, error) { return e.Locks().RefreshPorts(ctx, req) },
				func(e *service.Workspace, ls []locks.Lock) error {
					return a.reply(lockops.PortRows(ls), func() {
						fmt.Fprintf(a.stdio.Err, "refreshed %d port lease(s) in %s\n", len(ls), e.StoreLabel())
					})
				})
		},
	}
}

func portsReleaseCommand() *command {
	var req lockops.PortsReleaseRequest
	return &command{
		usage: "ports release [PORT...] [--force]",
		short: "give back this session's port leases (all of them without PORT); --force frees another session's",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&req.Force, "force", false, "with PORT: release it even if another session leased it (a crashed one; logged)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if req.Force && len(args) == 0 {
				return service.Usagef("ports release --force: name the PORTs to free (see `lockgate ports list`)")
			}
			req.Ports = args
			return a.release(ctx, func(e *service.Workspace) (queue.Finished, error) { return released(e.Locks().ReleasePorts(ctx, req)) }, nil)
		},
	}
}

func portsListCommand() *command {
	return &command{
		noArgs: true,
		usage:  "ports list",
		short:  "every live port lease: port, holder, type, session, expiry",
		run: func(ctx context.Context, a *app, _ []string) error {
			return run(ctx, a, func(e *service.Workspace) ([]lockops.PortRow, error) { return e.Locks().ListPorts(ctx) },
				func(e *service.Workspace, rows []lockops.PortRow) error {
					return a.reply(rows, func() {
						now := e.Now()
						out := [][]string{{"PORT", "HOLDER", "TYPE", "SESSION", "EXPIRES"}}
						for _, r := range rows {
							out = append(out, []string{strconv.Itoa(r.Port), r.Holder, r.HolderType, r.Session, duration.Until(r.ExpiresAt, now)})
						}
						table(a.stdio.Out, out)
					})
				})
		},
	}
}
