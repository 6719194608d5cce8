package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/hooks"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/workflow"
)

// LogMissingError says that a clone has no lock log to judge by.
type LogMissingError struct {
	Refs   []string // the refs looked for
	Remote string
	Branch string
}

func (e *LogMissingError) Error() string {
	return fmt.Sprintf("no lock log: neither %s exists, and this clone has no journal", strings.Join(e.Refs, " nor "))
}

// fetchSpec is the refspec that fetches the branch into its
// remote-tracking ref.
func (e *LogMissingError) fetchSpec() string {
	return fmt.Sprintf("+refs/heads/%s:refs/remotes/%s/%s", e.Branch, e.Remote, e.Branch)
}

// FetchLockLog fetches the workflow branch from workflow.remote into its
// remote-tracking ref.
func (e Handler) FetchLockLog(ctx context.Context) error {
	miss := &LogMissingError{Remote: e.LogRemote(), Branch: e.Cfg.Workflow.Branch}
	dir := e.WorkTree()
	if dir == "" {
		dir = e.GitDir()
	}
	if _, err := gitexec.Output(ctx, dir, nil, "fetch", "--quiet", "--no-tags", "--", miss.Remote, miss.fetchSpec()); err != nil {
		return fmt.Errorf("fetch the lock log (%s from %s): %w", miss.Branch, miss.Remote, err)
	}
	return nil
}

// ReadLockLog reads the lock log once: the workflow branch, local and
// fetched (and at the extra revisions: a push carrying it), and the
// journal when the clone has one, each event once.
func (e Handler) ReadLockLog(ctx context.Context, extra ...string) ([]journal.Event, error) {
	lr, err := e.readLockLogSince(ctx, time.Time{}, extra...)
	return lr.events, err
}

// lockLog is the lock log as readLockLogSince read it.
type lockLog struct {
	events []journal.Event
	// read counts the events decoded from the workflow branch and its
	// cache, over every pass, and those of the journal.
	read int
}

// readLockLogSince is readLockLog for judging what happened from since
// on: it reads the events from then on, and the earlier ones of the
// grants that may have been live then (workflow.ReadEventsSince); a
// grant whose first event read is a renewal, a release or a clear
// that bears on since has its earlier events read by asking again from
// that event's time, until each such grant's take is read or the whole
// log was. With since zero, the whole log.
func (e Handler) readLockLogSince(ctx context.Context, since time.Time, extra ...string) (lockLog, error) {
	return e.readLockLogFor(ctx, since, func() (*history.Keys, bool) { return nil, true }, extra...)
}

// readLockLogFor is readLockLogSince for judging changes: it asks again
// only for the grants of keys that bear on them (bearing, asked only
// then; history.BuildFor leaves the others out), so that a release
// whose take is missing, of a key no change touches, does not make it
// read the whole log.
func (e Handler) readLockLogFor(ctx context.Context, since time.Time, bearing func() (*history.Keys, bool), extra ...string) (lockLog, error) {
	refs := e.LogRefs()
	cfg := workflow.Config{GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree()}
	var out lockLog
	var local []journal.Event
	journalRead := false
	for {
		lr, err := workflow.ReadEventsSince(ctx, cfg, append(refs, extra...), since)
		if err != nil {
			return lockLog{}, fmt.Errorf("read the lock log: %w", err)
		}
		out.read += lr.Read
		if !journalRead {
			// Judging from a time on, the journal is read from where
			// its events stop being on the local branch, which is
			// read; judging everything, or with no local branch, whole.
			var n int
			if local, n, err = e.readJournal(ctx, cfg, !since.IsZero() && slices.Contains(lr.Found, refs[0])); err != nil {
				return lockLog{}, err
			}
			out.read += n
			journalRead = true
		}
		if len(lr.Found) == 0 && len(local) == 0 {
			return lockLog{}, &LogMissingError{Refs: refs, Remote: e.LogRemote(), Branch: e.Cfg.Workflow.Branch}
		}
		branch, err := e.VouchedEvents(ctx, append(refs, extra...), lr.Events)
		if err != nil {
			return lockLog{}, err
		}
		evs := withLocal(branch, local)
		if lr.Complete || since.IsZero() {
			out.events = evs
			return out, nil
		}
		keys, ok := bearing()
		if !ok {
			return lockLog{}, errors.New("read the lock log: no commits to read it for")
		}
		earlier := grantsBegunBefore(evs, since, keys)
		switch {
		case earlier.IsZero():
			out.events = evs
			return out, nil
		case earlier.Before(since):
			since = earlier
		default:
			since = time.Time{} // no nearer start would find them
		}
	}
}

