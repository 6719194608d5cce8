package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// defaultWorkflowRef is workflow.branch's default: the reference-
// transaction shim skips its updates without starting lockgate.
const defaultWorkflowRef = "refs/heads/lockgate/workflow"

// RefUpdate is one line of the reference-transaction hook's stdin:
// `<old-value> SP <new-value> SP <ref-name> LF`.
type RefUpdate struct{ Old, New, Ref string }

// RefTransaction is what a reference-transaction hook in the "prepared"
// state is asked about, reduced to what lockgate judges: the branch
// updates that may add commits, and the commits the same transaction puts
// on remote-tracking refs and tags (what a fetch brings is upstream work,
// not the committer's).
type RefTransaction struct {
	Branches []RefUpdate
	Known    []string
}

// Empty reports a transaction that adds no commit to a branch: a fetch,
// a tag, a deletion, a branch created or reset on an existing commit is
// decided later, by rev-list; this only spares reading anything more.
func (tx *RefTransaction) Empty() bool { return len(tx.Branches) == 0 }

// ReadRefTransaction reads the hook's arguments (the state: prepared,
// committed or aborted) and stdin. Only the "prepared" state can still
// abort the update; the others read nothing and judge nothing. A line that
// is not `<old> <new> <ref>` with full object names is an error: the hook
// fails closed, and git aborts the transaction.
func ReadRefTransaction(args []string, stdin io.Reader) (*RefTransaction, error) {
	if len(args) != 1 {
		return nil, errors.New("want the transaction's state (prepared, committed or aborted) as the only argument")
	}
	tx := &RefTransaction{}
	switch args[0] {
	case "prepared":
	case "committed", "aborted":
		return tx, nil
	default:
		return nil, fmt.Errorf("unknown state %q: want prepared, committed or aborted", args[0])
	}
	err := readRefLines(stdin, "reference-transaction", "<old-value> <new-value> <ref-name>", 0, 1, func(f []string) error {
		oldSHA, newSHA, ref := f[0], f[1], f[2]
		switch {
		case zeroSHA(newSHA) || oldSHA == newSHA:
		case strings.HasPrefix(ref, "refs/heads/"):
			tx.Branches = append(tx.Branches, RefUpdate{oldSHA, newSHA, ref})
		case strings.HasPrefix(ref, "refs/remotes/") || strings.HasPrefix(ref, "refs/tags/"):
			tx.Known = append(tx.Known, newSHA)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// ReferenceTransaction judges the commits a transaction adds to branches
// as pre-commit would: the commits of NEW that no branch, tag or
// remote-tracking ref had before (nor this transaction's fetch brings),
// each as this worker, who is putting them on the branch — whatever their
// trailers say (a trailer is text anyone can write). A branch
// update that follows a commit whose pre-commit and commit-msg hooks
// passed (TakePass, which the caller asks first) is not judged again. The workflow branch
// (WorkflowRef) holds events, not work, and is not judged.
// openStore is called once, before the first commit is judged.
func (h *Runner) ReferenceTransaction(ctx context.Context, tx *RefTransaction, openStore func(context.Context) error) (*Report, error) {
	r := &Report{Hook: "reference-transaction"}
	h.AsCommitter = true
	var judge []RefUpdate
	for _, u := range tx.Branches {
		if u.Ref != h.WorkflowRef {
			judge = append(judge, u)
		}
	}
	for _, u := range judge {
		args := []string{u.New, "--not"}
		// A commit on the workflow branch is an event, not judged work:
		// moving a branch onto it is judged. The default name too, which
		// the hook's shim lets through unjudged.
		for _, ref := range []string{h.WorkflowRef, defaultWorkflowRef} {
			if ref != "" {
				args = append(args, "--exclude="+ref)
			}
		}
		args = append(args, "--branches", "--tags", "--remotes")
		args = append(args, tx.Known...)
		if !zeroSHA(u.Old) {
			args = append(args, u.Old)
		}
		// Unlike a push, an update that adds no commit (a branch made or
		// reset on existing work) changes nothing to judge.
		commits, err := h.collect(ctx, args, r)
		if errors.Is(err, errLimit) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(commits) > 0 && !zeroSHA(u.Old) {
			// A rebase replays the branch's own commits: one whose change
			// the old tip already had was judged when it got there.
			same, err := gitexec.Equivalent(ctx, h.Dir, u.Old, u.New)
			if err != nil {
				return nil, err
			}
			commits = slices.DeleteFunc(commits, func(c rangeCommit) bool { return same[c.sha] })
		}
		if len(commits) > 0 {
			if openStore != nil {
				if err := openStore(ctx); err != nil {
					return nil, err
				}
				openStore = nil
			}
			if err := h.judge(ctx, commits, branchOf(u.Ref), r); err != nil {
				return nil, err
			}
		}
	}
	r.Finish()
	return r, nil
}

// The pass record is what pre-commit and commit-msg leave, when they let
// a commit go ahead, for the reference-transaction hook that follows in
// the same `git commit`: the branch and the commit it pointed at. The hook
// takes it (once) when the transaction moves that branch from that
// commit within passMaxAge, and then judges nothing: the commit was
// judged as it was made. A commit made with --no-verify, or by a command
// that runs no commit hooks (cherry-pick, rebase, am, commit-tree and
// update-ref), finds no fresh record and is judged in full.
//
// It is one line of text, `VERSION REF OLD UNIX-SECONDS` (OLD is "-" for a
// branch not born yet), so that the hook's shell script can take it
// without starting lockgate (refTxShim); TakePass is the same test for a
// transaction the script hands on.
const (
	passVersion = "lockgate-commit-pass-2"
	// passMaxAge covers the time from commit-msg to the ref update (git
	// writes the commit object in between), and from pre-commit to it for
	// `git commit -m` where no commit-msg hook is installed.
	passMaxAge = 10 * time.Second
)

func passRecordFile(gitDir string) string { return filepath.Join(gitDir, "lockgate", "commit-pass") }

// RecordPass writes, or with ok false removes, the pass record for the
// branch HEAD names. Failing to write it costs the reference-transaction
// hook a full judgement of the commit, nothing else.
func (h *Runner) RecordPass(ok bool) {
	file := passRecordFile(h.GitDir)
	branch, err := gitexec.HeadBranch(h.GitDir)
	if !ok || err != nil || branch == "" || h.CommonDir == "" {
		_ = os.Remove(file)
		return
	}
	tip, found, err := gitexec.BranchTip(h.CommonDir, branch)
	if err != nil {
		_ = os.Remove(file)
		return
	}
	if !found {
		tip = "-"
	}
	line := fmt.Sprintf("%s refs/heads/%s %s %d\n", passVersion, branch, tip, time.Now().Unix())
	if err := writeAtomic(file, []byte(line)); err != nil {
		_ = os.Remove(file)
	}
}

// writeAtomic replaces file with data through a temporary file.
func writeAtomic(file string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".commit-pass-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// TakePass reports whether a fresh pass record in the worktree's git
// directory covers tx, a transaction that moves one branch, removing the
// record either way: it vouches for one ref update only.
func TakePass(gitDir string, now time.Time, tx *RefTransaction) bool {
	if len(tx.Branches) != 1 {
		return false
	}
	u := tx.Branches[0]
	file := passRecordFile(gitDir)
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	if err := os.Remove(file); err != nil {
		return false // another transaction took it
	}
	f := strings.Fields(string(data))
	if len(f) != 4 || f[0] != passVersion || f[1] != u.Ref || strings.Count(string(data), "\n") != 1 {
		return false
	}
	if old := f[2]; old != u.Old && !(old == "-" && zeroSHA(u.Old)) {
		return false
	}
	written, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return false
	}
	age := now.Sub(time.Unix(written, 0))
	return age >= -time.Second && age <= passMaxAge
}
