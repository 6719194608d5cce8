package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/duration"

	"github.com/lockgate/lockgate/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/model/locks"
)

func portsCommand() *command {
	return &command{usage: "ports <command>", short: "lease free TCP ports to workers, so that parallel servers do not collide", sub: map[string]*command{
		"allocate": portsAllocateCommand(),
		"refresh":  portsRefreshCommand(),
		"release":  portsReleaseCommand(),
		"list":     portsListCommand(),
	}}
}

func portsAllocateCommand() *command {
	var count int
	var ttl time.Duration
	return &command{
		takesLocks: true,
		usage:      "ports allocate [--count N] [--ttl D]",
		short:      "lease N free TCP ports to this session (printed one per line)",
		flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&count, "count", 1, "how many ports")
			durationVar(fs, &ttl, "ttl", "lease lifetime (default: as a lock, by worker type; LOCK_TTL_MS on Redis)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("ports allocate takes no arguments")
			}
			if count < 1 || count > 1000 || ttl < 0 {
				return service.Usagef("ports allocate: --count from 1 to 1000, --ttl not negative")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			if ttl == 0 {
				if ttl, err = e.DefaultTTL(nil); err != nil {
					return err
				}
			}
			leased, err := e.AllocatePorts(ctx, count, ttl)
			if err != nil {
				return err
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, service.PortRows(leased))
			}
			for _, l := range leased {
				fmt.Fprintln(a.stdio.Out, strings.TrimPrefix(l.Key, service.PortNS+":"))
			}
			fmt.Fprintf(a.stdio.Err, "leased %d port(s) in %s until %s; `lockgate ports refresh` extends, `lockgate ports release` gives back\n",
				len(leased), e.StoreLabel(), stamp(leased[0].ExpiresAt))
			return nil
		},
	}
}

func portsRefreshCommand() *command {
	var ttl time.Duration
	return &command{
		usage: "ports refresh [PORT...] [--ttl D]",
		short: "extend this session's port leases (all of them without PORT)",
		flags: func(fs *pflag.FlagSet) {
			durationVar(fs, &ttl, "ttl", "new lifetime from now")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			keys, err := e.MyPorts(ctx, args)
			if err != nil {
				return err
			}
			exact := ttl != 0 // a TTL you name may shorten a lease
			if ttl == 0 {
				if ttl, err = e.DefaultTTL(nil); err != nil {
					return err
				}
			}
			ls, err := e.Mgr.Refresh(ctx, keys, e.Me, ttl, 0, exact)
			if err != nil {
				return err
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, service.PortRows(ls))
			}
			fmt.Fprintf(a.stdio.Err, "refreshed %d port lease(s) in %s\n", len(ls), e.StoreLabel())
			return nil
		},
	}
}

func portsReleaseCommand() *command {
	var force bool
	return &command{
		usage: "ports release [PORT...] [--force]",
		short: "give back this session's port leases (all of them without PORT); --force frees another session's",
		flags: func(fs *pflag.FlagSet) {
			fs.BoolVar(&force, "force", false, "with PORT: release it even if another session leased it (a crashed one; logged)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if force && len(args) == 0 {
				return service.Usagef("ports release --force: name the PORTs to free (see `lockgate ports list`)")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			keys, err := e.MyPorts(ctx, args)
			if err != nil {
				return err
			}
			res, err := e.Mgr.Release(ctx, keys, e.Me, force)
			a.reportRelease(e, res, err)
			return err
		},
	}
}

func portsListCommand() *command {
	return &command{
		usage: "ports list",
		short: "every live port lease: port, holder, type, session, expiry",
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 0 {
				return service.Usagef("ports list takes no arguments")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			entries, err := e.Store.InNamespace(ctx, service.PortNS)
			if err != nil {
				return err
			}
			now := e.Now()
			var live []locks.Lock
			for _, en := range entries {
				if en.Err == nil && !en.Expired(now) {
					live = append(live, en.Lock)
				}
			}
			rows := service.PortRows(live)
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, rows)
			}
			out := [][]string{{"PORT", "HOLDER", "TYPE", "SESSION", "EXPIRES"}}
			for _, r := range rows {
				out = append(out, []string{strconv.Itoa(r.Port), r.Holder, r.HolderType, r.Session, duration.Until(r.ExpiresAt, now)})
			}
			table(a.stdio.Out, out)
			return nil
		},
	}
}
