package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lockgate/lockgate/internal/safefs"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// The claim index lets a claim on the file store and Redis read what it
// passes over, not every package and every task record: with the first
// half of 10,000 packages done, a claim read 5,000 records and worked
// out the keys of 5,000 packages to hand out one.
//
// It has two parts, kept in the clone's cache (docs/queue.md):
//   - the claim order: the packages file, checked against the policy
//     once and kept in claim order, each package decoded when reached
//     (config.ClaimOrder);
//   - the mark: how many packages at the head of that order are finished
//     (done or failed), and the store's queue epoch it was counted in.
//
// A finished package's record is kept for good, so a claim starts after
// the mark. Only removing a finished record makes one ready again
// (`retry`, a forced release or clear): every such removal, whoever makes
// it, ends the epoch first and after (session.QueueEpochKey,
// locks.Manager.LastingRemoved), and a mark of an ended epoch is not
// used. The index is never trusted to say that nothing can be claimed: a
// claim that finds nothing after the mark reads the whole queue, as
// before, and counts the mark again from it; a record changed behind
// lockgate's back (deleted by hand) is found then.
//
// The git store has no index (session.Workspace.QueueIndexed).

// indexWindow is how many task records a claim reads in one exchange as
// it walks the order.
const indexWindow = 32

// claimOrder returns the packages file in claim order, from the cache
// when the file and the policy are the ones it was made for.
func (e *Handler) claimOrder(file string) (*config.ClaimOrder, error) {
	file = e.PackagesFile(file)
	// The packages are checked against the key options: any change of
	// them (a field added, too) makes another order.
	checks := fmt.Sprintf("%#v", *e.KeyOptions())
	order, err := config.LoadClaimOrderCached(file, e.CacheDir(), checks, func() (*config.WorkPackages, error) { return e.LoadPackages(file) },
		e.keyIdentities)
	if errors.Is(err, os.ErrNotExist) {
		// LoadPackages says what to do.
		_, err = e.LoadPackages(file)
	}
	return order, err
}

// keyIdentities are wp's keys as the store tells them apart, for the
// claim order's key index: the packages that share a key with one being
// finished are found without reading the others. The keys are worked out
// when the order is made; a symbolic link in the work tree changed since
// is seen when the file or the policy next changes.
func (e *Handler) keyIdentities(wp *config.WorkPackage) ([]string, error) {
	keys, err := e.packageKeys(wp)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = lockkey.FoldCase(k.Canonical)
	}
	return ids, nil
}

// queueEpoch returns the store's queue epoch (the token of
// session.QueueEpochKey's record), starting one when there is none.
func (e *Handler) queueEpoch(ctx context.Context) (string, error) {
	for range 3 {
		l, err := e.Store.Get(ctx, session.QueueEpochKey)
		var corrupt *locks.CorruptError
		switch {
		case err == nil:
			return l.Token, nil
		case errors.As(err, &corrupt):
			if err := e.NewQueueEpoch(ctx); err != nil {
				return "", err
			}
		case !errors.Is(err, locks.ErrNotFound):
			return "", fmt.Errorf("read the queue epoch: %w", err)
		}
		now := e.Now().UTC()
		rec := locks.Lock{Key: session.QueueEpochKey, Holder: "lockgate", HolderType: e.Me.HolderType, Session: e.Me.Session,
			Action: "queue-epoch", Host: e.Mgr.Host, PID: e.Mgr.PID, CreatedAt: now, ExpiresAt: locks.Never, Token: locks.NewToken()}
		stored, _, err := e.Store.Acquire(ctx, rec, now)
		var held *locks.HeldError
		switch {
		case err == nil:
			return stored.Token, nil
		case errors.As(err, &held):
			return held.Lock.Token, nil // started by another meanwhile
		default:
			return "", fmt.Errorf("start a queue epoch: %w", err)
		}
	}
	return "", errors.New("read the queue epoch: it keeps changing")
}

// claimMark is how many packages at the head of a claim order were
// finished in an epoch.
type claimMark struct {
	order, epoch string
	finished     int
}

// markFile is where the mark of the packages file at path is kept.
func (e *Handler) markFile(path string) string {
	h := sha256.Sum256([]byte(path))
	return filepath.Join(e.CacheDir(), "claim-mark-"+hex.EncodeToString(h[:8]))
}