// readJournal reads the journal's events for the lock log, and how many
// lines it decoded: with afterSync those after the mark CatchUp left
// (workflow.JournalAfterSync), when there is one; else all. The last
// line torn by a crash is skipped, as `log` and `workflow sync` skip it:
// the event it began is recorded whole by the next command (intent
// recovery). Any other damaged line may be a lost lock event: the log
// cannot be judged by.
func (e Handler) readJournal(ctx context.Context, cfg workflow.Config, afterSync bool) ([]journal.Event, int, error) {
	var evs []journal.Event
	var bad []*journal.CorruptLineError
	var n int
	ok := false
	var err error
	if afterSync {
		evs, bad, n, ok, err = workflow.JournalAfterSync(ctx, cfg, e.LogRefs()[0], e.JournalFile())
	}
	if err == nil && !ok {
		evs, bad, err = e.JournalFile().ReadSkipping(time.Time{})
		n = len(evs) + len(bad)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read the lock log: %w", err)
	}
	for _, ce := range bad {
		if !ce.Torn {
			return nil, 0, fmt.Errorf("read the lock log: %w (fix or remove the line; lockgate never writes one)", ce)
		}
	}
	e.WarnSkippedLines(bad)
	return evs, n, nil
}

// withLocal adds to evs, the workflow branch's, the journal's events it
// lacks.
func withLocal(evs, local []journal.Event) []journal.Event {
	if len(local) == 0 {
		return evs
	}
	seen := make(map[string]bool, len(evs))
	for _, ev := range evs {
		seen[ev.ID] = true
	}
	for _, ev := range local {
		if !seen[ev.ID] {
			evs = append(evs, ev)
		}
	}
	return evs
}

// grantKey names one grant in the lock events: its key, fence and store.
type grantKey struct {
	key, store string
	fence      uint64
}

// grantsBegunBefore is the time of the earliest event of evs that renews,
// releases or clears a grant of a key that keys bear on whose take evs
// lack, and that bears on the locks held at since (a renewal that
// expires then or later, or names no expiry; a release or clear then or
// later): the grant was live then, and its take is earlier. Zero when
// there is none.
func grantsBegunBefore(evs []journal.Event, since time.Time, keys *history.Keys) time.Time {
	taken := map[grantKey]bool{}
	for i := range evs {
		ev := &evs[i]
		switch ev.Action {
		case journal.ActionAcquire, journal.ActionTakeover, journal.ActionPause:
			taken[grantKey{ev.Key, ev.Store, ev.Fence}] = true
		}
	}
	var earliest time.Time
	for i := range evs {
		ev := &evs[i]
		var bears bool
		switch ev.Action {
		case journal.ActionRefresh:
			bears = ev.ExpiresAt == nil || !ev.ExpiresAt.Before(since)
		case journal.ActionRelease, journal.ActionClear:
			bears = !ev.Timestamp.Before(since)
		}
		if bears && ev.Key != "" && keys.Bear(ev.Key) && !taken[grantKey{ev.Key, ev.Store, ev.Fence}] &&
			(earliest.IsZero() || ev.Timestamp.Before(earliest)) {
			earliest = ev.Timestamp
		}
	}
	return earliest
}

// judgedSince is the earliest time verify judges a commit of revArgs at
// (its commit time, less hooks.Margin): the lock log is read from then
// on. With revArgs nil, the staged change, judged now. Zero, the whole
// log, when git cannot list them (verify then says why).
func (e Handler) judgedSince(ctx context.Context, revArgs []string) time.Time {
	now := e.Now().Add(-hooks.Margin - time.Second)
	if revArgs == nil {
		return now
	}
	out, err := gitexec.RepoOutput(ctx, e.repo(), append([]string{"-c", "log.showSignature=false", "log", "--format=%ct"}, revArgs...)...)
	if err != nil {
		return time.Time{}
	}
	oldest := now
	for _, f := range strings.Fields(string(out)) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return time.Time{}
		}
		if t := time.Unix(n, 0).Add(-hooks.Margin); t.Before(oldest) {
			oldest = t
		}
	}
	return oldest
}

// FenceFloor is the highest fence an event of the lock log names: the
// workflow branch as the remote has it now (fetched first, unless the
// repository has no remote at all), as this clone has it, and the journal.
// A lock store whose counters start over (a new git lock table, a Redis
// that lost its data) starts above it, so that no fence a lock of the
// lost state holds is handed out again. A clone with no lock log at all
// has floor 0.
func (e Handler) FenceFloor(ctx context.Context) (uint64, error) {
	if e.WorkTree() != "" {
		// A remote without the branch (first use) has no events to add;
		// one that cannot be read fails the change: the floor it would
		// give is unknown. A repository without any remote (one of its
		// own, on Redis) has only its own log.
		remote, b := e.LogRemote(), e.Cfg.Workflow.Branch
		out, err := gitexec.RepoOutput(ctx, e.repo(), "remote")
		if err != nil {
			return 0, fmt.Errorf("read the lock log: list the clone's remotes: %w", err)
		}
		if len(strings.Fields(string(out))) > 0 {
			err := gitexec.FetchRef(ctx, e.repo(), remote, "refs/heads/"+b, "refs/remotes/"+remote+"/"+b)
			if err != nil && !errors.Is(err, gitexec.ErrNoRemoteRef) {
				return 0, fmt.Errorf("fetch the lock log (%s from %s): %w", b, remote, err)
			}
		}
	}
	evs, err := e.ReadLockLog(ctx)
	var miss *LogMissingError
	if errors.As(err, &miss) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var floor uint64
	for _, ev := range evs {
		floor = max(floor, ev.Fence)
	}
	return floor, nil
}

