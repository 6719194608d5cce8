package hooks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lockgate/lockgate/diffpath"
	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/hint"
	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// Runner reads what a hook is asked about from git and checks it.
type Runner struct {
	// GitDir is the worktree's git directory: HEAD names the branch a
	// commit lands on.
	GitDir string
	// CommonDir is the git directory every worktree shares (refs live
	// there).
	CommonDir string
	Dir       string // where git runs: the worktree root, or the git dir when bare
	Checker   *Checker
	// LockStates reads the git store's lock table states a push to its
	// ref carries (pre-push, pre-receive); without it such a push is an
	// error, never a pass.
	LockStates LockStates
	// Staged, when set, yields the staged change that PreCommit would
	// otherwise ask git for (see gitexec.StartStaged).
	Staged func() ([]byte, error)
	// MaxCommits and MaxPaths bound a push or range check; exceeding them
	// refuses (rule "limit"), never passes silently.
	MaxCommits int
	MaxPaths   int
	// Trailers: commit-msg writes the attestation trailers
	// (hooks.trailers), and pre-commit records, for IndexFile, the locks
	// they name.
	Trailers bool
	// IndexFile is the index a commit is made from: GIT_INDEX_FILE, else
	// the worktree's index.
	IndexFile string
	// MergeParents are the other parents of the merge being committed
	// (besides HEAD), none for an ordinary commit. PreCommit then judges
	// only the paths where the index differs from every parent, as a
	// range check and verify judge a merge commit (git's combined diff):
	// what the merge brings in from a parent was judged as that commit's
	// author's, and what the merge itself changes is judged as the
	// committer's.
	MergeParents []string
	// CommentString begins the comment lines of a commit message
	// (core.commentChar); "" is git's default "#".
	CommentString string
	// VerifyLog, when set (hooks.pre_receive.verify), makes PreReceive
	// verify the pushed commits against the lock log it returns; pushed
	// maps each ref pushed to its new value, since a push may carry the
	// workflow branch too. WorkflowRef is that branch's ref: its commits
	// are events, not work, and are not verified.
	VerifyLog   func(ctx context.Context, pushed map[string]string) ([]journal.Event, error)
	WorkflowRef string
	// EventCommits, with VerifyLog, checks that the commits a push adds to
	// WorkflowRef are event commits; reason says why one is not ("" when
	// all are).
	EventCommits func(ctx context.Context, commits []string) (reason string, err error)
	// LogRefs are the other refs the lock log is read from (the
	// remote-tracking ref of the workflow branch), guarded as
	// WorkflowRef is.
	LogRefs []string
	// LockRef is the git store's lock table ref (locks.git.ref). With
	// WorkflowRef it is one of lockgate's refs on a remote, which only
	// grow: pre-push refuses to delete or rewind either, and pre-receive
	// the lock table (the workflow branch under VerifyLog).
	LockRef string
	// ProtectLog (hooks.pre_receive.protect_log): pre-receive refuses
	// deleting or rewinding LockRef and WorkflowRef; without it such a
	// push goes through with a warning.
	ProtectLog bool
	// Bookkeeping are lockgate's own refs on a server — the workflow
	// branch, the git store's lock table: events and lock records, not
	// work, so pre-receive does not judge them as changes.
	Bookkeeping []string
	// AsCommitter judges every commit as Checker.Me, whatever its
	// trailers say: the reference-transaction hook runs where the commit
	// is made, and knows who makes it.
	AsCommitter bool
	// Pusher, when set, binds commits' trailers to who pushes them
	// (bindPusher); Signers finds, of commits, the worker whose good
	// signature each carries, by the allowed signers of the base (nil:
	// none is allowed).
	Pusher  *Pusher
	Signers func(ctx context.Context, shas []string) (map[string][]string, error)
	// RequireSigned (workflow.signed: required): every commit's trailers
	// must carry a good signature that vouches for the worker they name,
	// and so must lockgate's refs' new commits (pre-receive). Trust is
	// trust.pushers: whom a signer or pusher may speak for besides itself.
	RequireSigned bool
	Trust         map[string]config.WorkerList
	// EventsAdded reads, for commits of the workflow branch, the events
	// each adds (RequireSigned in pre-receive).
	EventsAdded func(ctx context.Context, commits []string) (map[string][]journal.Event, error)
}

