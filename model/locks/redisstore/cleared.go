package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks"
)

// Clear is one record the store removed by force, as its clear log has it.
type Clear struct {
	At   time.Time  // when the server removed it
	Key  string     // the key's identity, as the store keeps it
	Lock locks.Lock // the record removed; only Key when it was corrupt
	// Corrupt says why the removed record could not be read, "" when it
	// could.
	Corrupt string
}

// maxClears bounds what Cleared reads: the log keeps about 100,000.
const maxClears = 100_000

// Cleared reads the store's clear log from since on, oldest first: every
// lock a Remove deleted, whoever asked for it, as the server's own script
// recorded it.
func (s *Store) Cleared(ctx context.Context, since time.Time) ([]Clear, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opTimeout)
	defer cancel()
	start := "-"
	if !since.IsZero() {
		start = strconv.FormatInt(since.UnixMilli(), 10)
	}
	msgs, err := s.rdb.XRangeN(ctx, s.kCleared, start, "+", maxClears).Result()
	if err != nil {
		return nil, s.fail(ctx, "read the clear log", err)
	}
	out := make([]Clear, 0, len(msgs))
	for _, m := range msgs {
		ms, _, _ := strings.Cut(m.ID, "-")
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("clear log %s: entry %q: not a stream id", s.kCleared, m.ID)
		}
		key, _ := m.Values["key"].(string)
		c := Clear{At: time.UnixMilli(n).UTC(), Key: key, Lock: locks.Lock{Key: key}}
		c.Corrupt, _ = m.Values["corrupt"].(string)
		if rec, _ := m.Values["record"].(string); rec != "" && c.Corrupt == "" {
			l, err := parseValue(key, rec)
			if err != nil {
				c.Corrupt = err.Error()
			} else {
				c.Lock = l
			}
		}
		out = append(out, c)
	}
	return out, nil
}
