package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/workflow"
	"github.com/lockgate/lockgate/service/hooks"
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

// LogRefs are where a clone keeps the workflow branch: its own, and the
// remote's as last fetched.
func (e *Workspace) LogRefs() []string {
	b := e.cfg.Workflow.Branch
	return []string{"refs/heads/" + b, "refs/remotes/" + e.logRemote() + "/" + b}
}

// logRemote is the remote the lock log is fetched from: workflow.remote,
// or, in a clone that has no remote of that name but exactly one other
// (`git clone -o upstream`), that one. With several, workflow.remote
// stays: which of them holds the log is the policy's to say.
func (e *Workspace) logRemote() string {
	want := e.cfg.Workflow.Remote
	out, err := gitexec.RepoOutput(context.Background(), e.repo, "remote")
	if err != nil {
		return want
	}
	remotes := strings.Fields(string(out))
	if len(remotes) == 1 && !slices.Contains(remotes, want) {
		return remotes[0]
	}
	return want
}

// fetchLockLog fetches the workflow branch from workflow.remote into its
// remote-tracking ref.
func (e *Workspace) fetchLockLog(ctx context.Context) error {
	miss := &LogMissingError{Remote: e.logRemote(), Branch: e.cfg.Workflow.Branch}
	dir := e.repo.Toplevel
	if dir == "" {
		dir = e.repo.GitDir
	}
	if _, err := gitexec.Output(ctx, dir, nil, "fetch", "--quiet", "--no-tags", "--", miss.Remote, miss.fetchSpec()); err != nil {
		return fmt.Errorf("fetch the lock log (%s from %s): %w", miss.Branch, miss.Remote, err)
	}
	return nil
}

// readLockLog reads the lock log once: the workflow branch, local and
// fetched (and at the extra revisions: a push carrying it), and the
// journal when the clone has one, each event once.
func (e *Workspace) readLockLog(ctx context.Context, extra ...string) ([]journal.Event, error) {
	refs := e.LogRefs()
	evs, found, err := workflow.ReadEvents(ctx, workflow.Config{GitDir: e.repo.GitDir, CommonDir: e.repo.CommonDir, WorkTree: e.repo.Toplevel}, append(refs, extra...))
	if err != nil {
		return nil, fmt.Errorf("read the lock log: %w", err)
	}
	local, bad, err := e.JournalFile().ReadSkipping(time.Time{})
	if err != nil {
		return nil, fmt.Errorf("read the lock log: %w", err)
	}
	// The last line torn by a crash is skipped, as `log` and `workflow
	// sync` skip it: the event it began is recorded whole by the next
	// command (intent recovery). Any other damaged line may be a lost lock
	// event: the log cannot be judged by.
	var torn []int
	for _, ce := range bad {
		if !ce.Torn {
			return nil, fmt.Errorf("read the lock log: %w (fix or remove the line; lockgate never writes one)", ce)
		}
		torn = append(torn, ce.Line)
	}
	e.warnSkipped(e.JournalFile().Path(), torn)
	if len(local) > 0 {
		seen := make(map[string]bool, len(evs))
		for _, ev := range evs {
			seen[ev.ID] = true
		}
		for _, ev := range local {
			if !seen[ev.ID] {
				evs = append(evs, ev)
			}
		}
	}
	if len(found) == 0 && len(local) == 0 {
		return nil, &LogMissingError{Refs: refs, Remote: e.logRemote(), Branch: e.cfg.Workflow.Branch}
	}
	return evs, nil
}

