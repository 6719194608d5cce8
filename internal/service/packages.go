package service

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/lockgate/lockgate/internal/config"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/journal"
	"github.com/lockgate/lockgate/locks/lockkey"
)

// LoadPackages reads and validates the work packages file.
func (e *Workspace) LoadPackages(file string) (*config.WorkPackages, error) {
	if file == "" {
		file = e.Cfg.WorkPackages
		if !filepath.IsAbs(file) && e.Repo.Toplevel != "" {
			file = filepath.Join(e.Repo.Toplevel, file)
		}
	} else if !filepath.IsAbs(file) {
		file = filepath.Join(e.Cwd, file)
	}
	wps, err := config.LoadWorkPackages(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Usagef("no work packages file %s: write one, or point work_packages in .lockgate.yaml (or --packages) at it", file)
	}
	if err != nil {
		return nil, err
	}
	opts := e.KeyOptions()
	if err := wps.Validate(func(id string) error {
		return checkPackageID(id, opts)
	}, func(k string) error {
		_, err := lockkey.Parse(k, opts)
		return err
	}); err != nil {
		return nil, err
	}
	return wps, nil
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
func (e *Workspace) WorkPackage(file, id string) (*config.WorkPackage, []lockkey.Key, error) {
	wps, err := e.LoadPackages(file)
	if err != nil {
		return nil, nil, err
	}
	wp, ok := wps.Find(id)
	if !ok {
		return nil, nil, Usagef("no work package %q in %s", id, wps.Path)
	}
	keys, err := e.packageKeys(wp)
	return wp, keys, err
}

func (e *Workspace) packageKeys(wp *config.WorkPackage) ([]lockkey.Key, error) {
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

// ClaimPackage claims wp: its task lock and all its locks, all or nothing.
func (e *Workspace) ClaimPackage(ctx context.Context, wp *config.WorkPackage, o Claim) ([]locks.Result, error) {
	keys, err := e.packageKeys(wp)
	if err != nil {
		return nil, err
	}
	taskKey, err := lockkey.Parse(lockkey.TaskKey(wp.ID), e.KeyOptions())
	if err != nil { // loadPackages refused it already
		return nil, fmt.Errorf("work package id %q cannot name a task lock: %w", wp.ID, err)
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = wp.TTL()
	}
	if ttl == 0 {
		ttl = e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask)
	}
	req := locks.Request{
		Keys: Canonicals(append([]lockkey.Key{taskKey}, keys...)), Owner: e.Me, TTL: ttl,
		Reason: cmp.Or(wp.Locks.Reason, wp.Title), Action: "claim", TaskID: wp.ID, Wait: o.Wait,
		ExactTTL: o.TTL > 0, KeepHeld: true,
		Events: []journal.Event{{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
			Action: journal.ActionClaim, Key: taskKey.Canonical, TaskID: wp.ID, Details: wp.Title}},
	}
	return e.Mgr.Acquire(ctx, req)
}

// NoFreePackageError is a claim of the next package that found none free:
// Last is the one tried last, Err why it could not be claimed.
type NoFreePackageError struct {
	Path, Last string
	Err        error
}

func (e *NoFreePackageError) Error() string {
	return fmt.Sprintf("claim: no free work package in %s; the last one tried: %v", e.Path, e.Err)
}

func (e *NoFreePackageError) Unwrap() error { return e.Err }

// ClaimNext claims the first package, in file order, whose locks are all
// free, holding the global claim lock meanwhile so two workers never pick
// the same one. o.Wait waits for the claim lock only.
func (e *Workspace) ClaimNext(ctx context.Context, wps *config.WorkPackages, o Claim) (*config.WorkPackage, []locks.Result, error) {
	if e.Cfg.Locks.UseGlobalClaimLock {
		res, err := e.Mgr.Acquire(ctx, locks.Request{Keys: []string{"claim"}, Owner: e.Me, TTL: time.Minute,
			Action: "claim", Reason: "choosing the next work package", Wait: max(o.Wait, 30*time.Second)})
		if err != nil {
			return nil, nil, err
		}
		if !res[0].Renewed { // a claim lock held before is not ours to give back
			defer func() {
				_, _ = e.Mgr.Release(context.WithoutCancel(ctx), []string{"claim"}, e.Me, false)
			}()
		}
	}
	var last *NoFreePackageError
	for i := range wps.Packages {
		wp := &wps.Packages[i]
		res, err := e.ClaimPackage(ctx, wp, Claim{TTL: o.TTL})
		var held *locks.HeldError
		var corrupt *locks.CorruptError
		if errors.As(err, &held) || errors.As(err, &corrupt) {
			last = &NoFreePackageError{Path: wps.Path, Last: wp.ID, Err: err}
			continue
		}
		return wp, res, err
	}
	if last == nil {
		return nil, nil, Usagef("claim: %s has no work packages", wps.Path)
	}
	return nil, nil, last
}

// FinishPackage releases work package id's task lock and the locks its
// claim took, which only the worker that claimed it may do. It gives back
// only what the claim took: a lock held before the claim (renewed by it)
// stays, and so does one that another package this worker still claims
// needs.
func (e *Workspace) FinishPackage(ctx context.Context, packages, id string) (Finished, error) {
	wps, err := e.LoadPackages(packages)
	if err != nil {
		return Finished{}, err
	}
	wp, ok := wps.Find(id)
	if !ok {
		return Finished{}, Usagef("no work package %q in %s", id, wps.Path)
	}
	keys, err := e.packageKeys(wp)
	if err != nil {
		return Finished{}, err
	}
	taskKey := lockkey.TaskKey(wp.ID)
	cur, err := e.Store.Get(ctx, taskKey)
	if errors.Is(err, locks.ErrNotFound) {
		return Finished{}, Usagef("done %s: the package is not claimed (no %s lock)", wp.ID, taskKey)
	}
	if err != nil {
		return Finished{}, err
	}
	if !cur.OwnedBy(e.Me) {
		return Finished{}, &locks.NotOwnerError{Lock: cur, Op: "release"}
	}
	var f Finished
	give, err := e.claimedKeys(ctx, wps, wp, Canonicals(keys), &f)
	if err != nil {
		return Finished{}, err
	}
	if cur.Action == "claim" {
		give = append(give, taskKey)
	} else {
		f.Kept = append(f.Kept, Kept{Key: taskKey, Why: KeptHeldBefore})
	}
	f.ReleaseResult, err = e.Mgr.Release(ctx, give, e.Me, false,
		journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
			Action: journal.ActionDone, Key: taskKey, TaskID: wp.ID, Details: wp.Title})
	return f, err
}

// Finished is what finishing a package did: the locks it released, and
// those it kept.
type Finished struct {
	locks.ReleaseResult
	Kept []Kept
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
)

// claimedKeys are the keys of wp that done gives back: all but those this
// worker held before the claim (their record was not made by a claim) and
// those another package it still claims lists.
func (e *Workspace) claimedKeys(ctx context.Context, wps *config.WorkPackages, wp *config.WorkPackage, keys []string, f *Finished) ([]string, error) {
	now := e.Now()
	// id is a key as the store tells keys apart: two spellings of one path
	// are one lock.
	id := lockkey.FoldCase
	needed := map[string]bool{}
	for i := range wps.Packages {
		other := &wps.Packages[i]
		if other.ID == wp.ID {
			continue
		}
		l, err := e.Store.Get(ctx, lockkey.TaskKey(other.ID))
		if err != nil || !l.OwnedBy(e.Me) || l.Expired(now) {
			continue // not claimed by this worker (a corrupt record claims nothing)
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