// PreCommit checks the staged change.
func (h *Runner) PreCommit(ctx context.Context) (*Report, error) {
	r := &Report{Hook: "pre-commit"}
	// What does not depend on the staged paths is read while git lists
	// them; git's error still comes first.
	branch, branchErr := gitexec.HeadBranch(h.GitDir)
	if branchErr == nil {
		h.Checker.ReadPauses(ctx)
	}
	paths, err := h.stagedPaths(ctx, h.Staged)
	if err != nil {
		return nil, err
	}
	if branchErr != nil {
		return nil, branchErr
	}
	if err := h.Checker.Check(ctx, paths, branch, r); err != nil {
		return nil, err
	}
	r.Finish()
	if h.Trailers {
		h.recordStaged(r)
	}
	return r, nil
}

// Patch checks the paths of a patch's changes (see diffpath.ParsePatch).
func (h *Runner) Patch(ctx context.Context, changes []diffpath.Change) (*Report, error) {
	r := &Report{Hook: "check"}
	if err := h.Checker.Check(ctx, touched(changes), "", r); err != nil {
		return nil, err
	}
	r.Finish()
	return r, nil
}

// Range checks every commit `git rev-list revArgs` names, as pushed to
// branch ("" when unknown), adding to r. Each commit is judged as the
// worker its lockgate trailers name (CommitAuthor), else as the pusher
// (Checker.Me); a refusal names the commit.
func (h *Runner) Range(ctx context.Context, revArgs []string, branch string, r *Report) error {
	commits, err := h.collect(ctx, revArgs, r)
	if errors.Is(err, errLimit) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(commits) == 0 {
		return h.Checker.Check(ctx, nil, branch, r)
	}
	return h.judge(ctx, commits, branch, r)
}

// overLimit is the refusal of a range of commits commits touching paths
// paths past hooks.pre_push's limits (the commits first), nil within
// them.
func (h *Runner) overLimit(commits, paths int) *Violation {
	switch {
	case h.MaxCommits > 0 && commits > h.MaxCommits:
		return &Violation{Rule: RuleLimit, Reason: fmt.Sprintf("more than %d commits to check (hooks.pre_push.max_commits)", h.MaxCommits),
			Hint: hint.Line(hint.MaxCommits)}
	case h.MaxPaths > 0 && paths > h.MaxPaths:
		return &Violation{Rule: RuleLimit, Reason: fmt.Sprintf("more than %d paths to check (hooks.pre_push.max_paths)", h.MaxPaths),
			Hint: hint.Line(hint.MaxPaths)}
	}
	return nil
}

// collect lists the commits `git rev-list revArgs` names with the paths
// each touches, counting them in r. Past MaxCommits or MaxPaths it adds the
// refusal (rule "limit") and returns no commits.
func (h *Runner) collect(ctx context.Context, revArgs []string, r *Report) ([]rangeCommit, error) {
	var commits []rangeCommit
	npaths := 0
	var limit *Violation
	err := gitexec.TreeDiffs(ctx, h.Dir, revArgs, func(out io.Reader) error {
		tr := diffpath.NewTreeReader(out)
		for {
			header, changes, err := tr.Next()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("read commits: %w", err)
			}
			r.Commits++
			sha, _, _ := strings.Cut(header, " ")
			c := rangeCommit{sha: sha, paths: touched(changes)}
			npaths += len(c.paths)
			if limit = h.overLimit(r.Commits, npaths); limit != nil {
				return errStop
			}
			commits = append(commits, c)
		}
	})
	if limit != nil {
		r.Add(*limit)
		return nil, errLimit
	}
	return commits, err
}

// rangeCommit is one commit of a range: its paths, and who it is judged as.
type rangeCommit struct {
	sha, subject string
	paths        []string
	author       locks.Owner
	trailers     bool       // author is from the commit's trailers
	named        string     // the worker its trailers name, not believed (bindPusher)
	when         time.Time  // committer time, or a later parent's (verify)
	authored     time.Time  // author time (verify)
	backdated    time.Time  // its own committer time, when before a parent's
	held         []heldLock // the locks its trailers name (verify)
}

