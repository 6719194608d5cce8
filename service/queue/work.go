package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// The worker loop (`lockgate work`): claim the next ready package, have
// the front end run the user's command for it while the claim is kept
// alive, then mark it done, give it back or mark it failed; until the
// queue is drained, nothing left can be finished, --max packages are
// finished or the loop is interrupted. The loop decides; the front end
// runs the process and forwards signals. docs/queue.md describes it.

const (
	// With nothing to claim, the loop reads the queue again after a
	// delay that grows from workPollMin to workPollMax (with jitter, so
	// that many loops do not read at once).
	workPollMin = 200 * time.Millisecond
	workPollMax = 2 * time.Second
)

// WorkStatus is how a worker loop ended (its summary's status).
type WorkStatus string

// How a worker loop ends.
const (
	WorkDrained     WorkStatus = "drained"     // every package done
	WorkFailed      WorkStatus = "failed"      // nothing left that can be finished: packages failed
	WorkMax         WorkStatus = "max"         // the maximum of packages finished
	WorkInterrupted WorkStatus = "interrupted" // a signal, or the request's context cancelled
	WorkError       WorkStatus = "error"       // an error ended it
)

// WorkSession is the session a worker loop acts in: the one named
// (session, else LOCKGATE_SESSION), or one of its own, so that a claim
// lost to another loop of the same worker does not pass for its own.
func WorkSession(session string, getenv func(string) string) string {
	if session != "" || getenv("LOCKGATE_SESSION") != "" {
		return session
	}
	return fmt.Sprintf("work-%d-%s", os.Getpid(), locks.NewToken()[:6])
}

// WorkRequest is one worker loop.
type WorkRequest struct {
	// Packages is the work packages file ("": work_packages of the config).
	Packages string
	// Max stops the loop after that many packages finished (0: no limit);
	// Retries is how many times a package is given back after its
	// command failed before the next failure marks it failed.
	Max, Retries int
	// TTL is the claims' lifetime (0: the package's ttl, else by worker type).
	TTL time.Duration
	// Command names the command run for each package, in what the loop says.
	Command string
	// Say receives what the loop says as it goes, one line at a time.
	Say func(line string)
}

// WorkSummary is what a worker loop did.
type WorkSummary struct {
	Status    WorkStatus `json:"status"`
	Worker    string     `json:"worker"`
	Session   string     `json:"session"`
	Done      []WorkRun  `json:"done"`
	Failed    []WorkRun  `json:"failed"`
	GivenBack []WorkRun  `json:"given_back"`
	Lost      []WorkRun  `json:"lost"`
	// Unfinishable: the packages failed and those that wait for them,
	// when nothing left can be finished.
	Unfinishable []PackageStatus      `json:"unfinishable,omitempty"`
	Counts       map[PackageState]int `json:"counts,omitempty"`
	Store        string               `json:"store"`
	// EventsPushed says whether the loop's events are on the remote when
	// it ends (only when the clone pushes them: workflow.auto_push);
	// EventsPushError why not.
	EventsPushed    *bool  `json:"events_pushed,omitempty"`
	EventsPushError string `json:"events_push_error,omitempty"`
}

// WorkRun is one run of the command on a package.
type WorkRun struct {
	Package string  `json:"package"`
	Seconds float64 `json:"seconds"`
	Commit  string  `json:"commit,omitempty"`
	Reason  string  `json:"reason,omitempty"`
}

// WorkEnd is how a worker loop ended: its summary, and whether packages
// failed (the loop marked one failed, or nothing left can be finished).
type WorkEnd struct {
	Summary WorkSummary
	Failed  bool
}

// WorkJob is one package claimed for the command to run on.
type WorkJob struct {
	ID, Title string
	// Dir is where the command runs; Env what it learns of its package
	// and of the loop's identity, so that the lockgate commands (and
	// hooks) it runs act as the loop's worker and session, holders of
	// the claim's locks.
	Dir string
	Env []string
	// Every is how often Keep is to be called while the command runs: a
	// third of the claim's lifetime.
	Every time.Duration

	wp            *config.WorkPackage
	res           []locks.Result
	task          locks.Lock
	keys          []string
	ttl           time.Duration
	expires       time.Time
	start         time.Time
	try           int
	finishedByCMD bool
	// backoff is the wait before the next renewal after one the store
	// could not confirm (0 after one it did).
	backoff time.Duration
}

