package redisstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// batcher sends the scripts of concurrent callers together: a caller that
// finds fewer than max batches in flight sends what is queued (its own call
// at least) as one pipeline at once; callers arriving meanwhile queue, and
// the first of them sends the queue as the next batch when one finishes.
// A lone caller therefore pays one round trip, as without batching, while
// many callers of one Store share round trips, system calls and the
// server's reads and writes. Every script is still atomic on its own; a
// pipeline changes only how requests travel. Nothing is retried, so no
// script runs twice.
//
// A call sent at once, alone, is bounded by the client's timeouts (the
// store's timeout on waiting for a connection, on sending and on reading
// the answer) and the caller's context. A queued call has a deadline, the
// store's timeout from when it was made (or the caller's earlier one); a
// batch's deadline is the earliest of its calls', so no caller waits past
// its own, queued or sent.
type batcher struct {
	rdb     redis.UniversalClient
	max     int // batches in flight
	timeout time.Duration

	mu       sync.Mutex
	queue    []*call
	inflight int
}

// call is one script run a caller waits for.
type call struct {
	ctx      context.Context
	deadline time.Time
	sc       *script
	keys     []string
	args     []any

	res  any
	err  error
	done chan struct{} // signalled when res and err are set, or to hand over lead
	lead []*call       // set when this caller is to send the next batch
}

// do runs sc and returns its reply.
func (b *batcher) do(ctx context.Context, sc *script, keys []string, args []any) (any, error) {
	b.mu.Lock()
	if b.inflight < b.max {
		// Calls queue only while every batch is in flight, so the queue is
		// empty: this call is a batch of its own. It gets no deadline
		// context: a timer per call costs a lone caller more than all its
		// own code, and the client's timeouts bound the call.
		b.inflight++
		b.mu.Unlock()
		var res any
		err := ctx.Err()
		if err == nil {
			res, err = sc.redisScript().Run(ctx, b.rdb, keys, args...).Result()
		}
		b.handOver()
		return res, err
	}
	deadline := time.Now().Add(b.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c := &call{ctx: ctx, deadline: deadline, sc: sc, keys: keys, args: args, done: make(chan struct{}, 1)}
	b.queue = append(b.queue, c)
	b.mu.Unlock()
	// Queued: the batches ahead end by their calls' deadlines, which are
	// not later than ours (they were made first, with the same timeout),
	// and ours by ours; only the caller's own earlier end needs watching.
	select {
	case <-c.done:
	case <-ctx.Done():
		b.mu.Lock()
		if i := slices.Index(b.queue, c); i >= 0 {
			b.queue = slices.Delete(b.queue, i, i+1)
			b.mu.Unlock()
			return nil, ctx.Err()
		}
		b.mu.Unlock()
		// Sent in a batch, whose deadline is not later than ours, or
		// just handed the lead: either way done comes soon.
		<-c.done
	}
	if c.lead != nil {
		// This caller's own call is in the batch it now sends.
		b.send(c.lead, c)
		b.handOver()
	}
	return c.res, c.err
}

// handOver gives the queue, if any, to its first caller to send; else it
// ends this caller's turn.
func (b *batcher) handOver() {
	b.mu.Lock()
	if len(b.queue) == 0 {
		b.inflight--
		b.mu.Unlock()
		return
	}
	batch := b.queue
	b.queue = nil
	b.mu.Unlock()
	next := batch[0]
	next.lead = batch
	next.done <- struct{}{}
}

// send runs a batch as one pipeline and wakes each caller but the sender.
func (b *batcher) send(batch []*call, sender *call) {
	now := time.Now()
	live := batch[:0:0]
	for _, c := range batch {
		switch {
		case c.ctx.Err() != nil:
			c.err = c.ctx.Err()
		case !now.Before(c.deadline):
			c.err = context.DeadlineExceeded
		default:
			live = append(live, c)
			continue
		}
		b.wake(c, sender)
	}
	if len(live) > 0 {
		b.exec(live)
	}
	for _, c := range live {
		b.wake(c, sender)
	}
}

func (b *batcher) wake(c, sender *call) {
	if c != sender {
		c.done <- struct{}{}
	}
}

func (b *batcher) exec(batch []*call) {
	if len(batch) == 1 {
		// A lone call keeps its caller's context (cancellation included).
		c := batch[0]
		ctx, cancel := context.WithDeadline(c.ctx, c.deadline)
		defer cancel()
		c.res, c.err = c.sc.redisScript().Run(ctx, b.rdb, c.keys, c.args...).Result()
		return
	}
	deadline := batch[0].deadline
	for _, c := range batch[1:] {
		if c.deadline.Before(deadline) {
			deadline = c.deadline
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	p := b.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(batch))
	for i, c := range batch {
		cmds[i] = c.sc.redisScript().EvalSha(ctx, p, c.keys, c.args...)
	}
	_, _ = p.Exec(ctx) // each command keeps its own error
	for i, c := range batch {
		c.res, c.err = cmds[i].Result()
		if c.err != nil && redis.HasErrorPrefix(c.err, "NOSCRIPT") {
			// Not run (the server lost its scripts: a restart); EVAL
			// loads it again.
			c.res, c.err = c.sc.redisScript().Run(ctx, b.rdb, c.keys, c.args...).Result()
		}
	}
}
