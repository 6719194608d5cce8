package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// LoadPackages reads and validates the work packages file.
func (e *Handler) LoadPackages(file string) (*config.WorkPackages, error) {
	file = e.PackagesFile(file)
	// Every claim reads the file: keep it decoded in the clone's state.
	wps, err := config.LoadWorkPackagesCached(file, e.CacheDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, session.Usagef("no work packages file %s: write one, or point work_packages in .lockgate.yaml (or --packages) at it", file)
	}
	if err != nil {
		return nil, err
	}
	if err := e.validatePackages(wps); err != nil {
		return nil, err
	}
	return wps, nil
}

// PackagesFile is the work packages file: file (relative to the working
// directory), or by default work_packages of the config (relative to the
// repository's top).
func (e *Handler) PackagesFile(file string) string {
	if file == "" {
		file = e.Cfg.WorkPackages
		if !filepath.IsAbs(file) && e.WorkTree() != "" {
			file = filepath.Join(e.WorkTree(), file)
		}
	} else if !filepath.IsAbs(file) {
		file = filepath.Join(e.Cwd, file)
	}
	return file
}

// ParsePackages parses and validates data as the work packages file
// named name (problems name it with their lines), as LoadPackages does
// with the file it reads.
func (e *Handler) ParsePackages(name string, data []byte) (*config.WorkPackages, error) {
	wps, err := config.LoadWorkPackagesBytes(name, data)
	if err != nil {
		return nil, err
	}
	if err := e.validatePackages(wps); err != nil {
		return nil, err
	}
	return wps, nil
}

func (e *Handler) validatePackages(wps *config.WorkPackages) error {
	opts := e.KeyOptions()
	return wps.Validate(func(id string) error {
		return checkPackageID(id, opts)
	}, func(k string) error {
		_, err := lockkey.Parse(k, opts)
		return err
	})
}

// checkPackageID refuses an id that cannot name the package's task lock,
// which claim takes: validate and claim judge ids by this one check.
func checkPackageID(id string, opts *lockkey.Options) error {
	if _, err := lockkey.Parse(lockkey.TaskKey(id), opts); err != nil {
		return fmt.Errorf("cannot name a task lock: %w", err)
	}
	return nil
}

// WorkPackage finds package id and returns it with its canonical keys.
func (e *Handler) WorkPackage(file, id string) (*config.WorkPackage, []lockkey.Key, error) {
	wps, err := e.LoadPackages(file)
	if err != nil {
		return nil, nil, err
	}
	wp, ok := wps.Find(id)
	if !ok {
		return nil, nil, session.Usagef("no work package %q in %s", id, wps.Path)
	}
	keys, err := e.packageKeys(wp)
	return wp, keys, err
}

func (e *Handler) packageKeys(wp *config.WorkPackage) ([]lockkey.Key, error) {
	keys, err := e.FileKeys(append(append([]string(nil), wp.Locks.Files...), wp.Locks.Keys...))
	if err != nil {
		return nil, fmt.Errorf("work package %s: %w", wp.ID, err)
	}
	return keys, nil
}

// Claim is how a claim takes its locks: their lifetime (0: the package's
// ttl, else by worker type) and how long to wait for held ones.
type Claim struct {
	TTL, Wait time.Duration
}

// claimTTL is the lifetime a claim of wp gives its locks: o.TTL, else
// the package's ttl, else the task lifetime of the worker's type.
func (e *Handler) claimTTL(wp *config.WorkPackage, o Claim) time.Duration {
	if o.TTL != 0 {
		return o.TTL
	}
	if ttl := wp.TTL(); ttl > 0 {
		return ttl
	}
	return e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask)
}