// CommandResult is how the command run for a job ended: its exit
// status, the claim found lost while it ran (Keep's error), or why it
// could not be waited for.
type CommandResult struct {
	Status int
	Lost   error
	Err    error
}

// WorkLoop is one worker loop. Next, Keep and Conclude are called from
// one goroutine; Interrupt from any.
type WorkLoop struct {
	e        *Handler
	req      WorkRequest
	stop     chan struct{}
	stopOnce sync.Once
	// failures counts the command's failures by package.
	failures map[string]int
	// finished counts the packages this loop marked done or failed.
	finished int
	// waiting is the last reason to wait that was said.
	waiting string
	// poll is the delay before the next read of the queue; it grows while
	// nothing can be claimed, so that a package that looks free but cannot
	// be claimed is not tried many times a second.
	poll time.Duration
	sum  WorkSummary
}

// NewWorkLoop starts a worker loop on the opened workspace.
func (e *Handler) NewWorkLoop(req WorkRequest) *WorkLoop {
	w := &WorkLoop{e: e, req: req, stop: make(chan struct{}), failures: map[string]int{}}
	w.sum = WorkSummary{Worker: e.Me.Holder, Session: e.Me.Session, Store: e.StoreName(),
		Done: []WorkRun{}, Failed: []WorkRun{}, GivenBack: []WorkRun{}, Lost: []WorkRun{}}
	w.say("worker %s, session %s, lock store %s; running %s for each package", e.Me.Holder, e.Me.Session, e.StoreLabel(), req.Command)
	return w
}

func (w *WorkLoop) say(format string, args ...any) {
	if w.req.Say != nil {
		w.req.Say(fmt.Sprintf(format, args...))
	}
}

// Summary is what the loop did so far.
func (w *WorkLoop) Summary() WorkSummary { return w.sum }

// Interrupt stops the loop: the package of a command stopped is given
// back, and the next Next ends the loop.
func (w *WorkLoop) Interrupt() { w.stopOnce.Do(func() { close(w.stop) }) }

