package cli

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/outcome"
)

const (
	// workStopGrace is how long a stopped CMD has to exit after SIGTERM
	// before its process group is killed.
	workStopGrace = 10 * time.Second
	// With nothing to claim, the loop reads the queue again after a
	// delay that grows from workPollMin to workPollMax (with jitter, so
	// that many loops do not read at once).
	workPollMin = 200 * time.Millisecond
	workPollMax = 2 * time.Second
)

// How a worker loop ended (the summary's status).
const (
	workDrained     = "drained"     // every package done
	workFailed      = "failed"      // nothing left that can be finished: packages failed
	workMax         = "max"         // --max packages finished
	workInterrupted = "interrupted" // SIGINT or SIGTERM
)

// workOptions are `work`'s flags.
type workOptions struct {
	Packages string
	Max      int
	Retries  int
	TTL      time.Duration
}

func workCommand() *command {
	o := workOptions{Retries: 1}
	return &command{
		takesLocks: true,
		usage:      "work [--max N] [--retries N] [--ttl D] [--packages FILE] -- CMD...",
		short:      "the worker loop: claim the next package, run CMD on it, mark it done (or give it back); until the queue is drained",
		long: `The worker loop: claim the next ready package (highest priority, its
dependencies done, its locks free), run CMD for it, and mark it done when
CMD exits 0 (at HEAD). While CMD runs the claim is renewed every third of
its lifetime; a claim found lost (taken over after it expired, or cleared)
stops CMD, which is never marked done. A CMD that fails gives its package
back, to be tried again; after --retries failures of one package the loop
marks it failed. With nothing to claim now the loop waits; it ends when
every package is done (exit 0), when nothing left can be finished because
packages failed (exit 1, naming them), after --max packages, or on SIGINT
or SIGTERM (CMD stopped, its package given back, exit 130).

CMD runs in a process group of its own, without input, with:
  LOCKGATE_PACKAGE        the package id
  LOCKGATE_PACKAGE_TITLE  its title
  LOCKGATE_PACKAGE_FILES  its files and patterns, one a line
  LOCKGATE_PACKAGE_KEYS   its other lock keys, one a line
  LOCKGATE_WORKER, LOCKGATE_WORKER_TYPE, LOCKGATE_SESSION
                          the loop's identity: lockgate commands and hooks
                          CMD runs hold the claim's locks
Without --session or LOCKGATE_SESSION each loop has a session of its own.`,
		keepDash: true,
		flags: func(fs *pflag.FlagSet) {
			packagesFlag(fs, &o.Packages)
			fs.IntVar(&o.Max, "max", 0, "stop after `N` packages finished (done or failed) by this loop (0: no limit)")
			fs.IntVar(&o.Retries, "retries", o.Retries, "give a package back `N` times when CMD fails on it, then mark it failed at the next failure (0: at the first)")
			durationVar(fs, &o.TTL, "ttl", "claim lifetime `D`, renewed every third of it while CMD runs (default: the package's ttl, else by worker type)")
		},
		run: func(ctx context.Context, a *app, args []string) error {
			before, argv := splitDashDash(args)
			if len(before) > 0 || len(argv) == 0 {
				return service.Usagef("work: want -- CMD... (the command to run for each package)")
			}
			if o.Max < 0 || o.Retries < 0 || o.TTL < 0 {
				return service.Usagef("work: --max, --retries and --ttl must not be negative")
			}
			if a.globals.Session == "" && getenv("LOCKGATE_SESSION") == "" {
				// Each loop its own session: a claim lost to another loop
				// of the same worker must not pass for its own.
				a.globals.Session = fmt.Sprintf("work-%d-%s", os.Getpid(), locks.NewToken()[:6])
			}
			// The workspace records events with the context it is opened
			// with: what the loop does after a signal (giving the package
			// back) must reach the workflow branch too.
			e, err := a.open(context.WithoutCancel(ctx))
			if err != nil {
				return err
			}
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			w := &workLoop{a: a, e: e, o: o, argv: argv, sigs: sigs, failures: map[string]int{}}
			w.sum.Worker, w.sum.Session, w.sum.Store = e.Me.Holder, e.Me.Session, e.StoreName()
			w.sum.Done, w.sum.Failed, w.sum.GivenBack, w.sum.Lost = []workRun{}, []workRun{}, []workRun{}, []workRun{}
			w.say("worker %s, session %s, lock store %s; running %s for each package", e.Me.Holder, e.Me.Session, e.StoreLabel(), argv[0])
			err = w.run(ctx)
			var exit *outcome.ExitError
			if err != nil && !errors.As(err, &exit) {
				w.sum.Status = "error"
				a.partial = map[string]any{"work": w.sum}
			}
			return err
		},
	}
}

