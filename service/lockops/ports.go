package lockops

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// PortNS is the namespace of port leases, locks on `port:<N>` keys: the lock store makes them
// exclusive across sessions (and machines, on Redis), and they expire like
// any lock. `port:` is not a namespace users may lock directly: ports are
// only handed out by `ports allocate`, after checking them free by binding.
const PortNS = lockkey.PortNS

// portKey is the key of port p's lease.
func portKey(p int) string { return PortNS + ":" + strconv.Itoa(p) }

// freePort asks the kernel for a TCP port that is free on this machine.
func freePort() (int, error) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PortsRequest is `ports allocate`: how many ports, leased for how long
// (0: as a lock, by worker type; LOCK_TTL_MS on Redis).
type PortsRequest struct {
	Count int
	TTL   time.Duration
}

// AllocatePorts leases ports that are free on this machine to e's
// session, in the order leased: a port the kernel offers may still be
// leased to a session that is not listening on it yet, so such ports are
// skipped.
func (e *Handler) AllocatePorts(ctx context.Context, req PortsRequest) ([]locks.Lock, error) {
	if req.Count < 1 || req.TTL < 0 {
		return nil, session.Usagef("allocate ports: want at least one port and a lifetime not negative, got %d and %s", req.Count, req.TTL)
	}
	ttl := req.TTL
	if ttl == 0 {
		var err error
		if ttl, err = e.DefaultTTL(nil); err != nil {
			return nil, err
		}
	}
	var leased []locks.Lock
	for tries := 0; len(leased) < req.Count; tries++ {
		if tries > 50*req.Count {
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

// PortsRefreshRequest is `ports refresh`: the ports (none: every lease of
// the session) and their new lifetime from now (0: as a lock, by worker
// type, never shortening a lease; a TTL named may shorten one).
type PortsRefreshRequest struct {
	Ports []string
	TTL   time.Duration
}

// RefreshPorts extends the session's port leases.
func (e *Handler) RefreshPorts(ctx context.Context, req PortsRefreshRequest) ([]locks.Lock, error) {
	keys, err := e.myPorts(ctx, req.Ports)
	if err != nil {
		return nil, err
	}
	ttl, exact := req.TTL, req.TTL != 0
	if !exact {
		if ttl, err = e.DefaultTTL(nil); err != nil {
			return nil, err
		}
	}
	return e.Mgr.Refresh(ctx, keys, e.Me, ttl, 0, exact)
}

// PortsReleaseRequest is `ports release`: the ports (none: every lease of
// the session), and whether another session's are freed too (Force,
// logged).
type PortsReleaseRequest struct {
	Ports []string
	Force bool
}

// ReleasePorts gives port leases back.
func (e *Handler) ReleasePorts(ctx context.Context, req PortsReleaseRequest) (locks.ReleaseResult, error) {
	keys, err := e.myPorts(ctx, req.Ports)
	if err != nil {
		return locks.ReleaseResult{}, err
	}
	if req.Force {
		return e.Mgr.ReleaseChecked(ctx, keys, e.Me, e.ForceCheck(ctx))
	}
	return e.Mgr.Release(ctx, keys, e.Me, false)
}

// ListPorts is every live port lease, by port.
func (e *Handler) ListPorts(ctx context.Context) ([]PortRow, error) {
	entries, err := e.Store.InNamespace(ctx, PortNS)
	if err != nil {
		return nil, err
	}
	now := e.Now()
	var live []locks.Lock
	for _, en := range entries {
		if en.Err == nil && !en.Expired(now) {
			live = append(live, en.Lock)
		}
	}
	return PortRows(live), nil
}

// myPorts is the keys of the given ports, or of every live lease of this
// session when none are given.
func (e *Handler) myPorts(ctx context.Context, args []string) ([]string, error) {
	var keys []string
	for _, s := range args {
		p, err := strconv.Atoi(s)
		if err != nil || p < 1 || p > 65535 {
			return nil, session.Usagef("invalid port %q", s)
		}
		keys = append(keys, portKey(p))
	}
	if len(keys) > 0 {
		return keys, nil
	}
	entries, err := e.Store.InNamespace(ctx, PortNS)
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

// PortRow is one lease in `ports list --json` and `ports allocate --json`.
type PortRow struct {
	Port       int       `json:"port"`
	Holder     string    `json:"holder"`
	HolderType string    `json:"holder_type"`
	Session    string    `json:"session"`
	ExpiresAt  time.Time `json:"expires_at"`
}

// PortRows are leases as `ports list --json` shows them, by port.
func PortRows(ls []locks.Lock) []PortRow {
	out := []PortRow{}
	for _, l := range ls {
		p, _ := strconv.Atoi(strings.TrimPrefix(l.Key, PortNS+":"))
		out = append(out, PortRow{Port: p, Holder: l.Holder, HolderType: l.HolderType, Session: l.Session, ExpiresAt: l.ExpiresAt})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Port < out[j].Port })
	return out
}
