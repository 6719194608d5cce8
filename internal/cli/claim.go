package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/lockgate/lockgate/internal/service"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/config"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/locks"
	"github.com/lockgate/lockgate/locks/journal"
	"github.com/lockgate/lockgate/locks/lockkey"
)

// loadPackages reads and validates the work packages file.
func (a *app) loadPackages(e *service.Workspace, file string) (*config.WorkPackages, error) {
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
		return nil, service.Usagef("no work packages file %s: write one, or point work_packages in .lockgate.yaml (or --packages) at it", file)
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

// workPackage finds package id and returns it with its canonical keys.
func (a *app) workPackage(e *service.Workspace, file, id string) (*config.WorkPackage, []lockkey.Key, error) {
	wps, err := a.loadPackages(e, file)
	if err != nil {
		return nil, nil, err
	}
	wp, ok := wps.Find(id)
	if !ok {
		return nil, nil, service.Usagef("no work package %q in %s", id, wps.Path)
	}
	keys, err := packageKeys(e, wp)
	return wp, keys, err
}

func packageKeys(e *service.Workspace, wp *config.WorkPackage) ([]lockkey.Key, error) {
	keys, err := e.FileKeys(append(append([]string(nil), wp.Locks.Files...), wp.Locks.Keys...))
	if err != nil {
		return nil, fmt.Errorf("work package %s: %w", wp.ID, err)
	}
	return keys, nil
}

// ClaimOptions are `claim`'s flags.
type ClaimOptions struct {
	Packages string
	TTL      time.Duration
	Wait     time.Duration
}

// AddFlags registers the options on fs.
func (o *ClaimOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Var(once(&o.Packages), "packages", "work packages `FILE` (default: work_packages of the config)")
	durationVar(fs, &o.TTL, "ttl", "lock lifetime (default: the package's ttl_minutes, else by worker type)")
	durationVar(fs, &o.Wait, "wait", "with WP: wait up to `D` for its locks")
}

func claimCommand() *command {
	o := &ClaimOptions{}
	return &command{
		takesLocks: true,
		usage:      "claim [WP] [--packages FILE]",
		short:      "claim a work package: its task lock and all its locks (the next free one without WP)",
		flags:      o.AddFlags,
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) > 1 {
				return service.Usagef("claim: give at most one work package id")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			wps, err := a.loadPackages(e, o.Packages)
			if err != nil {
				return err
			}
			if len(args) == 1 {
				wp, ok := wps.Find(args[0])
				if !ok {
					return service.Usagef("no work package %q in %s", args[0], wps.Path)
				}
				a.waitHint = func(d string) string { return hint.Line(hint.WaitClaim, d, wp.ID) }
				res, err := a.claimPackage(ctx, e, wp, o, o.Wait)
				return a.reportClaim(wp, res, err)
			}
			wp, res, err := a.claimNext(ctx, e, wps, o)
			return a.reportClaim(wp, res, err)
		},
	}
}

func (a *app) claimPackage(ctx context.Context, e *service.Workspace, wp *config.WorkPackage, o *ClaimOptions, wait time.Duration) ([]locks.Result, error) {
	keys, err := packageKeys(e, wp)
	if err != nil {
		return nil, err
	}
	taskKey, err := lockkey.Parse(lockkey.TaskKey(wp.ID), e.KeyOptions())
	if err != nil { // loadPackages refused it already
		return nil, fmt.Errorf("work package id %q cannot name a task lock: %w", wp.ID, err)
	}
	ttl := o.TTL
	if ttl == 0 && wp.Locks.TTLMinutes > 0 {
		ttl = time.Duration(wp.Locks.TTLMinutes) * time.Minute
	}
	if ttl == 0 {
		ttl = e.Cfg.TTL(e.Me.HolderType, lockkey.KindTask)
	}
	req := locks.Request{
		Keys: service.Canonicals(append([]lockkey.Key{taskKey}, keys...)), Owner: e.Me, TTL: ttl,
		Reason: cmp.Or(wp.Locks.Reason, wp.Title), Action: "claim", TaskID: wp.ID, Wait: wait,
		ExactTTL: o.TTL > 0, KeepHeld: true,
		Events: []journal.Event{{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
			Action: journal.ActionClaim, Key: taskKey.Canonical, TaskID: wp.ID, Details: wp.Title}},
	}
	return e.Mgr.Acquire(ctx, req)
}

// claimNext claims the first package, in file order, whose locks are all
// free, holding the global claim lock meanwhile so two workers never pick
// the same one.
func (a *app) claimNext(ctx context.Context, e *service.Workspace, wps *config.WorkPackages, o *ClaimOptions) (*config.WorkPackage, []locks.Result, error) {
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
	var lastErr error
	for i := range wps.Packages {
		wp := &wps.Packages[i]
		res, err := a.claimPackage(ctx, e, wp, o, 0)
		var held *locks.HeldError
		var corrupt *locks.CorruptError
		if errors.As(err, &held) || errors.As(err, &corrupt) {
			// Without WP, --wait only waits for the claim lock: the hint
			// waits for the package that was tried last.
			a.waitHint = func(d string) string { return hint.Line(hint.WaitClaim, d, wp.ID) }
			lastErr = err
			continue
		}
		return wp, res, err
	}
	if lastErr == nil {
		return nil, nil, service.Usagef("claim: %s has no work packages", wps.Path)
	}
	return nil, nil, fmt.Errorf("claim: no free work package in %s; the last one tried: %w", wps.Path, lastErr)
}