// workLoop is one `lockgate work`.
type workLoop struct {
	a    *app
	e    *service.Workspace
	o    workOptions
	argv []string
	sigs <-chan os.Signal
	// interrupted: a SIGINT or SIGTERM came; the loop stops.
	interrupted bool
	// failures counts CMD's failures by package.
	failures map[string]int
	// finished counts the packages this loop marked done or failed.
	finished int
	// waiting is the last reason to wait that was printed.
	waiting string
	// poll is the delay before the next read of the queue; it grows while
	// nothing can be claimed, so that a package that looks free but cannot
	// be claimed is not tried many times a second.
	poll time.Duration
	sum  workSummary
}

// workSummary is what `work --json` prints at the end.
type workSummary struct {
	Status    string    `json:"status"`
	Worker    string    `json:"worker"`
	Session   string    `json:"session"`
	Done      []workRun `json:"done"`
	Failed    []workRun `json:"failed"`
	GivenBack []workRun `json:"given_back"`
	Lost      []workRun `json:"lost"`
	// Unfinishable: the packages failed and those that wait for them,
	// when nothing left can be finished.
	Unfinishable []service.PackageStatus      `json:"unfinishable,omitempty"`
	Counts       map[service.PackageState]int `json:"counts,omitempty"`
	Store        string                       `json:"store"`
}

// workRun is one run of CMD on a package.
type workRun struct {
	Package string  `json:"package"`
	Seconds float64 `json:"seconds"`
	Commit  string  `json:"commit,omitempty"`
	Reason  string  `json:"reason,omitempty"`
}

func (w *workLoop) say(format string, args ...any) {
	fmt.Fprintf(w.a.stdio.Err, "lockgate work: %s\n", safetext.Text(fmt.Sprintf(format, args...)))
}

// stop reports whether the loop must stop: interrupted (a signal, or the
// command's context cancelled).
func (w *workLoop) stop(ctx context.Context) bool {
	if ctx.Err() != nil {
		w.interrupted = true
	}
	return w.interrupted
}

func (w *workLoop) run(ctx context.Context) error {
	for {
		if w.stop(ctx) {
			return w.end(workInterrupted, nil, nil)
		}
		if w.o.Max > 0 && w.finished >= w.o.Max {
			return w.end(workMax, nil, nil)
		}
		// Read each time: the file may change while the loop runs.
		wps, err := w.e.LoadPackages(w.o.Packages)
		if err != nil {
			return err
		}
		next, err := w.e.ClaimNext(ctx, wps, service.Claim{TTL: w.o.TTL})
		var none *service.NoFreePackageError
		switch {
		case w.stop(ctx):
			if err == nil && next.Package != nil {
				w.giveBack(context.WithoutCancel(ctx), next.Package, workRun{Package: next.Package.ID}, "interrupted")
			}
			return w.end(workInterrupted, nil, nil)
		case errors.As(err, &none):
			if unfinishable(wps, next.Queue) != nil {
				return w.end(workFailed, wps, next.Queue)
			}
			if reason := strings.TrimPrefix(none.Error(), "claim: "); reason != w.waiting {
				w.waiting = reason
				w.say("waiting: %s", reason)
			}
			w.wait(ctx)
			continue
		case err != nil:
			return err
		case next.Drained:
			if unfinishable(wps, next.Queue) != nil {
				return w.end(workFailed, wps, next.Queue)
			}
			return w.end(workDrained, wps, next.Queue)
		}
		w.waiting, w.poll = "", 0
		if err := w.work(ctx, next.Package, next.Results); err != nil {
			return err
		}
	}
}

// wait waits until a package may be claimed, the queue is drained or
// nothing left can be finished (the next claim tells), or the loop is
// interrupted. It reads the queue without writing to the store: a claim
// takes the global claim lock, and a poll must not.
func (w *workLoop) wait(ctx context.Context) {
	for {
		delay := max(w.poll, workPollMin)
		jitter := time.Duration(rand.Int64N(int64(delay/2) + 1))
		select {
		case <-w.sigs:
			w.interrupted = true
			return
		case <-ctx.Done():
			return
		case <-time.After(delay*3/4 + jitter):
		}
		w.poll = min(delay*2, workPollMax)
		wps, err := w.e.LoadPackages(w.o.Packages)
		if err != nil {
			return // the claim reports it
		}
		q, err := w.e.Packages(ctx, wps, true)
		if err != nil || q.Drained() || claimable(q) || unfinishable(wps, q) != nil {
			return
		}
	}
}