// EventCommits checks that commits, pushed to the workflow branch, are
// event commits (workflow.CheckEventCommits), read against the branch as
// it is; reason says why one is not, "" when all are.
func (e Handler) EventCommits(ctx context.Context, commits []string) (reason string, err error) {
	cfg := workflow.Config{GitDir: e.GitDir(), CommonDir: e.CommonDir(), WorkTree: e.WorkTree()}
	err = workflow.CheckEventCommits(ctx, cfg, []string{"refs/heads/" + e.Cfg.Workflow.Branch}, commits)
	var ne *workflow.NotEventsError
	if errors.As(err, &ne) {
		return ne.Error(), nil
	}
	if err != nil {
		return "", fmt.Errorf("check the commits pushed to the workflow branch: %w", err)
	}
	return "", nil
}

// Request names the commits `verify` proves against the lock log:
// HEAD's commits on no remote-tracking ref unless Range or Staged names
// others.
type Request struct {
	// Range is every commit of A..B (as git rev-list).
	Range string
	// Staged verifies the staged change as a commit made now.
	Staged bool
	// Fetch fetches the workflow branch from workflow.remote first.
	Fetch bool
	// Branch is the branch the commits land on, for branch locks
	// (locks.per_branch); "" finds it (RangeBranch).
	Branch string
	// AllowEmpty accepts commits (or a staged change) that change no
	// file; without it they are invalid input, so that a CI job fed
	// nothing cannot pass.
	AllowEmpty bool
}

// Validate refuses a request that names commits two ways.
func (req Request) Validate() error {
	if req.Staged && req.Range != "" {
		return session.Usagef("verify: give --staged or --range, not both")
	}
	return nil
}

// Verify proves the commits req names against the lock log: made by their
// authors under no one else's lock. They are judged by the policy of
// their base (judgeByBase), a staged change by HEAD's (judgeByHead).
func (e Handler) Verify(ctx context.Context, req Request) (*hooks.Report, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	revArgs := []string{"HEAD", "--not", "--remotes"}
	var err error
	switch {
	case req.Staged && e.WorkTree() == "":
		return nil, session.Usagef("verify --staged: a bare repository has no staged change")
	case req.Staged:
		revArgs = nil
		err = e.JudgeByHead(ctx)
	case req.Range != "":
		if err := e.CheckRange(ctx, "verify", req.Range); err != nil {
			return nil, err
		}
		revArgs = []string{req.Range}
		err = e.JudgeByBase(ctx, req.Range)
	default:
		err = e.JudgeByBase(ctx, "")
	}
	if err != nil {
		return nil, err
	}
	h, err := e.LogRunner(ctx, "")
	if err != nil {
		return nil, err
	}
	if !req.Staged {
		p, err := e.CIPusher()
		if err != nil {
			return nil, err
		}
		e.BindPusher(h, p, e.Base)
	}
	if req.Fetch {
		if err := e.FetchLockLog(ctx); err != nil {
			return nil, err
		}
	}
	branch := req.Branch
	if branch == "" && revArgs != nil {
		if branch, err = e.RangeBranch(ctx, req.Range, ""); err != nil {
			return nil, err
		}
	}
	r, err := e.verifyCommits(ctx, h, revArgs, branch)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Paths > 0 || req.AllowEmpty:
	case req.Staged:
		return nil, session.Usagef("verify: nothing is staged; pass --allow-empty to accept that")
	case r.OK:
		what := "HEAD has no commit that changes a file and is on no remote-tracking ref; name the commits with --range A..B"
		if req.Range != "" {
			what = "--range " + req.Range + " changes no file (no commits, or none that changes a file)"
		}
		return nil, session.Usagef("verify: %s; pass --allow-empty to accept that", what)
	}
	return r, nil
}

// verifyCommits judges the commits revArgs name against the lock log,
// read while git lists them; with revArgs nil, the staged change as a
// commit made now.
func (e Handler) verifyCommits(ctx context.Context, h *hooks.Runner, revArgs []string, branch string) (*hooks.Report, error) {
	r := &hooks.Report{Hook: "verify"}
	readLog := func(bearing func() (*history.Keys, bool)) ([]journal.Event, error) {
		lr, err := e.readLockLogFor(ctx, e.judgedSince(ctx, revArgs), bearing)
		return lr.events, err
	}
	var err error
	if revArgs == nil {
		var lr lockLog
		if lr, err = e.readLockLogSince(ctx, e.judgedSince(ctx, nil)); err == nil {
			err = h.VerifyStaged(ctx, e.Now(), history.Build(lr.events), r)
		}
	} else {
		err = h.VerifyReading(ctx, revArgs, branch, readLog, r)
	}
	if err != nil {
		return nil, err
	}
	r.Finish()
	return r, nil
}

// LogMissing is the branch and remote the lock log is fetched from.
func (e *LogMissingError) LogMissing() (branch, remote string) { return e.Branch, e.Remote }