// judge checks commits grouped by the identity each is judged as, reading
// the locks once per group. A refusal of a path names every commit of the
// group that touches it, as verify does; one that names no path (a pause,
// a protected branch) names the group's first commit.
func (h *Runner) judge(ctx context.Context, commits []rangeCommit, branch string, r *Report) error {
	shas := make([]string, len(commits))
	for i, c := range commits {
		shas[i] = c.sha
	}
	i := 0
	err := gitexec.CommitMessages(ctx, h.Dir, shas, MaxCommitMsgBytes, func(ci gitexec.CommitInfo) {
		msg := ci.Message
		c := &commits[i]
		i++
		c.subject = subject(msg)
		c.author, c.trailers = CommitAuthor(msg, h.CommentString)
		if h.AsCommitter {
			c.trailers = false
		}
		if !c.trailers {
			c.author = h.Checker.Me
			r.AsPusher++
		}
	})
	if err != nil {
		return err
	}
	if err := h.bindPusher(ctx, commits, r); err != nil {
		return err
	}
	type group struct {
		author   locks.Owner
		trailers bool
	}
	var order []group
	byGroup := map[group][]*rangeCommit{}
	for i := range commits {
		c := &commits[i]
		g := group{c.author, c.trailers}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], c)
	}
	warned := len(r.Warnings)
	for _, g := range order {
		cs := byGroup[g]
		touching := map[string][]*rangeCommit{}
		var paths []string
		for _, c := range cs {
			for _, p := range c.paths {
				if touching[p] == nil {
					paths = append(paths, p)
				}
				touching[p] = append(touching[p], c)
			}
		}
		sort.Strings(paths)
		checker := *h.Checker
		checker.Me = g.author
		from := len(r.Violations)
		if err := checker.Check(ctx, paths, branch, r); err != nil {
			return err
		}
		found := slices.Clone(r.Violations[from:])
		r.Violations = r.Violations[:from]
		for _, v := range found {
			by := touching[v.Path]
			if by == nil {
				by = cs[:1]
			}
			for _, c := range by {
				v.Commit, v.Subject, v.AsPusher, v.Named = shortSHA(c.sha), c.subject, !g.trailers, c.named
				r.Add(v)
			}
		}
		if len(r.Warnings) > warned+1 {
			r.Warnings = r.Warnings[:warned+1] // the store, once
		}
	}
	return nil
}

// maxSubject bounds the subject a refusal repeats.
const maxSubject = 200

// subject is a commit message's first line, bounded.
func subject(msg string) string {
	s, _, _ := strings.Cut(strings.TrimLeft(msg, "\n"), "\n")
	s = strings.TrimSpace(s)
	if len(s) > maxSubject {
		s = strings.ToValidUTF8(s[:maxSubject], "") + "…"
	}
	return s
}

// shortSHA abbreviates a commit name as refusals show it.
func shortSHA(sha string) string { return sha[:min(len(sha), 12)] }

var (
	errStop  = errors.New("stop")
	errLimit = errors.New("over the limit") // the refusal is in the report
)

// zeroSHA reports git's all-zero object name (a ref that does not exist).
// Only call it on a checked objectName: "0" or "" are not object names.
func zeroSHA(s string) bool { return strings.Trim(s, "0") == "" }