// claimable reports whether a package of q may be claimed now: ready,
// its dependencies done, its locks free.
func claimable(q *service.Queue) bool {
	for _, s := range q.Packages {
		if s.State == service.PackageReady && s.Unreadable == "" && len(s.WaitsFor) == 0 && len(s.HeldBy) == 0 {
			return true
		}
	}
	return false
}

// unfinishable returns, when nothing left in q can ever be finished, the
// packages failed and those that wait (directly or not) for a failed one;
// nil when some package is done-able yet (ready, or claimed by someone)
// or none failed.
func unfinishable(wps *config.WorkPackages, q *service.Queue) []service.PackageStatus {
	if q == nil || q.Counts[service.PackageFailed] == 0 {
		return nil
	}
	memo := map[string]bool{}
	var doomed func(id string) bool
	doomed = func(id string) bool {
		if d, ok := memo[id]; ok {
			return d
		}
		memo[id] = false // a cycle (validate refuses them) dooms nothing
		wp, ok := wps.Find(id)
		if !ok {
			return false
		}
		for _, dep := range wp.DependsOn {
			s, ok := q.Status(dep)
			if ok && (s.State == service.PackageFailed || s.State == service.PackageReady && doomed(dep)) {
				memo[id] = true
				return true
			}
		}
		return false
	}
	var out []service.PackageStatus
	for _, s := range q.Packages {
		switch {
		case s.State == service.PackageDone:
		case s.State == service.PackageFailed:
			out = append(out, s)
		case s.State == service.PackageReady && s.Unreadable == "" && doomed(s.ID):
			out = append(out, s)
		default:
			return nil
		}
	}
	return out
}

// work runs CMD on wp, claimed with res, keeping the claim alive while it
// runs, and then marks wp done, gives it back or marks it failed. An
// error is the loop's end.
func (w *workLoop) work(ctx context.Context, wp *config.WorkPackage, res []locks.Result) error {
	bg := context.WithoutCancel(ctx) // what the loop does after a signal still gets done
	start := time.Now()
	taskKey := lockkey.TaskKey(wp.ID)
	var task locks.Lock
	keys := make([]string, 0, len(res))
	for _, r := range res {
		keys = append(keys, r.Lock.Key)
		if r.Lock.Key == taskKey {
			task = r.Lock
		}
	}
	ttl := w.e.ClaimTTL(wp, service.Claim{TTL: w.o.TTL})
	try := w.failures[wp.ID] + 1
	w.say("claimed %s (%s) until %s, try %d of %d", wp.ID, wp.Title, stamp(task.ExpiresAt), try, w.o.Retries+1)

	env, err := w.env(wp)
	if err != nil {
		w.giveBack(bg, wp, workRun{Package: wp.ID}, "its keys cannot be read")
		return err
	}
	stdio := w.a.stdio
	if w.a.globals.JSON {
		stdio.Out = stdio.Err // stdout holds the summary alone
	}
	c := newChild(w.argv, w.e.Cwd, env, stdio, true)
	if err := c.start(); err != nil {
		w.giveBack(bg, wp, workRun{Package: wp.ID}, "CMD cannot be started")
		return service.Usagef("work: %v", err)
	}

	// A refresh that cannot reach the store is tried again at the next
	// tick while the claim has not expired: only a claim found lost, or
	// not renewed before its expiry, stops CMD.
	expires := task.ExpiresAt
	finishedByCMD := false
	refresh := func() error {
		if finishedByCMD {
			return nil
		}
		ls, err := w.e.Mgr.Refresh(bg, keys, w.e.Me, ttl, 0, false)
		if err == nil {
			for _, l := range ls {
				if l.Key != taskKey {
					continue
				}
				if l.Token != task.Token { // the same worker and session claimed it again
					return &locks.LostError{Key: taskKey, Op: "refresh"}
				}
				expires = l.ExpiresAt
			}
			return nil
		}
		cur, gerr := w.e.Store.Get(bg, taskKey)
		switch {
		case gerr == nil && service.IsFinishedPackage(cur) && cur.OwnedBy(w.e.Me):
			finishedByCMD = true // CMD ran `lockgate done` itself
			return nil
		case claimLost(err), !time.Now().Before(expires):
			return err
		}
		w.say("could not renew the claim of %s (trying again before it expires at %s): %v", wp.ID, stamp(expires), err)
		return nil
	}
	stop := func() { c.stop(workStopGrace) }
	interrupt := func(os.Signal) {
		w.interrupted = true
		stop()
	}
	status, lost, err := runKept(c, ttl/3, refresh, stop, w.sigs, interrupt)
	took := time.Since(start)
	run := workRun{Package: wp.ID, Seconds: took.Round(time.Millisecond).Seconds()}
	switch {
	case lost != nil:
		w.lose(bg, wp, res, run, fmt.Sprintf("lost the claim while %s ran, stopped it after %s", w.argv[0], roundDuration(took)), lost)
		return nil
	case w.stop(ctx):
		w.say("interrupted: stopped %s after %s", w.argv[0], roundDuration(took))
		w.giveBack(bg, wp, run, "interrupted")
		return nil
	case err != nil:
		w.giveBack(bg, wp, run, "CMD could not be waited for")
		return fmt.Errorf("work: %w", err)
	case status == 0:
		return w.finish(bg, wp, res, task, run, service.Finish{}, took)
	}
	reason := fmt.Sprintf("%s exited %d", w.argv[0], status)
	w.failures[wp.ID]++
	if w.failures[wp.ID] > w.o.Retries {
		return w.finish(bg, wp, res, task, run, service.Finish{Failed: reason}, took)
	}
	_, err = w.e.ReleasePackage(bg, w.o.Packages, wp.ID)
	if err != nil {
		if !w.stillClaimed(bg, task) {
			w.lose(bg, wp, res, run, "lost the claim while "+w.argv[0]+" ran", err)
			return nil
		}
		return err
	}
	run.Reason = reason
	w.sum.GivenBack = append(w.sum.GivenBack, run)
	w.say("gave %s back after %s: %s (try %d of %d)", wp.ID, roundDuration(took), reason, try, w.o.Retries+1)
	return nil
}

