package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// ReasonReplicas is the reason of an acquisition that fewer replicas than
// Options.MinReplicas confirmed in time (the grant was undone).
const ReasonReplicas = "too few replicas confirmed the grant"

// replicated is what runReplicated learnt: the script's reply, the
// session's history entry of the key before the script ran (nil when it
// had none), the replicas that confirmed and WAIT's error.
type replicated struct {
	reply   reply
	prev    *string
	acked   int64
	waitErr error
}

// runReplicated runs sc like run, but on a connection of its own to the
// server that keeps the store's keys, and after a grant (status "OK")
// sends WAIT on the same connection: WAIT counts the replicas that have
// every write of its connection. Before the script it reads field of the
// history hist, which the grant overwrites: undoing the grant puts it
// back. The script is not batched with other callers': WAIT would then
// wait for their writes too, and one slow batch would hold every caller
// in it.
func (s *Store) runReplicated(ctx context.Context, verb, key, hist, field string, sc *script, keys []string, args ...any) (replicated, error) {
	var out replicated
	// The history's, the script's and WAIT's round trips, each bounded by
	// the store's timeout; WAIT itself gives up after it.
	octx, cancel := context.WithTimeout(ctx, 4*s.opTimeout)
	defer cancel()
	home, err := s.home(octx)
	if err != nil {
		return out, s.fail(ctx, verb+" "+key, err)
	}
	conn := home.Conn()
	defer conn.Close()
	prev, err := conn.HGet(octx, hist, field).Result()
	switch {
	case err == nil:
		out.prev = &prev
	case !errors.Is(err, redis.Nil) && !isWrongType(err):
		return out, s.fail(ctx, verb+" "+key, err)
	}
	v, err := sc.redisScript().Run(octx, conn, keys, args...).Result()
	if err != nil {
		return out, s.fail(ctx, verb+" "+key, err)
	}
	if out.reply, err = s.toReply(ctx, verb, key, v); err != nil || out.reply.status() != "OK" {
		return out, err
	}
	out.acked, out.waitErr = conn.Wait(octx, s.minReplicas, s.opTimeout).Result()
	return out, nil
}

// undoGrant releases the record an acquisition wrote that too few
// replicas confirmed, puts back the session's history entry prev the grant
// replaced (or drops the grant's, without one), and returns the error that
// reports it: the store is unavailable for grants that must survive a
// failover, and nothing is held. The history keeps what it had, so that
// `session restore` refused this way can be run again.
func (s *Store) undoGrant(ctx context.Context, rec locks.Lock, member string, prev *string, acked int64, waitErr error) error {
	c := &Cause{Op: "acquire " + rec.Key, Reason: ReasonReplicas, Err: waitErr,
		Detail: fmt.Sprintf("%d of the %d replicas locks.redis.min_replicas asks for confirmed it within %s", acked, s.minReplicas, s.opTimeout)}
	if waitErr != nil {
		c.Detail = fmt.Sprintf("WAIT for %d replicas (locks.redis.min_replicas) failed: %s", s.minReplicas, reason(waitErr))
	}
	// A fresh context: the caller's may be what ended WAIT, and the grant
	// must not outlive the refusal.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opTimeout)
	defer cancel()
	args := []any{member, rec.Token, s.histPrefix(), s.channel(s.id(rec.Key)), "undo"}
	if prev != nil {
		args = append(args, *prev)
	}
	keys := append(make([]string, 0, 4), s.recKey(member), s.kKeys, s.kCleared)
	if lockkey.IsPattern(rec.Key) {
		keys = append(keys, s.kPat)
	}
	r, err := s.run(uctx, "acquire", rec.Key, releaseScript, keys, args...)
	switch {
	case err != nil:
	case r.status() == "OK", r.status() == "NOTFOUND":
	case r.status() == "MISMATCH":
		err = locks.ErrTokenMismatch
	default:
		err = s.unexpected(uctx, "acquire", rec.Key, r)
	}
	if err == nil {
		c.Detail += "; the grant was undone"
	} else {
		// The record stays until its TTL ends; its holder is told it holds
		// nothing, so nothing acts under it.
		c.Detail += fmt.Sprintf("; undoing the grant failed (%v), its record lapses with its TTL", err)
	}
	return &locks.UnavailableError{Store: s.display, Err: c}
}

// toReply turns a script's answer into a reply: bare answers (see
// scripts.go) become tables like the others.
func (s *Store) toReply(ctx context.Context, verb, key string, v any) (reply, error) {
	switch v := v.(type) {
	case int64:
		return reply{"OK", v}, nil
	case string:
		return reply{"HELD", v}, nil
	case []any:
		if len(v) > 0 {
			return reply(v), nil
		}
	}
	return nil, s.fail(ctx, verb+" "+key, fmt.Errorf("unexpected script reply %v", v))
}

// MinReplicas is the number of replicas that must confirm each grant
// (Options.MinReplicas).
func (s *Store) MinReplicas() int { return s.minReplicas }

// Replicas returns the number of replicas connected now to the server
// that keeps the store's keys (INFO replication's connected_slaves):
// through Sentinel the primary's, on a cluster those of the primary of
// the store's slot. With fewer than MinReplicas every acquisition waits
// the store's timeout and fails.
func (s *Store) Replicas(ctx context.Context) (int, error) {
	octx, cancel := context.WithTimeout(ctx, max(s.dialTimeout, s.opTimeout))
	defer cancel()
	home, err := s.home(octx)
	if err != nil {
		return 0, s.fail(ctx, "count replicas", err)
	}
	info, err := home.Info(octx, "replication").Result()
	if err != nil {
		return 0, s.fail(ctx, "count replicas", err)
	}
	n, err := connectedReplicas(info)
	if err != nil {
		return 0, s.fail(ctx, "count replicas", err)
	}
	return n, nil
}

// connectedReplicas reads connected_slaves from INFO replication. An
// answer without it, or with a value that is no count, is an error: a
// server lockgate cannot read is not taken for one without replicas.
func connectedReplicas(info string) (int, error) {
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_slaves:"); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("INFO replication: connected_slaves %q is not a count", v)
			}
			return n, nil
		}
	}
	return 0, errors.New("INFO replication names no connected_slaves")
}