// interrupted reports whether the loop must stop: interrupted, or ctx
// cancelled.
func (w *WorkLoop) interrupted(ctx context.Context) bool {
	if ctx.Err() != nil {
		w.Interrupt()
	}
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

// Next claims the next package and returns it to run the command on,
// waiting while none can be claimed; or returns how the loop ended.
func (w *WorkLoop) Next(ctx context.Context) (*WorkJob, *WorkEnd, error) {
	bg := context.WithoutCancel(ctx) // what the loop does after a signal still gets done
	for {
		if w.interrupted(ctx) {
			return nil, w.end(bg, WorkInterrupted, nil, nil), nil
		}
		if w.req.Max > 0 && w.finished >= w.req.Max {
			// The summary counts the queue as the loop leaves it, when it
			// can be read.
			var q *Queue
			wps, err := w.e.LoadPackages(w.req.Packages)
			if err == nil {
				q, _ = w.e.Packages(bg, wps, false)
			}
			return nil, w.end(bg, WorkMax, wps, q), nil
		}
		// The file is read each time: it may change while the loop runs.
		next, err := w.e.claimNext(ctx, w.req.Packages, Claim{TTL: w.req.TTL})
		wps := next.Packages
		var none *NoFreePackageError
		switch {
		case w.interrupted(ctx):
			if err == nil && next.Package != nil {
				w.giveBack(bg, next.Package.ID, WorkRun{Package: next.Package.ID}, "interrupted")
			}
			return nil, w.end(bg, WorkInterrupted, nil, nil), nil
		case asQueueStuck(err):
			return nil, w.end(bg, WorkFailed, wps, next.Queue), nil
		case errors.As(err, &none):
			if reason := strings.TrimPrefix(none.Error(), "claim: "); reason != w.waiting {
				w.waiting = reason
				w.say("waiting: %s", reason)
			}
			w.wait(ctx)
			continue
		case contended(err):
			// Other workers kept the store busy: never a reason to end.
			if reason := "the queue is busy: " + err.Error(); reason != w.waiting {
				w.waiting = reason
				w.say("waiting: %s", reason)
			}
			w.wait(ctx)
			continue
		case err != nil:
			return nil, nil, err
		case next.Drained:
			if unfinishable(wps, next.Queue) != nil {
				return nil, w.end(bg, WorkFailed, wps, next.Queue), nil
			}
			return nil, w.end(bg, WorkDrained, wps, next.Queue), nil
		}
		w.waiting, w.poll = "", 0
		job, err := w.job(bg, next.Package, next.Results)
		return job, nil, err
	}
}

// wait waits until a package may be claimed, the queue is drained or
// nothing left can be finished (the next claim tells), or the loop is
// interrupted. It reads the queue without writing to the store: a claim
// takes the global claim lock, and a poll must not.
func (w *WorkLoop) wait(ctx context.Context) {
	for {
		delay := max(w.poll, workPollMin)
		jitter := time.Duration(rand.Int64N(int64(delay/2) + 1))
		select {
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(delay*3/4 + jitter):
		}
		w.poll = min(delay*2, workPollMax)
		wps, err := w.e.LoadPackages(w.req.Packages)
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
func claimable(q *Queue) bool {
	for _, s := range q.Packages {
		if s.State == PackageReady && s.Unreadable == "" && len(s.WaitsFor) == 0 && len(s.HeldBy) == 0 {
			return true
		}
	}
	return false
}

// QueueStuckError says that nothing left in a work packages file can
// ever be finished, though some packages are not done or failed yet:
// each waits, directly or not, for one that failed. It is no reason to
// wait (`claim` exits 1, not 4): a retry must come first.
type QueueStuckError struct {
	Path string
	// Packages are the failed packages and those that wait for them.
	Packages []PackageStatus
}

// QueueStuck marks the error as a queue that cannot go on.
func (*QueueStuckError) QueueStuck() {}

func (e *QueueStuckError) Error() string {
	return fmt.Sprintf("claim: nothing left in %s can be finished: %s; %s", e.Path, e.what(), e.retryHint())
}

// what names the failed packages and those that wait for them.
func (e *QueueStuckError) what() string {
	var failed, blocked []string
	for _, s := range e.Packages {
		if s.State == PackageFailed {
			failed = append(failed, fmt.Sprintf("%s (%s)", s.ID, s.Reason))
		} else {
			blocked = append(blocked, fmt.Sprintf("%s (after %s)", s.ID, strings.Join(s.WaitsFor, ", ")))
		}
	}
	msg := "failed: " + strings.Join(failed, ", ")
	if len(blocked) > 0 {
		msg += "; waiting for failed packages: " + strings.Join(blocked, ", ")
	}
	return msg
}

// retryHint names the command that makes the first failed package ready
// again.
func (e *QueueStuckError) retryHint() string {
	for _, s := range e.Packages {
		if s.State == PackageFailed {
			return fmt.Sprintf("`lockgate retry %s` makes it ready again", s.ID)
		}
	}
	return "`lockgate retry WP` makes a failed package ready again"
}

func asQueueStuck(err error) bool {
	var stuck *QueueStuckError
	return errors.As(err, &stuck)
}

// unfinishable returns, when nothing left in q can ever be finished, the
// packages failed and those that wait (directly or not) for a failed one;
// nil when some package is done-able yet (ready, or claimed by someone)
// or none failed.
func unfinishable(wps *config.WorkPackages, q *Queue) []PackageStatus {
	if q == nil || q.Counts[PackageFailed] == 0 {
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
			s, ok := q.status(dep)
			if ok && (s.State == PackageFailed || s.State == PackageReady && doomed(dep)) {
				memo[id] = true
				return true
			}
		}
		return false
	}
	var out []PackageStatus
	for _, s := range q.Packages {
		switch {
		case s.State == PackageDone:
		case s.State == PackageFailed:
			out = append(out, s)
		case s.State == PackageReady && s.Unreadable == "" && doomed(s.ID):
			out = append(out, s)
		default:
			return nil
		}
	}
	return out
}

// job makes the job of wp, claimed with res; a package whose keys cannot
// be read is given back.
func (w *WorkLoop) job(ctx context.Context, wp *config.WorkPackage, res []locks.Result) (*WorkJob, error) {
	j := &WorkJob{ID: wp.ID, Title: wp.Title, Dir: w.e.Cwd, wp: wp, res: res, start: w.e.Now()}
	taskKey := lockkey.TaskKey(wp.ID)
	for _, r := range res {
		j.keys = append(j.keys, r.Lock.Key)
		if r.Lock.Key == taskKey {
			j.task = r.Lock
		}
	}
	j.ttl = w.e.claimTTL(wp, Claim{TTL: w.req.TTL})
	j.Every, j.expires = j.ttl/3, j.task.ExpiresAt
	j.try = w.failures[wp.ID] + 1
	w.say("claimed %s until %s, try %d of %d", session.PackageLabel(wp.ID, wp.Title), stampOf(&j.task.ExpiresAt), j.try, w.req.Retries+1)
	env, err := w.env(wp)
	if err != nil {
		w.giveBack(ctx, wp.ID, WorkRun{Package: wp.ID}, "its keys cannot be read")
		return nil, err
	}
	j.Env = env
	return j, nil
}

// env is what the command learns of its package and of the loop's
// identity.
func (w *WorkLoop) env(wp *config.WorkPackage) ([]string, error) {
	files, err := w.e.FileKeys(wp.Locks.Files)
	if err != nil {
		return nil, fmt.Errorf("work package %s: %w", wp.ID, err)
	}
	keys, err := w.e.FileKeys(wp.Locks.Keys)
	if err != nil {
		return nil, fmt.Errorf("work package %s: %w", wp.ID, err)
	}
	me := w.e.Me
	return []string{
		"LOCKGATE_PACKAGE=" + wp.ID,
		"LOCKGATE_PACKAGE_TITLE=" + wp.Title,
		"LOCKGATE_PACKAGE_FILES=" + strings.Join(session.Canonicals(files), "\n"),
		"LOCKGATE_PACKAGE_KEYS=" + strings.Join(session.Canonicals(keys), "\n"),
		"LOCKGATE_WORKER=" + me.Holder,
		"LOCKGATE_WORKER_TYPE=" + me.HolderType,
		"LOCKGATE_SESSION=" + me.Session,
	}, nil
}

// KeepAfter is how long to wait before the next Keep: j.Every after a
// confirmed renewal; after one the store could not confirm, a backoff
// that grows as lock hold's does, never past the instant Keep gives up.
func (w *WorkLoop) KeepAfter(j *WorkJob) time.Duration {
	return locks.RetryWait(j.Every, j.backoff, j.expires.Add(-locks.HoldMargin(j.ttl)), w.e.Now())
}

// Keep renews j's claim while the command runs. A renewal that cannot
// reach the store is tried again (after KeepAfter) while the claim's
// expiry, less a margin, is ahead: only a claim found lost, or not renewed
// before then, is an error, and the command must then be stopped before
// the claim can lapse and be taken by another.
func (w *WorkLoop) Keep(ctx context.Context, j *WorkJob) error {
	if j.finishedByCMD {
		return nil
	}
	bg := context.WithoutCancel(ctx)
	deadline := j.expires.Add(-locks.HoldMargin(j.ttl))
	rctx, cancel := locks.UntilDeadline(bg, deadline, w.e.Now())
	defer cancel()
	ls, err := w.e.Mgr.Refresh(rctx, j.keys, w.e.Me, j.ttl, 0, false)
	if err == nil {
		j.backoff = 0
		for _, l := range ls {
			if l.Key != j.task.Key {
				continue
			}
			if l.Token != j.task.Token { // the same worker and session claimed it again
				return &locks.LostError{Key: j.task.Key, Op: "refresh"}
			}
			j.expires = l.ExpiresAt
		}
		return nil
	}
	cur, gerr := w.e.Store.Get(bg, j.task.Key)
	switch {
	case gerr == nil && session.IsFinishedPackage(cur) && cur.OwnedBy(w.e.Me):
		j.finishedByCMD = true // the command ran `lockgate done` itself
		return nil
	case claimLost(err):
		return err
	case !w.e.Now().Before(deadline):
		return &locks.ExpiringError{Expires: j.expires, Err: err}
	}
	if j.backoff == 0 {
		w.say("could not renew the claim of %s (trying again before it expires at %s): %v", j.ID, stampOf(&j.expires), err)
	}
	j.backoff = locks.NextBackoff(j.backoff)
	return nil
}

// claimLost reports whether a renewal's error says the claim is gone or
// another's (rather than that the store could not be asked).
func claimLost(err error) bool {
	var lost *locks.LostError
	var notOwner *locks.NotOwnerError
	return errors.As(err, &lost) || errors.As(err, &notOwner) || errors.Is(err, locks.ErrTokenMismatch) || errors.Is(err, locks.ErrNotFound)
}

// GiveBack gives j's package back when its command could not be run
// (why says so).
func (w *WorkLoop) GiveBack(ctx context.Context, j *WorkJob, why string) {
	w.giveBack(context.WithoutCancel(ctx), j.ID, WorkRun{Package: j.ID}, why)
}

// Conclude marks j's package done when its command exited 0, gives it
// back when the command failed (marks it failed after the retries), or
// when the loop was interrupted; a claim lost is given up. An error is
// the loop's end.
func (w *WorkLoop) Conclude(ctx context.Context, j *WorkJob, r CommandResult) error {
	bg := context.WithoutCancel(ctx)
	took := w.e.Now().Sub(j.start)
	run := WorkRun{Package: j.ID, Seconds: took.Round(time.Millisecond).Seconds()}
	switch {
	case errors.As(r.Lost, new(*locks.ExpiringError)):
		w.lose(bg, j, run, fmt.Sprintf("the lock store did not confirm a renewal of the claim while %s ran, stopped it after %s, before the claim expires", w.req.Command, roundDuration(took)), r.Lost)
		return nil
	case r.Lost != nil:
		w.lose(bg, j, run, fmt.Sprintf("lost the claim while %s ran, stopped it after %s", w.req.Command, roundDuration(took)), r.Lost)
		return nil
	case w.interrupted(ctx):
		w.say("interrupted: stopped %s after %s", w.req.Command, roundDuration(took))
		w.giveBack(bg, j.ID, run, "interrupted")
		return nil
	case r.Err != nil:
		w.giveBack(bg, j.ID, run, "CMD could not be waited for")
		return fmt.Errorf("work: %w", r.Err)
	case r.Status == 0:
		return w.finish(bg, j, run, Finish{}, took)
	}
	reason := fmt.Sprintf("%s exited %d", w.req.Command, r.Status)
	w.failures[j.ID]++
	if w.failures[j.ID] > w.req.Retries {
		return w.finish(bg, j, run, Finish{Failed: reason}, took)
	}
	if _, err := w.e.ReleasePackage(bg, PackageRequest{Packages: w.req.Packages, ID: j.ID}); err != nil {
		if !w.stillClaimed(bg, j.task) {
			w.lose(bg, j, run, "lost the claim while "+w.req.Command+" ran", err)
			return nil
		}
		return err
	}
	run.Reason = reason
	w.sum.GivenBack = append(w.sum.GivenBack, run)
	w.say("gave %s back after %s: %s (try %d of %d)", j.ID, roundDuration(took), reason, j.try, w.req.Retries+1)
	return nil
}

// finish marks j's package done (how names no failure: at HEAD) or failed.
func (w *WorkLoop) finish(ctx context.Context, j *WorkJob, run WorkRun, how Finish, took time.Duration) error {
	f, err := w.e.FinishPackage(ctx, FinishRequest{PackageRequest: PackageRequest{Packages: w.req.Packages, ID: j.ID}, Finish: how})
	var state *PackageStateError
	switch {
	case errors.As(err, &state) && state.Status.Holder == w.e.Me.Holder && state.Status.Session == w.e.Me.Session:
		// The command finished it itself (`lockgate done`): as it said.
		how = Finish{Commit: state.Status.Commit, Failed: state.Status.Reason}
		if state.Status.State == PackageDone {
			how.Failed = ""
		}
		f.Record.Commit = state.Status.Commit
	case err != nil && !w.stillClaimed(ctx, j.task):
		w.lose(ctx, j, run, "lost the claim before it could be marked finished", err)
		return nil
	case err != nil:
		return err
	}
	w.finished++
	if how.Failed != "" {
		run.Reason = how.Failed
		w.sum.Failed = append(w.sum.Failed, run)
		w.say("%s failed after %s: %s (try %d of %d); `lockgate retry %s` makes it ready again", j.ID, roundDuration(took), how.Failed, w.failures[j.ID], w.req.Retries+1, j.ID)
		return nil
	}
	run.Commit = f.Record.Commit
	w.sum.Done = append(w.sum.Done, run)
	w.say("%s done in %s%s", j.ID, roundDuration(took), AtCommit(run.Commit))
	// The package's commits are verified against these events: they go
	// to the remote now, not with the next package's.
	w.settle(ctx)
	return nil
}

// settle pushes the loop's events the remote lacks (SettleEvents),
// trying a lost push again; what is left is said, and goes in the
// summary.
func (w *WorkLoop) settle(ctx context.Context) {
	st := w.e.SettleEvents(ctx)
	if !st.Pushes {
		return
	}
	pushed := st.Pushed()
	w.sum.EventsPushed, w.sum.EventsPushError = &pushed, ""
	if st.Err != nil {
		w.sum.EventsPushError = st.Err.Error()
		w.e.Notify("warning", st.Err.Error())
	}
}

// AtCommit says at which commit a package was marked done.
func AtCommit(c string) string {
	if c == "" {
		return " (no commit on this branch yet)"
	}
	return " at " + c
}

// stillClaimed reports whether the claim whose task record was task still
// stands (or whether that cannot be told: the store does not answer).
func (w *WorkLoop) stillClaimed(ctx context.Context, task locks.Lock) bool {
	cur, err := w.e.Store.Get(ctx, task.Key)
	if errors.Is(err, locks.ErrNotFound) {
		return false
	}
	return err != nil || cur.Token == task.Token && !session.IsFinishedPackage(cur)
}

// lose reports a claim lost (taken over after it expired, or cleared): the
// package is not this loop's to finish; what is left of the claim is
// given back and the loop goes on.
func (w *WorkLoop) lose(ctx context.Context, j *WorkJob, run WorkRun, what string, why error) {
	w.say("%s: %s; not marked done: %v", j.ID, what, why)
	if _, err := w.e.dropLostClaim(ctx, j.ID, j.res); err != nil {
		w.say("%s: could not give back the rest of the lost claim (it expires by itself): %v", j.ID, err)
	}
	run.Reason = why.Error()
	w.sum.Lost = append(w.sum.Lost, run)
}

// giveBack releases package id after run (why: for the report); a
// failure is said: the claim expires by itself.
func (w *WorkLoop) giveBack(ctx context.Context, id string, run WorkRun, why string) {
	if _, err := w.e.ReleasePackage(ctx, PackageRequest{Packages: w.req.Packages, ID: id}); err != nil {
		w.say("could not give %s back (its claim expires by itself): %v", id, err)
		return
	}
	run.Reason = why
	w.sum.GivenBack = append(w.sum.GivenBack, run)
	w.say("gave %s back: %s", id, why)
}

// end says how the loop ended and returns its summary.
func (w *WorkLoop) end(ctx context.Context, status WorkStatus, wps *config.WorkPackages, q *Queue) *WorkEnd {
	w.sum.Status = status
	w.settle(ctx)
	end := &WorkEnd{}
	mine := fmt.Sprintf("this loop: %d done, %d failed, %d given back, %d lost", len(w.sum.Done), len(w.sum.Failed), len(w.sum.GivenBack), len(w.sum.Lost))
	switch status {
	case WorkDrained:
		w.sum.Counts = q.Counts
		w.say("the queue is drained: %d done (%s)", q.Counts[PackageDone], mine)
	case WorkFailed:
		w.sum.Counts = q.Counts
		w.sum.Unfinishable = unfinishable(wps, q)
		stuck := &QueueStuckError{Path: q.Path, Packages: w.sum.Unfinishable}
		w.say("nothing left can be finished: %s (%s); %s", stuck.what(), mine, stuck.retryHint())
		end.Failed = true
	case WorkMax:
		if q != nil {
			w.sum.Counts = q.Counts
		}
		w.say("stopped after --max %d packages (%s)", w.req.Max, mine)
		end.Failed = len(w.sum.Failed) > 0
	case WorkInterrupted:
		w.say("interrupted (%s)", mine)
	}
	end.Summary = w.sum
	return end
}

// roundDuration prints d to a tenth of a second.
func roundDuration(d time.Duration) string {
	return d.Round(100 * time.Millisecond).String()
}