// objectName reports a full object name as git writes it on a hook's
// stdin: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits. Anything else is
// refused rather than read as "zero" (a deletion, nothing to check) or
// passed to rev-list, where it could be an option.
func objectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// PrePush checks what a push sends to remote. Git writes one line per ref
// on stdin: `<local ref> <local sha> <remote ref> <remote sha>`. The
// pre-commit framework passes no stdin and sets PRE_COMMIT_FROM_REF and
// PRE_COMMIT_TO_REF (and PRE_COMMIT_REMOTE_BRANCH) instead. Commits on a
// remote-tracking ref of any remote are upstream already: not checked,
// whichever remote the push goes to.
func (h *Runner) PrePush(ctx context.Context, remote string, stdin io.Reader, getenv func(string) string) (*Report, error) {
	r := &Report{Hook: "pre-push"}
	if to := getenv("PRE_COMMIT_TO_REF"); to != "" {
		from := getenv("PRE_COMMIT_FROM_REF")
		if strings.HasPrefix(to, "-") || strings.HasPrefix(from, "-") {
			return nil, fmt.Errorf("pre-push: PRE_COMMIT_FROM_REF %q or PRE_COMMIT_TO_REF %q is an option, want revisions", from, to)
		}
		args := []string{to, "--not", "--remotes"}
		if from != "" && !zeroSHA(from) {
			args = append(args, from)
		}
		if err := h.Range(ctx, args, branchOf(getenv("PRE_COMMIT_REMOTE_BRANCH")), r); err != nil {
			return nil, err
		}
		r.Finish()
		return r, nil
	}
	seen := map[string]bool{}
	err := readRefLines(stdin, "pre-push", "<local ref> <local sha> <remote ref> <remote sha>", 1, 3, func(f []string) error {
		localSHA, remoteRef, remoteSHA := f[1], f[2], f[3]
		seen[remoteRef] = true
		if rule := h.growOnly(remoteRef); rule != "" {
			ok, err := h.guardGrowth(ctx, rule, remote, remoteRef, localSHA, remoteSHA, r)
			if err != nil {
				return err
			}
			if !ok || rule == RuleLockRef {
				return nil // lock records, not work
			}
		}
		if zeroSHA(localSHA) {
			return nil // deleting a remote ref sends no commits
		}
		// A commit on any remote-tracking ref, of any remote, is already
		// upstream: someone pushed it, and checked it, before. Pushing
		// existing history to a new remote checks none of it.
		args := []string{localSHA, "--not", "--remotes"}
		if !zeroSHA(remoteSHA) && gitexec.ObjectExists(ctx, h.Dir, remoteSHA) {
			args = append(args, remoteSHA)
			if h.Checker.PerBranch {
				args = onBranch(localSHA, remoteSHA)
			}
		}
		return h.Range(ctx, args, branchOf(remoteRef), r)
	})
	if err != nil {
		return nil, err
	}
	if err := h.guardPruned(ctx, remote, seen, r); err != nil {
		return nil, err
	}
	r.Finish()
	return r, nil
}