// claimLocks takes wp's task record (as a claim) and all its locks, all
// or nothing. A finished package's task record is held, even against its
// finisher: a done package is never handed out again.
func (e *Handler) claimLocks(ctx context.Context, wp *config.WorkPackage, o Claim) ([]locks.Result, error) {
	keys, err := e.packageKeys(wp)
	if err != nil {
		return nil, err
	}
	taskKey, err := lockkey.Parse(lockkey.TaskKey(wp.ID), e.KeyOptions())
	if err != nil { // LoadPackages refused it already (validatePackages)
		return nil, fmt.Errorf("work package id %q cannot name a task lock: %w", wp.ID, err)
	}
	ttl := e.claimTTL(wp, o)
	req := locks.Request{
		Keys: session.Canonicals(append([]lockkey.Key{taskKey}, keys...)), Owner: e.Me, TTL: ttl,
		Reason: cmp.Or(wp.Locks.Reason, wp.Title), Action: session.ClaimAction, TaskID: wp.ID, Wait: o.Wait,
		ExactTTL: o.TTL > 0, KeepHeld: true, Settled: session.IsFinishedPackage,
		Events: []journal.Event{{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
			Action: journal.ActionClaim, Key: taskKey.Canonical, TaskID: wp.ID, Details: wp.Title}},
	}
	return e.Mgr.Acquire(ctx, req)
}

// NoFreePackageError is a claim of the next package that found none it
// could take: Waiting wait for dependencies, Blocked for locks of others
// (Last is the one tried last, Err why), Claimed are claimed by others,
// Unreadable have a task record that cannot be read (never handed out
// until it is cleared).
type NoFreePackageError struct {
	Path, Last string
	Err        error
	Waiting    []PackageStatus
	Blocked    []PackageStatus
	Unreadable []PackageStatus
	Claimed    int
}

// listedPackages is how many packages of each kind the message of a
// claim that found none names; `lockgate packages` lists them all.
const listedPackages = 5

// namedPackages joins the first listedPackages names, saying how many
// more there are: a queue of thousands must not make a line of them.
func namedPackages(ss []PackageStatus, name func(PackageStatus) string) string {
	var out []string
	for _, s := range ss[:min(len(ss), listedPackages)] {
		out = append(out, name(s))
	}
	if more := len(ss) - listedPackages; more > 0 {
		out = append(out, fmt.Sprintf("and %d more (lockgate packages lists them)", more))
	}
	return strings.Join(out, ", ")
}

func (e *NoFreePackageError) Error() string {
	var parts []string
	if len(e.Blocked) > 0 {
		parts = append(parts, "waiting for locks: "+namedPackages(e.Blocked, func(s PackageStatus) string {
			if len(s.HeldBy) > 0 {
				return fmt.Sprintf("%s (%s held by %s)", s.ID, s.HeldBy[0].Key, s.HeldBy[0].Holder)
			}
			return s.ID
		}))
	}
	if len(e.Waiting) > 0 {
		parts = append(parts, "waiting for dependencies: "+namedPackages(e.Waiting, func(s PackageStatus) string {
			return s.ID + " (after " + strings.Join(s.WaitsFor, ", ") + ")"
		}))
	}
	if len(e.Unreadable) > 0 {
		parts = append(parts, "unreadable task records: "+namedPackages(e.Unreadable, func(s PackageStatus) string { return s.ID }))
	}
	if e.Claimed > 0 {
		parts = append(parts, fmt.Sprintf("%d claimed", e.Claimed))
	}
	return fmt.Sprintf("claim: no work package of %s can be claimed now; %s", e.Path, strings.Join(parts, "; "))
}

func (e *NoFreePackageError) Unwrap() error { return e.Err }

// UnreadableRecords are the task records of the Unreadable packages that
// the store named.
func (e *NoFreePackageError) UnreadableRecords() []*locks.CorruptError {
	var out []*locks.CorruptError
	for _, s := range e.Unreadable {
		if cr := s.Corrupt(); cr != nil {
			out = append(out, cr)
		}
	}
	return out
}

// Finished is what finishing a package did: the locks it released, and
// those it kept.
type Finished struct {
	locks.ReleaseResult
	Kept []Kept
	// Record is the package's task record as finishing left it.
	Record locks.Lock
}

// Kept is a lock of a finished package that stays, and why.
type Kept struct {
	Key string
	Why string
}

// Why a finished package keeps a lock.
const (
	KeptHeldBefore = "you held it before the claim"
	KeptNeeded     = "another package you claim needs it"
	KeptTaken      = "another holds it now: your lock on it lapsed and was taken over"
)

