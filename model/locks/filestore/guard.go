package filestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/locks"
)

// stripe is one guard file. mu serializes the goroutines of this process
// (flock does not: it belongs to the open file, which they share); the
// flock on f serializes processes.
type stripe struct {
	mu   sync.Mutex
	f    *os.File
	name string
}

// guard is a held stripe; unlock releases it.
type guard struct {
	st *stripe
}

// stripeOf picks key's guard stripe. FNV-1a is fixed forever: processes of
// different lockgate versions must agree on it.
func stripeOf(key string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() & 0xff)
}

// lock takes key's guard stripe (that of its identity, so that all its
// spellings share one): the in-process mutex, then flock on the stripe
// file, which it opens on first use and keeps open.
func (s *Store) lock(ctx context.Context, key string) (*guard, error) {
	return s.lockStripe(ctx, stripeOf(s.id(key)), key)
}

// lockStripe takes stripe i for key (named in errors).
func (s *Store) lockStripe(ctx context.Context, i int, key string) (*guard, error) {
	st := &s.stripes[i]
	st.mu.Lock()
	for {
		if st.f == nil {
			st.name = filepath.Join(s.guards, fmt.Sprintf("%02x", i))
			// Never through a link: the fence counter is written into it.
			f, err := safefs.OpenFile(st.name, os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				st.mu.Unlock()
				return nil, s.unavailable("guard "+key, err)
			}
			st.f = f
		}
		if err := flock(ctx, st.f); err != nil {
			st.mu.Unlock()
			if ctx.Err() != nil {
				return nil, s.unavailable("guard "+key, fmt.Errorf("waiting for %s: %w", st.name, err))
			}
			return nil, s.unavailable("guard "+key, err)
		}
		// The lock counts only if st.f is still the file at st.name (nobody
		// deleted or replaced the guard): otherwise start over.
		same, err := sameFile(st.f, st.name)
		if same {
			return &guard{st: st}, nil
		}
		_ = funlock(st.f)
		_ = st.f.Close()
		st.f = nil
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			st.mu.Unlock()
			return nil, s.unavailable("guard "+key, err)
		}
	}
}

func (g *guard) unlock() {
	if err := funlock(g.st.f); err != nil {
		// Closing the file drops the lock for certain.
		_ = g.st.f.Close()
		g.st.f = nil
	}
	g.st.mu.Unlock()
}

func sameFile(f *os.File, name string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Lstat(name)
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

// A stripe file holds the fence counter of its keys (big-endian):
//
//	[0:8)   last: the last fence handed out; written on every acquisition
//	[8:16)  ceiling: synced to disk, never below any fence handed out
//	[16:32) the boot that wrote last
//
// Within one boot every process reads last from the shared page cache, so
// last needs no fsync; after a reboot (perhaps a crash that lost last) the
// next fence starts above the durable ceiling instead. The ceiling moves up
// in steps of fenceReserve, so only one acquisition in fenceReserve per
// stripe pays for an fsync. Where the boot cannot be told, every write is
// synced.
const (
	fenceFileSize = 32
	fenceReserve  = 1024
)

// nextFence returns the key's next fence number, above both the stripe's
// counter and prev (the fence of the record being replaced) and stores it.
// The counter is shared by the keys of a stripe, so each key's fences only
// grow: across holders, releases, processes and crashes.
func (s *Store) nextFence(g *guard, prev uint64) (uint64, error) {
	var buf [fenceFileSize]byte
	n, err := g.st.f.ReadAt(buf[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, s.unavailable("read fence", err)
	}
	var last, ceiling uint64
	var boot [16]byte
	if n == fenceFileSize {
		last = binary.BigEndian.Uint64(buf[0:8])
		ceiling = binary.BigEndian.Uint64(buf[8:16])
		copy(boot[:], buf[16:32])
	}
	now, known := bootID()
	if !known || boot != now {
		last = max(last, ceiling)
	}
	if max(last, prev) == math.MaxUint64 {
		// The next fence would wrap to 0, below fences already handed out.
		return 0, fmt.Errorf("fence counter %s: %w", g.st.name, locks.ErrFenceExhausted)
	}
	next := max(last, prev) + 1
	binary.BigEndian.PutUint64(buf[0:8], next)
	if known && boot == now && next <= ceiling {
		if _, err := g.st.f.WriteAt(buf[0:8], 0); err != nil {
			return 0, s.unavailable("write fence", err)
		}
		return next, nil
	}
	ceiling = next
	if known {
		ceiling = next + min(fenceReserve, math.MaxUint64-next)
	}
	binary.BigEndian.PutUint64(buf[8:16], ceiling)
	copy(buf[16:32], now[:])
	if _, err := g.st.f.WriteAt(buf[:], 0); err != nil {
		return 0, s.unavailable("write fence", err)
	}
	if !s.noSync {
		if err := datasync(g.st.f); err != nil {
			return 0, s.unavailable("write fence", err)
		}
	}
	return next, nil
}