// PreReceive checks, on the server, each pushed ref: stdin lines
// `<old-value> <new-value> <ref-name>`. Only the commits the server has on
// no ref yet are checked (`NEW --not --all`: git updates the refs after
// this hook), so that a commit judged when it was first pushed is not
// judged again when another branch takes it in; under locks.per_branch
// an update judges every commit new to its branch (onBranch). With VerifyLog set it
// also verifies those commits against the lock log, and guards the
// workflow branch (guardWorkflow).
func (h *Runner) PreReceive(ctx context.Context, stdin io.Reader) (*Report, error) {
	r := &Report{Hook: "pre-receive"}
	type update struct {
		args   []string
		branch string
	}
	var updates []update
	pushed := map[string]string{}
	err := readRefLines(stdin, "pre-receive", "<old-value> <new-value> <ref-name>", 0, 1, func(f []string) error {
		oldSHA, newSHA, ref := f[0], f[1], f[2]
		if h.LockRef != "" && ref == h.LockRef {
			// lockgate's lease pushes move the lock table forward or
			// create it.
			if h.RequireSigned && !zeroSHA(newSHA) {
				if err := h.guardSignedState(ctx, ref, newSHA, r); err != nil {
					return err
				}
			}
			return h.protectLog(ctx, RuleLockRef, ref, oldSHA, newSHA, r) // lock records, not work
		}
		if h.RequireSigned && ref == h.WorkflowRef && !zeroSHA(newSHA) {
			if err := h.guardSignedEvents(ctx, ref, newSHA, r); err != nil {
				return err
			}
		}
		if h.VerifyLog == nil && ref == h.WorkflowRef {
			if err := h.protectLog(ctx, RuleWorkflowBranch, ref, oldSHA, newSHA, r); err != nil {
				return err
			}
		}
		if h.VerifyLog != nil && h.logRef(ref) {
			ok, err := h.guardWorkflow(ctx, ref, oldSHA, newSHA, r)
			if err != nil || !ok {
				return err // when refused, its events are not read: verify by the server's
			}
		}
		if zeroSHA(newSHA) {
			return nil
		}
		pushed[ref] = newSHA
		if slices.Contains(h.Bookkeeping, ref) {
			return nil
		}
		args := []string{newSHA, "--not", "--all"}
		if h.Checker.PerBranch && !zeroSHA(oldSHA) {
			args = onBranch(newSHA, oldSHA)
		}
		if err := h.Range(ctx, args, branchOf(ref), r); err != nil {
			return err
		}
		if !h.logRef(ref) {
			updates = append(updates, update{args, branchOf(ref)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if h.VerifyLog != nil && len(updates) > 0 {
		evs, err := h.VerifyLog(ctx, pushed)
		if err != nil {
			return nil, err
		}
		for _, u := range updates {
			if err := h.Verify(ctx, u.args, u.branch, func() ([]journal.Event, error) { return evs, nil }, r); err != nil {
				return nil, err
			}
		}
	}
	r.Finish()
	return r, nil
}

// protectLog guards, in pre-receive, a push to one of lockgate's refs
// (rule says which) as guardGrowth does: refused when it deletes or
// rewinds the ref, or, with ProtectLog off, let through with a warning
// that says what it did.
func (h *Runner) protectLog(ctx context.Context, rule, ref, oldSHA, newSHA string, r *Report) error {
	if h.ProtectLog {
		_, err := h.guardGrowth(ctx, rule, "", ref, newSHA, oldSHA, r)
		return err
	}
	var scratch Report
	ok, err := h.guardGrowth(ctx, rule, "", ref, newSHA, oldSHA, &scratch)
	if err != nil || ok {
		return err
	}
	for _, v := range scratch.Violations {
		r.Warnings = append(r.Warnings, v.Reason+": let through, since hooks.pre_receive.protect_log is false")
	}
	return nil
}

// readRefLines reads the ref updates git writes on a hook's stdin, one a
// line of the fields layout names, and calls each with the fields of every
// line that is not blank. The fields at a and b must be full object names.
func readRefLines(stdin io.Reader, hook, layout string, a, b int, each func(f []string) error) error {
	n := strings.Count(layout, "<")
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != n {
			return fmt.Errorf("%s: malformed line on stdin %q: want `%s`", hook, lockkey.Shorten(line), layout)
		}
		if !objectName(f[a]) || !objectName(f[b]) {
			return fmt.Errorf("%s: malformed line on stdin %q: want full object names (40 or 64 hex digits)", hook, lockkey.Shorten(line))
		}
		if err := each(f); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: read stdin: %w", hook, err)
	}
	return nil
}

// onBranch is what an update of a branch from old to new brings onto
// it, under locks.per_branch: every commit new to the branch, including
// those already on another branch, since a branch lock holds against a
// change landing on its branch whichever branch it was made on.
func onBranch(newSHA, oldSHA string) []string {
	return []string{newSHA, "--not", oldSHA}
}

// branchOf is the branch a ref names, "" for tags and other refs.
func branchOf(ref string) string {
	if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		return b
	}
	if strings.HasPrefix(ref, "refs/") {
		return ""
	}
	return ref
}

func touched(changes []diffpath.Change) []string {
	seen := make(map[string]bool, len(changes))
	var out []string
	for _, c := range changes {
		for _, p := range c.Touched() {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// taskInSubject finds a task id such as TASK-001 or WP-12 in a subject.
// Compiled on first use: only commit-msg needs it.
var taskInSubject = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:-[A-Za-z0-9]+)*-[0-9]+\b`)
})

// CommitMsg checks a proposed commit message in file: refused while a
// feature is paused by someone else; with requireTask, the message must
// name a task (a `Task: ID` trailer, or the id in the subject) whose task
// lock — task:ID, or an activity lock carrying task ID — the committer holds.
func (c *Checker) CommitMsg(ctx context.Context, file string, requireTask bool) (*Report, error) {
	r := &Report{Hook: "commit-msg"}
	if err := c.storeOK(r); err != nil {
		return nil, err
	}
	if c.Store != nil {
		if err := c.checkPauses(ctx, r); err != nil {
			if err := c.unavailable(r, err); err != nil {
				return nil, err
			}
		}
	}
	if requireTask {
		msg, err := readCommitMsg(file)
		if err != nil {
			return nil, fmt.Errorf("commit-msg: %w", err)
		}
		ids := TaskIDs(string(msg))
		switch {
		case len(msg) > MaxCommitMsgBytes:
			r.Add(Violation{Rule: RuleTask, Reason: fmt.Sprintf("the commit message is larger than %d KiB: lockgate does not look for a task in it", MaxCommitMsgBytes>>10),
				Hint: hint.Line(hint.TaskMessageTooLarge)})
		case len(ids) == 0:
			r.Add(Violation{Rule: RuleTask, Reason: "the commit message names no task (hooks.commit_msg.require_task)",
				Hint: hint.Line(hint.TaskTrailer)})
		default:
			ok, other, err := c.holdsTask(ctx, ids)
			switch {
			case err != nil:
				if err := c.unavailable(r, err); err != nil {
					return nil, err
				}
			case !ok:
				r.Add(Violation{Rule: RuleTask, Key: lockkey.TaskKey(ids[0]),
					Reason: fmt.Sprintf("you hold no task lock for %s", listShort(ids)),
					Hint:   c.takeKey(hint.TaskClaim, lockkey.TaskKey(ids[0]), other)})
			}
		}
	}
	r.Finish()
	return r, nil
}

// listShort joins the first few of ids, and says how many more there are.
func listShort(ids []string) string {
	const shown = 5
	if len(ids) <= shown {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:shown], ", "), len(ids)-shown)
}

// MaxCommitMsgBytes bounds the commit message the commit-msg hook reads.
const MaxCommitMsgBytes = 1 << 20

// readCommitMsg reads at most MaxCommitMsgBytes+1 bytes of file: enough to
// tell a message that is too large.
func readCommitMsg(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxCommitMsgBytes+1))
}

// TaskIDs returns the task ids a commit message names: `Task:` trailers
// first, else ids in the subject line. Comment lines are ignored.
func TaskIDs(msg string) []string {
	var trailers, subject []string
	first := true
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "#") {
			continue
		}
		if first && strings.TrimSpace(line) != "" {
			subject = taskInSubject().FindAllString(line, -1)
			first = false
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "task") {
			trailers = append(trailers, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })...)
		}
	}
	if len(trailers) > 0 {
		return trailers
	}
	return subject
}

// holdsTask reports whether Me holds a task lock (or an activity lock
// carrying a task) for one of ids; if not, the live lock another holds on
// the first task's key, for the hint.
func (c *Checker) holdsTask(ctx context.Context, ids []string) (mine bool, other *locks.Lock, err error) {
	if c.Store == nil {
		return false, nil, nil
	}
	for n, id := range ids {
		l, err := c.Store.Get(ctx, lockkey.TaskKey(id))
		if err == nil && l.OwnedBy(c.Me) && !l.Expired(c.Now) {
			return true, nil, nil
		}
		if err == nil && n == 0 && !l.Expired(c.Now) {
			other = &l
		}
		if err != nil && !errors.Is(err, locks.ErrNotFound) {
			var ce *locks.CorruptError
			if !errors.As(err, &ce) {
				return false, nil, err
			}
		}
	}
	// An activity lock carrying one of the tasks.
	acts, err := c.Store.InNamespace(ctx, "activity")
	if err != nil {
		return false, nil, err
	}
	for _, a := range acts {
		if a.Err != nil || !a.OwnedBy(c.Me) || a.Expired(c.Now) || !a.TaskLive(c.Now) {
			continue
		}
		for _, id := range ids {
			if a.TaskID == id {
				return true, nil, nil
			}
		}
	}
	return false, other, nil
}