// readMark returns the packages at the head of order known finished in
// epoch: 0 when the mark is missing, unreadable or of another order or
// epoch.
func (e *Handler) readMark(order *config.ClaimOrder, epoch string) int {
	b, err := safefs.ReadFile(e.markFile(order.Path))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 3 || f[0] != order.Key || f[1] != epoch {
		return 0
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n < 0 || n > order.Len() {
		return 0
	}
	return n
}

// writeMark keeps m. The mark is a cache: one that cannot be written
// costs the next claim a longer walk, nothing else.
func (e *Handler) writeMark(path string, m claimMark) {
	_ = config.WriteCacheFile(e.CacheDir(), e.markFile(path), fmt.Appendf(nil, "%s %s %d\n", m.order, m.epoch, m.finished))
}

// claimIndexed claims the first package it can take, walking the claim
// order from the mark. found is false when it took none: the caller reads
// the whole queue.
func (e *Handler) claimIndexed(ctx context.Context, file string, o Claim) (next nextClaim, found bool, err error) {
	order, err := e.claimOrder(file)
	if err != nil {
		return nextClaim{}, false, err
	}
	// The epoch is read before any record: a removal after it ends it.
	epoch, err := e.queueEpoch(ctx)
	if err != nil {
		return nextClaim{}, false, err
	}
	from := e.readMark(order, epoch)
	mark := claimMark{order: order.Key, epoch: epoch, finished: from}
	defer func() {
		if mark.finished != from {
			e.writeMark(order.Path, mark)
		}
	}()
	head := true // every package before the one looked at is finished
	done := map[string]bool{}
	now := e.takeoverNow()
	for start := from; start < order.Len(); start += indexWindow {
		end := min(start+indexWindow, order.Len())
		wps := make([]*config.WorkPackage, 0, end-start)
		keys := make([]string, 0, end-start)
		for i := start; i < end; i++ {
			wp, err := order.At(i)
			if err != nil {
				return nextClaim{}, false, err
			}
			wps = append(wps, wp)
			keys = append(keys, lockkey.TaskKey(wp.ID))
		}
		recs, err := locks.GetMany(ctx, e.Store, keys)
		if err != nil {
			return nextClaim{}, false, fmt.Errorf("read the work packages' state: %w", err)
		}
		for j, wp := range wps {
			s := PackageStatus{ID: wp.ID, State: PackageReady}
			if !errors.Is(recs[j].Err, locks.ErrNotFound) {
				statusOf(&s, recs[j], now)
			}
			finished := s.Unreadable == "" && (s.State == PackageDone || s.State == PackageFailed)
			if head = head && finished; head {
				mark.finished = start + j + 1
			}
			if finished {
				done[wp.ID] = s.State == PackageDone
			}
			if s.State != PackageReady {
				continue
			}
			if ok, err := e.dependenciesDone(ctx, wp, done); err != nil || !ok {
				if err != nil {
					return nextClaim{}, false, err
				}
				continue
			}
			if free, err := e.locksFree(ctx, wp); err != nil || !free {
				if err != nil {
					return nextClaim{}, false, err
				}
				continue
			}
			res, err := e.claim(ctx, wp, Claim{TTL: o.TTL})
			var finishedNow *PackageStateError
			var held *locks.HeldError
			var corrupt *locks.CorruptError
			switch {
			case errors.As(err, &finishedNow) || errors.As(err, &held) || errors.As(err, &corrupt):
				continue // taken, finished or in another's way since it was read
			case err != nil:
				return nextClaim{}, false, err
			}
			return nextClaim{Package: wp, Results: res}, true, nil
		}
	}
	return nextClaim{}, false, nil
}

// dependenciesDone reports whether every package wp depends on is done;
// done holds the states known already and learns those read.
func (e *Handler) dependenciesDone(ctx context.Context, wp *config.WorkPackage, done map[string]bool) (bool, error) {
	var read []string
	for _, dep := range wp.DependsOn {
		d, known := done[dep]
		if known && !d {
			return false, nil
		}
		if !known {
			read = append(read, lockkey.TaskKey(dep))
		}
	}
	if len(read) == 0 {
		return true, nil
	}
	recs, err := locks.GetMany(ctx, e.Store, read)
	if err != nil {
		return false, fmt.Errorf("read the work packages' state: %w", err)
	}
	all := true
	for i, en := range recs {
		d := en.Err == nil && en.Action == session.DoneAction
		done[strings.TrimPrefix(read[i], "task:")] = d
		all = all && d
	}
	return all, nil
}

// locksFree reports whether no live lock of another is on, or overlaps,
// a key of wp: a claim is not tried where it would fail (on the file
// store each try writes, and a failed one writes again to undo it).
func (e *Handler) locksFree(ctx context.Context, wp *config.WorkPackage) (bool, error) {
	keys, err := e.packageKeys(wp)
	if err != nil {
		return false, err
	}
	sts, err := e.Mgr.Check(ctx, session.Canonicals(keys), e.Me)
	var corrupt *locks.CorruptError
	if errors.As(err, &corrupt) {
		return false, nil // the claim would be refused; the whole queue names it
	}
	if err != nil {
		return false, err
	}
	for _, st := range sts {
		if st.State == locks.StateHeld {
			return false, nil
		}
	}
	return true, nil
}

// markFromQueue keeps the mark a read of the whole queue shows: the
// packages at the head of the claim order that are finished. epoch was
// read before the queue.
func (e *Handler) markFromQueue(file, epoch string, q *Queue) {
	order, err := e.claimOrder(file)
	if err != nil || order.Len() != len(q.Packages) {
		return
	}
	n := 0
	for n < len(q.Packages) {
		s := q.Packages[n]
		if s.Unreadable != "" || s.State != PackageDone && s.State != PackageFailed {
			break
		}
		n++
	}
	e.writeMark(order.Path, claimMark{order: order.Key, epoch: epoch, finished: n})
}
