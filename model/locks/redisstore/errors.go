package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/model/locks"
)

// Normalized reasons of an unavailable store (docs/stores.md: What differs
// on Redis, "unavailable" with normalized details), the Reason of a Cause.
const (
	ReasonRefused     = "connection refused"
	ReasonAuth        = "authentication failed"
	ReasonTimeout     = "timeout"
	ReasonLost        = "connection lost"
	ReasonUnreachable = "host unreachable"
	ReasonClosed      = "store closed"
	ReasonLoading     = "server is loading its data"
	ReasonReadOnly    = "server is a read-only replica"
	ReasonNoPerm      = "permission denied"
	ReasonOOM         = "server out of memory"
)

// Cause is the Err of every *locks.UnavailableError the store returns:
// the operation, a normalized reason (one of the Reason constants, or the
// server's message for anything else) and the client's error.
type Cause struct {
	Op     string
	Reason string
	Err    error
	// Where names the servers that failed, by role, when the URL names
	// more than one: "sentinels 127.0.0.1:26379, 127.0.0.1:26380",
	// "primary 127.0.0.1:6380 (master locks)", "cluster node 127.0.0.1:7001".
	Where string
	// Detail says more for people (how long the server was waited for).
	Detail string
}

func (c *Cause) Error() string {
	msg := c.Op + ": "
	if c.Where != "" {
		msg += c.Where + ": "
	}
	msg += c.Reason
	if c.Detail != "" {
		msg += " (" + c.Detail + ")"
	}
	return msg
}

// UnknownMasterError is a Sentinel URL whose master name the Sentinels
// that answered do not know: a configuration error, not an outage.
type UnknownMasterError struct {
	Store     string   // the URL without its password
	Master    string   // the master name the URL gives
	Sentinels []string // host:port of the Sentinels that answered
}

func (e *UnknownMasterError) Error() string {
	return fmt.Sprintf("redis store %s: the sentinels at %s know no master %q", e.Store, strings.Join(e.Sentinels, ", "), e.Master)
}

// errSentinels starts go-redis's error when no Sentinel named a primary:
// each Sentinel's own error is joined under it.
const errSentinels = "redis: all sentinels specified in configuration are unreachable"

// where names the servers err failed on, by role (see Cause.Where): the
// addresses of the connections that failed, or, when no Sentinel named a
// primary, the Sentinels. A single server is named by the URL already.
func (s *Store) where(err error) string {
	addrs := opAddrs(err, nil)
	role := ""
	switch {
	case s.topo == sentinel && strings.Contains(err.Error(), errSentinels):
		role = "sentinel"
		if len(addrs) == 0 {
			addrs = s.sentinelAddrs
		}
	case len(addrs) == 0, s.topo == single:
		return ""
	case s.topo == sentinel:
		return fmt.Sprintf("primary %s (master %s)", strings.Join(addrs, ", "), s.master)
	default:
		role = "cluster node"
	}
	if len(addrs) > 1 {
		role += "s"
	}
	// In one order whatever order the failures came in, so that the same
	// outage reads the same each time.
	addrs = slices.Clone(addrs)
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	return role + " " + strings.Join(addrs, ", ")
}

// opAddrs adds to addrs the remote address of each connection err says
// failed, in each of the errors it joins.
func opAddrs(err error, addrs []string) []string {
	var multi interface{ Unwrap() []error }
	if errors.As(err, &multi) {
		for _, e := range multi.Unwrap() {
			addrs = opAddrs(e, addrs)
		}
		return addrs
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Addr != nil && !slices.Contains(addrs, op.Addr.String()) {
		addrs = append(addrs, op.Addr.String())
	}
	return addrs
}

// unknownMaster asks the Sentinels for the master when no Sentinel named
// a primary and each said it knows none (go-redis's error joins a
// redis.Nil of each): if those that answer still know no master of the
// URL's name, the URL is wrong, and the error says so. Otherwise, or for
// any other error, it returns nil.
func (s *Store) unknownMaster(ctx context.Context, err error) error {
	if s.topo != sentinel || s.failover == nil || !strings.Contains(err.Error(), errSentinels) || !errors.Is(err, redis.Nil) {
		return nil
	}
	fo := s.failover
	var answered []string
	for _, addr := range s.sentinelAddrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: addr, Username: fo.SentinelUsername, Password: fo.SentinelPassword,
			TLSConfig: fo.TLSConfig, DialTimeout: s.dialTimeout, ReadTimeout: s.opTimeout, WriteTimeout: s.opTimeout,
			MaxRetries: -1, Protocol: 2, DisableIdentity: true})
		_, aerr := sc.GetMasterAddrByName(ctx, fo.MasterName).Result()
		_ = sc.Close()
		switch {
		case aerr == nil:
			return nil // one knows it now: not the URL's fault
		case errors.Is(aerr, redis.Nil):
			answered = append(answered, addr)
		}
	}
	if len(answered) == 0 {
		return nil
	}
	return &UnknownMasterError{Store: s.display, Master: fo.MasterName, Sentinels: answered}
}

