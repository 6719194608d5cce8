package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/locks"
)

// Port leases are locks on `port:<N>` keys: the lock store makes them
// exclusive across sessions (and machines, on Redis), and they expire like
// any lock. `port:` is not a namespace users may lock directly: ports are
// only handed out by `ports allocate`, after checking them free by binding.
const portNS = "port"

func portKey(p int) string { return portNS + ":" + strconv.Itoa(p) }

func portsCommand() *command {
	return &command{usage: "ports <command>", sub: map[string]*command{
		"allocate": portsAllocateCommand(),
		"refresh":  portsRefreshCommand(),
		"release":  portsReleaseCommand(),
		"list":     portsListCommand(),
	}}
}

// freePort asks the kernel for a TCP port that is free on this machine.
func freePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
				ttl = a.defaultTTL(e, nil)
			}
			leased, err := allocatePorts(ctx, e, count, ttl)
			if err != nil {
				return err
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, portRows(leased))
			}
			for _, l := range leased {
				fmt.Fprintln(a.stdio.Out, strings.TrimPrefix(l.Key, portNS+":"))
			}
			fmt.Fprintf(a.stdio.Err, "leased %d port(s) in %s until %s; `lockgate ports refresh` extends, `lockgate ports release` gives back\n",
				len(leased), e.StoreLabel(), stamp(leased[0].ExpiresAt))
			return nil
		},
	}
}

// allocatePorts leases count ports that are free on this machine to e's
// session: a port the kernel offers may still be leased to a session that
// is not listening on it yet, so such ports are skipped.
func allocatePorts(ctx context.Context, e *service.Workspace, count int, ttl time.Duration) ([]locks.Lock, error) {
	var leased []locks.Lock
	for tries := 0; len(leased) < count; tries++ {
		if tries > 50*count {
			return leased, fmt.Errorf("ports allocate: no free port could be leased after %d tries", tries)
		}
		p, err := freePort()
		if err != nil {
			return leased, err
		}
		res, err := e.Mgr.Acquire(ctx, locks.Request{Keys: []string{portKey(p)}, Owner: e.Me, TTL: ttl,
			Action: "port", Reason: "port lease"})
		var held *locks.HeldError
		if errors.As(err, &held) {
			continue // leased to someone else, though not bound right now
		}
		if err != nil {
			return leased, err
		}
		if res[0].Renewed {
			continue // already ours: a new port was asked for
		}
		leased = append(leased, res[0].Lock)
	}
	return leased, nil
}

// portRow is one lease in `ports list --json` and `ports allocate --json`.
type portRow struct {
	Port       int       `json:"port"`
	Holder     string    `json:"holder"`
	HolderType string    `json:"holder_type"`
	Session    string    `json:"session"`
	ExpiresAt  time.Time `json:"expires_at"`
}

func portRows(ls []locks.Lock) []portRow {
	out := []portRow{}
	for _, l := range ls {
		p, _ := strconv.Atoi(strings.TrimPrefix(l.Key, portNS+":"))
		out = append(out, portRow{Port: p, Holder: l.Holder, HolderType: l.HolderType, Session: l.Session, ExpiresAt: l.ExpiresAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Port < out[j].Port })
	return out
}

// myPorts is the keys of the given ports, or of every live lease of this
// session when none are given.
func (a *app) myPorts(ctx context.Context, e *service.Workspace, args []string) ([]string, error) {
	var keys []string
	for _, s := range args {
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 {
			return nil, service.Usagef("invalid port %q", s)
		}
		keys = append(keys, portKey(p))
	}
	if len(keys) > 0 {
		return keys, nil
	}
	entries, err := e.Store.InNamespace(ctx, portNS)
	if err != nil {
		return nil, err
	}
	for _, en := range entries {
		if en.Err == nil && en.OwnedBy(e.Me) {
			keys = append(keys, en.Key)
		}
	}
	return keys, nil
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
			keys, err := a.myPorts(ctx, e, args)
			if err != nil {
				return err
			}
			exact := ttl != 0 // a TTL you name may shorten a lease
			if ttl == 0 {
				ttl = a.defaultTTL(e, nil)
			}
			ls, err := e.Mgr.Refresh(ctx, keys, e.Me, ttl, 0, exact)
			if err != nil {
				return err
			}
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, portRows(ls))
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
			keys, err := a.myPorts(ctx, e, args)
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
			entries, err := e.Store.InNamespace(ctx, portNS)
			if err != nil {
				return err
			}
			now := time.Now()
			var live []locks.Lock
			for _, en := range entries {
				if en.Err == nil && !en.Expired(now) {
					live = append(live, en.Lock)
				}
			}
			rows := portRows(live)
			if a.globals.JSON {
				return writeJSON(a.stdio.Out, rows)
			}
			out := [][]string{{"PORT", "HOLDER", "TYPE", "SESSION", "EXPIRES"}}
			for _, r := range rows {
				out = append(out, []string{strconv.Itoa(r.Port), r.Holder, r.HolderType, r.Session, until(r.ExpiresAt, now)})
			}
			table(a.stdio.Out, out)
			return nil
		},
	}
}