// FenceFloor is the highest fence an event of the lock log names: the
// workflow branch as the remote has it now (fetched first, unless the
// repository has no remote at all), as this clone has it, and the journal.
// A lock store whose counters start over (a new git lock table, a Redis
// that lost its data) starts above it, so that no fence a lock of the
// lost state holds is handed out again. A clone with no lock log at all
// has floor 0.
func (e *Workspace) FenceFloor(ctx context.Context) (uint64, error) {
	if e.repo.Toplevel != "" {
		// A remote without the branch (first use) has no events to add;
		// one that cannot be read fails the change: the floor it would
		// give is unknown. A repository without any remote (one of its
		// own, on Redis) has only its own log.
		remote, b := e.logRemote(), e.cfg.Workflow.Branch
		out, err := gitexec.RepoOutput(ctx, e.repo, "remote")
		if err != nil {
			return 0, fmt.Errorf("read the lock log: list the clone's remotes: %w", err)
		}
		if len(strings.Fields(string(out))) > 0 {
			err := gitexec.FetchRef(ctx, e.repo, remote, "refs/heads/"+b, "refs/remotes/"+remote+"/"+b)
			if err != nil && !errors.Is(err, gitexec.ErrNoRemoteRef) {
				return 0, fmt.Errorf("fetch the lock log (%s from %s): %w", b, remote, err)
			}
		}
	}
	evs, err := e.readLockLog(ctx)
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
func (e *Workspace) EventCommits(ctx context.Context, commits []string) (reason string, err error) {
	cfg := workflow.Config{GitDir: e.repo.GitDir, CommonDir: e.repo.CommonDir, WorkTree: e.repo.Toplevel}
	err = workflow.CheckEventCommits(ctx, cfg, []string{"refs/heads/" + e.cfg.Workflow.Branch}, commits)
	var ne *workflow.NotEventsError
	if errors.As(err, &ne) {
		return ne.Error(), nil
	}
	if err != nil {
		return "", fmt.Errorf("check the commits pushed to the workflow branch: %w", err)
	}
	return "", nil
}

// VerifyRequest names the commits `verify` proves against the lock log:
// HEAD's commits on no remote-tracking ref unless Range or Staged names
// others.
type VerifyRequest struct {
	// Range is every commit of A..B (as git rev-list).
	Range string
	// Staged verifies the staged change as a commit made now.
	Staged bool
	// Fetch fetches the workflow branch from workflow.remote first.
	Fetch bool
	// AllowEmpty accepts commits (or a staged change) that change no
	// file; without it they are invalid input, so that a CI job fed
	// nothing cannot pass.
	AllowEmpty bool
}

// Validate refuses a request that names commits two ways.
func (req VerifyRequest) Validate() error {
	if req.Staged && req.Range != "" {
		return Usagef("verify: give --staged or --range, not both")
	}
	return nil
}

// Verify proves the commits req names against the lock log: made by their
// authors under no one else's lock. They are judged by the policy of
// their base (judgeByBase), a staged change by HEAD's (judgeByHead).
func (e *Workspace) Verify(ctx context.Context, req VerifyRequest) (*Report, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	revArgs := []string{"HEAD", "--not", "--remotes"}
	var err error
	switch {
	case req.Staged && e.repo.Toplevel == "":
		return nil, Usagef("verify --staged: a bare repository has no staged change")
	case req.Staged:
		revArgs = nil
		err = e.judgeByHead(ctx)
	case req.Range != "":
		if err := e.verifyRange(ctx, "verify", req.Range); err != nil {
			return nil, err
		}
		revArgs = []string{req.Range}
		err = e.judgeByBase(ctx, req.Range)
	default:
		err = e.judgeByBase(ctx, "")
	}
	if err != nil {
		return nil, err
	}
	h, err := e.logRunner(ctx, "")
	if err != nil {
		return nil, err
	}
	if req.Fetch {
		if err := e.fetchLockLog(ctx); err != nil {
			return nil, err
		}
	}
	r, err := e.verifyCommits(ctx, h, revArgs)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Paths > 0 || req.AllowEmpty:
	case req.Staged:
		return nil, Usagef("verify: nothing is staged; pass --allow-empty to accept that")
	case r.OK:
		what := "HEAD has no commit that changes a file and is on no remote-tracking ref; name the commits with --range A..B"
		if req.Range != "" {
			what = "--range " + req.Range + " changes no file (no commits, or none that changes a file)"
		}
		return nil, Usagef("verify: %s; pass --allow-empty to accept that", what)
	}
	return r, nil
}

// verifyCommits judges the commits revArgs name against the lock log,
// read while git lists them; with revArgs nil, the staged change as a
// commit made now.
func (e *Workspace) verifyCommits(ctx context.Context, h *hooks.Runner, revArgs []string) (*Report, error) {
	r := &hooks.Report{Hook: "verify"}
	readLog := func() ([]journal.Event, error) { return e.readLockLog(ctx) }
	var err error
	if revArgs == nil {
		var evs []journal.Event
		if evs, err = readLog(); err == nil {
			err = h.VerifyStaged(ctx, e.Now(), history.Build(evs), r)
		}
	} else {
		err = h.Verify(ctx, revArgs, "", readLog, r)
	}
	if err != nil {
		return nil, err
	}
	r.Finish()
	return r, nil
}