// finish marks wp done (how names no failure: at HEAD) or failed.
func (w *workLoop) finish(ctx context.Context, wp *config.WorkPackage, res []locks.Result, task locks.Lock, run workRun, how service.Finish, took time.Duration) error {
	f, err := w.e.FinishPackage(ctx, w.o.Packages, wp.ID, how)
	var state *service.PackageStateError
	switch {
	case errors.As(err, &state) && state.Status.Holder == w.e.Me.Holder && state.Status.Session == w.e.Me.Session:
		// CMD finished it itself (`lockgate done`): as it said.
		how = service.Finish{Commit: state.Status.Commit, Failed: state.Status.Reason}
		if state.Status.State == service.PackageDone {
			how.Failed = ""
		}
		f.Record.Commit = state.Status.Commit
	case err != nil && !w.stillClaimed(ctx, task):
		w.lose(ctx, wp, res, run, "lost the claim before it could be marked finished", err)
		return nil
	case err != nil:
		return err
	}
	w.finished++
	if how.Failed != "" {
		run.Reason = how.Failed
		w.sum.Failed = append(w.sum.Failed, run)
		w.say("%s failed after %s: %s (try %d of %d); `lockgate retry %s` makes it ready again", wp.ID, roundDuration(took), how.Failed, w.failures[wp.ID], w.o.Retries+1, wp.ID)
		return nil
	}
	run.Commit = f.Record.Commit
	w.sum.Done = append(w.sum.Done, run)
	w.say("%s done in %s%s", wp.ID, roundDuration(took), atCommit(run.Commit))
	return nil
}

// stillClaimed reports whether the claim whose task record was task still
// stands (or whether that cannot be told: the store does not answer).
func (w *workLoop) stillClaimed(ctx context.Context, task locks.Lock) bool {
	cur, err := w.e.Store.Get(ctx, task.Key)
	if errors.Is(err, locks.ErrNotFound) {
		return false
	}
	return err != nil || cur.Token == task.Token && !service.IsFinishedPackage(cur)
}

// lose reports a claim lost (taken over after it expired, or cleared): the
// package is not this loop's to finish; what is left of the claim is
// given back and the loop goes on.
func (w *workLoop) lose(ctx context.Context, wp *config.WorkPackage, res []locks.Result, run workRun, what string, why error) {
	w.say("%s: %s; not marked done: %v", wp.ID, what, why)
	if _, err := w.e.DropLostClaim(ctx, wp.ID, res); err != nil {
		w.say("%s: could not give back the rest of the lost claim (it expires by itself): %v", wp.ID, err)
	}
	run.Reason = why.Error()
	w.sum.Lost = append(w.sum.Lost, run)
}