func (a *app) reportClaim(wp *config.WorkPackage, res []locks.Result, err error) error {
	if err != nil {
		return err
	}
	if a.globals.JSON {
		return writeJSON(a.stdio.Out, map[string]any{"package": wp.ID, "locks": acquiredViews(res), "store": a.env.StoreName()})
	}
	fmt.Fprintf(a.stdio.Out, "%s\n", safetext.Field(wp.ID))
	fmt.Fprintf(a.stdio.Err, "claimed %s (%s): %d locks in %s until %s\n", safetext.Field(wp.ID), safetext.Field(wp.Title), len(res), a.env.StoreLabel(), stamp(res[0].Lock.ExpiresAt))
	return nil
}

func doneCommand() *command {
	var packages string
	return &command{
		usage: "done WP [--packages FILE]",
		short: "finish a claimed work package: release its locks",
		flags: func(fs *pflag.FlagSet) {
			fs.Var(once(&packages), "packages", "work packages `FILE` (default: work_packages of the config)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			if len(args) != 1 {
				return service.Usagef("done: give exactly one work package id")
			}
			e, err := a.open(ctx)
			if err != nil {
				return err
			}
			res, err := a.finishPackage(ctx, e, packages, args[0])
			a.reportRelease(e, res, err)
			return err
		},
	}
}

// finishPackage releases work package id's task lock and the locks its
// claim took, which only the worker that claimed it may do. It gives back
// only what the claim took: a lock held before the claim (renewed by it)
// stays, and so does one that another package this worker still claims
// needs.
func (a *app) finishPackage(ctx context.Context, e *service.Workspace, packages, id string) (locks.ReleaseResult, error) {
	wps, err := a.loadPackages(e, packages)
	if err != nil {
		return locks.ReleaseResult{}, err
	}
	wp, ok := wps.Find(id)
	if !ok {
		return locks.ReleaseResult{}, service.Usagef("no work package %q in %s", id, wps.Path)
	}
	keys, err := packageKeys(e, wp)
	if err != nil {
		return locks.ReleaseResult{}, err
	}
	taskKey := lockkey.TaskKey(wp.ID)
	cur, err := e.Store.Get(ctx, taskKey)
	if errors.Is(err, locks.ErrNotFound) {
		return locks.ReleaseResult{}, service.Usagef("done %s: the package is not claimed (no %s lock)", wp.ID, taskKey)
	}
	if err != nil {
		return locks.ReleaseResult{}, err
	}
	if !cur.OwnedBy(e.Me) {
		return locks.ReleaseResult{}, &locks.NotOwnerError{Lock: cur, Op: "release"}
	}
	give, err := a.claimedKeys(ctx, e, wps, wp, service.Canonicals(keys))
	if err != nil {
		return locks.ReleaseResult{}, err
	}
	if cur.Action == "claim" {
		give = append(give, taskKey)
	} else {
		fmt.Fprintf(a.stdio.Err, "kept %s: you held it before the claim\n", taskKey)
	}
	return e.Mgr.Release(ctx, give, e.Me, false,
		journal.Event{Worker: e.Me.Holder, WorkerType: e.Me.HolderType, Session: e.Me.Session,
			Action: journal.ActionDone, Key: taskKey, TaskID: wp.ID, Details: wp.Title})
}

// claimedKeys are the keys of wp that done gives back: all but those this
// worker held before the claim (their record was not made by a claim) and
// those another package it still claims lists.
func (a *app) claimedKeys(ctx context.Context, e *service.Workspace, wps *config.WorkPackages, wp *config.WorkPackage, keys []string) ([]string, error) {
	now := time.Now()
	fold, err := e.IgnoreCase(ctx)
	if err != nil {
		return nil, err
	}
	// id is a key as the store tells keys apart: under core.ignorecase
	// two spellings of one path are one lock.
	id := func(k string) string {
		if fold {
			return lockkey.FoldCase(k)
		}
		return k
	}
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
		oks, err := packageKeys(e, other)
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
			fmt.Fprintf(a.stdio.Err, "kept %s: another package you claim needs it\n", k)
			continue
		}
		l, err := e.Store.Get(ctx, k)
		if err == nil && l.OwnedBy(e.Me) && l.Action != "claim" {
			fmt.Fprintf(a.stdio.Err, "kept %s: you held it before the claim\n", k)
			continue
		}
		give = append(give, k) // Release reports a missing or another's lock
	}
	return give, nil
}