// claimedKeys returns those of keys (the canonical keys of c's package)
// that its claim may give back: not those that another package the
// caller still claims locks too (kept, KeptNeeded), nor those the caller
// held before the claim (kept, KeptHeldBefore). Only the packages that
// lock one of the keys are read, with their task records.
func (e *Handler) claimedKeys(ctx context.Context, c packageClaim, keys []string, f *Finished) ([]string, error) {
	now := e.Now()
	// id is a key as the store tells keys apart: two spellings of one path
	// are one lock.
	id := lockkey.FoldCase
	needed := map[string]bool{}
	others, err := e.sharers(c, keys)
	if err != nil {
		return nil, err
	}
	taskKeys := make([]string, len(others))
	for i, other := range others {
		taskKeys[i] = lockkey.TaskKey(other.ID)
	}
	// One read of their task records, not one per package.
	recs, err := locks.GetMany(ctx, e.Store, taskKeys)
	if err != nil {
		return nil, fmt.Errorf("read the work packages' state: %w", err)
	}
	for i, other := range others {
		en := recs[i]
		l := en.Lock
		if en.Err != nil || !l.OwnedBy(e.Me) || l.Expired(now) || session.IsFinishedPackage(l) {
			continue // not claimed by this worker (a corrupt record claims nothing; a finished package needs nothing)
		}
		oks, err := e.packageKeys(other)
		if err != nil {
			return nil, err
		}
		for _, k := range oks {
			needed[id(k.Canonical)] = true
		}
	}
	var give []string
	for _, k := range keys {
		if needed[id(k)] {
			f.Kept = append(f.Kept, Kept{Key: k, Why: KeptNeeded})
			continue
		}
		l, err := e.Store.Get(ctx, k)
		if err == nil && l.OwnedBy(e.Me) && l.Action != "claim" {
			f.Kept = append(f.Kept, Kept{Key: k, Why: KeptHeldBefore})
			continue
		}
		give = append(give, k) // Release reports a missing or another's lock
	}
	return give, nil
}

// sharers returns the packages of c's file, c's own left out, that may
// lock one of keys: those the claim order's key index names, or, without
// one, every package of the file.
func (e *Handler) sharers(c packageClaim, keys []string) ([]*config.WorkPackage, error) {
	var out []*config.WorkPackage
	if c.order == nil {
		for i := range c.wps.Packages {
			if other := &c.wps.Packages[i]; other.ID != c.wp.ID {
				out = append(out, other)
			}
		}
		return out, nil
	}
	seen := map[int]bool{}
	for _, k := range keys {
		positions, ok := c.order.Locking(lockkey.FoldCase(k))
		if !ok { // no key index: every package
			seen = map[int]bool{}
			positions = make([]int, c.order.Len())
			for i := range positions {
				positions[i] = i
			}
		}
		for _, pos := range positions {
			if seen[pos] {
				continue
			}
			seen[pos] = true
			other, err := c.order.At(pos)
			if err != nil {
				return nil, err
			}
			if other.ID != c.wp.ID {
				out = append(out, other)
			}
		}
		if !ok {
			break
		}
	}
	return out, nil
}

// PackageList is the work queue as `packages` shows it: every package's
// state with the locks in its way, the time it was read at, and for each
// package whose task record is unreadable, by id, the hint that clears it.
type PackageList struct {
	*Queue
	Now   time.Time
	Hints map[string]string
}

// ListPackages reads the state of every package of the work packages
// file ("": work_packages of the config).
func (e *Handler) ListPackages(ctx context.Context, file string) (PackageList, error) {
	wps, err := e.LoadPackages(file)
	if err != nil {
		return PackageList{}, err
	}
	q, err := e.Packages(ctx, wps, true)
	if err != nil {
		return PackageList{}, err
	}
	l := PackageList{Queue: q, Now: e.Now(), Hints: map[string]string{}}
	for i := range q.Packages {
		if cr := q.Packages[i].Corrupt(); cr != nil {
			l.Hints[q.Packages[i].ID] = e.corruptHint(cr)
		}
	}
	return l, nil
}

// corruptHint is the hint that clears the unreadable record cr: by its
// key, or, where the key does not name the file the record is in, by
// its file.
func (e *Handler) corruptHint(cr *locks.CorruptError) string {
	var where func(string) string
	if _, ok := e.Store.(*filestore.Store); ok {
		where = e.Store.Where
	}
	return hint.CorruptLine(where, cr.Path, cr.Key, lockkey.RelArg(cr.Key, e.UserDir()))
}