// giveBack releases wp after run (why: for the report); a failure is
// reported: the claim expires by itself.
func (w *workLoop) giveBack(ctx context.Context, wp *config.WorkPackage, run workRun, why string) {
	if _, err := w.e.ReleasePackage(ctx, w.o.Packages, wp.ID); err != nil {
		w.say("could not give %s back (its claim expires by itself): %v", wp.ID, err)
		return
	}
	run.Reason = why
	w.sum.GivenBack = append(w.sum.GivenBack, run)
	w.say("gave %s back: %s", wp.ID, why)
}

// claimLost reports whether a refresh's error says the claim is gone or
// another's (rather than that the store could not be asked).
func claimLost(err error) bool {
	var lost *locks.LostError
	var notOwner *locks.NotOwnerError
	return errors.As(err, &lost) || errors.As(err, &notOwner) || errors.Is(err, locks.ErrTokenMismatch) || errors.Is(err, locks.ErrNotFound)
}

// env is what CMD learns of its package and of the loop's identity, so
// that the lockgate commands (and hooks) it runs act as the loop's
// worker and session, holders of the claim's locks.
func (w *workLoop) env(wp *config.WorkPackage) ([]string, error) {
	files, err := w.e.FileKeys(wp.Locks.Files)
	if err != nil {
		return nil, fmt.Errorf("work package %s: %w", wp.ID, err)
	}
	keys, err := w.e.FileKeys(wp.Locks.Keys)
	if err != nil {
		return nil, fmt.Errorf("work package %s: %w", wp.ID, err)
	}
	return []string{
		"LOCKGATE_PACKAGE=" + wp.ID,
		"LOCKGATE_PACKAGE_TITLE=" + wp.Title,
		"LOCKGATE_PACKAGE_FILES=" + strings.Join(service.Canonicals(files), "\n"),
		"LOCKGATE_PACKAGE_KEYS=" + strings.Join(service.Canonicals(keys), "\n"),
		"LOCKGATE_WORKER=" + w.e.Me.Holder,
		"LOCKGATE_WORKER_TYPE=" + w.e.Me.HolderType,
		"LOCKGATE_SESSION=" + w.e.Me.Session,
	}, nil
}

// end reports how the loop ended and returns its exit status: 0 when the
// queue is drained or --max packages are finished, 1 when packages
// failed (nothing left can be finished, or this loop marked one failed),
// 130 when interrupted.
func (w *workLoop) end(status string, wps *config.WorkPackages, q *service.Queue) error {
	w.sum.Status = status
	code := 0
	mine := fmt.Sprintf("this loop: %d done, %d failed, %d given back, %d lost", len(w.sum.Done), len(w.sum.Failed), len(w.sum.GivenBack), len(w.sum.Lost))
	switch status {
	case workDrained:
		w.sum.Counts = q.Counts
		w.say("the queue is drained: %d done (%s)", q.Counts[service.PackageDone], mine)
	case workFailed:
		w.sum.Counts = q.Counts
		w.sum.Unfinishable = unfinishable(wps, q)
		var failed, blocked []string
		for _, s := range w.sum.Unfinishable {
			if s.State == service.PackageFailed {
				failed = append(failed, fmt.Sprintf("%s (%s)", s.ID, s.Reason))
			} else {
				blocked = append(blocked, fmt.Sprintf("%s (after %s)", s.ID, strings.Join(s.WaitsFor, ", ")))
			}
		}
		msg := "failed: " + strings.Join(failed, ", ")
		if len(blocked) > 0 {
			msg += "; waiting for failed packages: " + strings.Join(blocked, ", ")
		}
		w.say("nothing left can be finished: %s (%s); `lockgate retry WP` makes a failed package ready again", msg, mine)
		code = outcome.ExitPolicy
	case workMax:
		w.say("stopped after --max %d packages (%s)", w.o.Max, mine)
		if len(w.sum.Failed) > 0 {
			code = outcome.ExitPolicy
		}
	case workInterrupted:
		w.say("interrupted (%s)", mine)
		code = outcome.ExitInterrupted
	}
	if w.a.globals.JSON {
		if err := writeJSON(w.a.stdio.Out, w.sum); err != nil {
			return err
		}
	}
	if code != 0 {
		return &outcome.ExitError{Code: code}
	}
	return nil
}

// roundDuration prints d to a tenth of a second.
func roundDuration(d time.Duration) string {
	return d.Round(100 * time.Millisecond).String()
}