func (c *Cause) Unwrap() error { return c.Err }

// fail wraps a failed command. The caller's own cancellation or deadline is
// returned as such; everything else means the store could not be used.
func (s *Store) fail(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: %w", op, cerr)
	}
	// The client's network deadline is the caller's when that is earlier,
	// and may fire a moment before the context notices.
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return fmt.Errorf("%s: %w", op, context.DeadlineExceeded)
	}
	c := &Cause{Op: op, Reason: reason(err), Err: err, Where: s.where(err)}
	switch {
	case errors.Is(err, errGaveUp):
		c.Detail = fmt.Sprintf("no answer within %s earlier in this command; not asked again", s.opTimeout)
	case c.Reason == ReasonTimeout:
		limit := s.opTimeout
		if op == "open" {
			limit = max(limit, s.dialTimeout)
		}
		c.Detail = fmt.Sprintf("no answer within %s", limit)
		if s.oneTimeout {
			s.gaveUp.Store(true)
		}
	}
	return &locks.UnavailableError{Store: s.display, Err: c}
}

// errGaveUp fails the operations of a Store with OneTimeout after one timed
// out; it is a timeout itself.
var errGaveUp = fmt.Errorf("the server did not answer in time: %w", context.DeadlineExceeded)

// giveUpHook fails every command at once once its Store gave up on the
// server.
type giveUpHook struct{ s *Store }

func (h giveUpHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h.s.gaveUp.Load() {
			return nil, errGaveUp
		}
		return next(ctx, network, addr)
	}
}

func (h giveUpHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.s.gaveUp.Load() {
			cmd.SetErr(errGaveUp)
			return errGaveUp
		}
		return next(ctx, cmd)
	}
}

func (h giveUpHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.s.gaveUp.Load() {
			for _, c := range cmds {
				c.SetErr(errGaveUp)
			}
			return errGaveUp
		}
		return next(ctx, cmds)
	}
}

// reason normalizes a go-redis or network error.
func reason(err error) string {
	var ne net.Error
	var dns *net.DNSError
	switch {
	case errors.Is(err, redis.ErrClosed):
		return ReasonClosed
	case errors.Is(err, syscall.ECONNREFUSED):
		return ReasonRefused
	case errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return ReasonTimeout
	case errors.As(err, &dns), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return ReasonUnreachable
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return ReasonLost
	}
	msg := err.Error()
	for _, p := range []struct{ prefix, reason string }{
		{"NOAUTH", ReasonAuth},
		{"WRONGPASS", ReasonAuth},
		{"ERR invalid password", ReasonAuth},
		{"ERR AUTH", ReasonAuth},
		{"ERR Client sent AUTH", ReasonAuth},
		{"NOPERM", ReasonNoPerm},
		{"LOADING", ReasonLoading},
		{"READONLY", ReasonReadOnly},
		{"MASTERDOWN", ReasonReadOnly},
		{"OOM", ReasonOOM},
	} {
		if strings.HasPrefix(msg, p.prefix) {
			return p.reason
		}
	}
	return msg
}

// Error kinds and reasons of docs/exit-codes.md (MCP error classes), as
// Classify returns them.
const (
	KindBusy        = "busy"
	KindUnavailable = "unavailable"
	KindRateLimited = "rate_limited"

	ReasonContended   = "lock_contended"
	ReasonLockTimeout = "lock_timeout"
)

// Classify sorts an error of a lock operation into the classes
// docs/exit-codes.md (MCP error classes) names: busy
// (reason lock_contended for a *locks.HeldError, lock_timeout for a
// *locks.TimeoutError), unavailable (reason: the normalized cause, such
// as "connection refused"), rate_limited; "" for anything else. It works on
// the errors of any store, so --json output can carry kind and reason.
func Classify(err error) (kind, reason string) {
	var timeout *locks.TimeoutError
	var held *locks.HeldError
	var unavailable *locks.UnavailableError
	var limited *locks.RateLimitedError
	switch {
	case err == nil:
		return "", ""
	case errors.As(err, &limited):
		return KindRateLimited, ""
	case errors.As(err, &timeout):
		return KindBusy, ReasonLockTimeout
	case errors.As(err, &held):
		return KindBusy, ReasonContended
	case errors.As(err, &unavailable):
		var c *Cause
		if errors.As(err, &c) {
			return KindUnavailable, c.Reason
		}
		if unavailable.Err != nil {
			return KindUnavailable, unavailable.Err.Error()
		}
		return KindUnavailable, ""
	}
	return "", ""
}
