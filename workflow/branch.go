package workflow

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/lockgate/lockgate/internal/gitexec"
)

// Defaults of Config.
const (
	DefaultBranch      = "lockgate/workflow"
	DefaultRemote      = "origin"
	DefaultMaxAttempts = 10
	DefaultName        = "lockgate"
	DefaultEmail       = "lockgate@localhost"
)

// Config says which repository, branch and remote a Writer works on.
type Config struct {
	// GitDir is the repository's git directory (`git rev-parse
	// --absolute-git-dir`). Required.
	GitDir string
	// CommonDir holds the objects and refs every worktree of a clone
	// shares, the branch among them (`git rev-parse --git-common-dir`);
	// GitDir when empty.
	CommonDir string
	// WorkTree is where git runs (the worktree's top); GitDir when empty.
	WorkTree string
	// Branch is the workflow branch, "lockgate/workflow" when empty; a
	// full "refs/heads/…" name is accepted too.
	Branch string
	// Remote is the remote Push pushes to, "origin" when empty. It must
	// be the name of a configured remote.
	Remote string
	// Lock, when not nil, is called around every write of the branch ref
	// (the caller passes its reserved `workflow` lock) and the returned
	// function is called when the write is done. Correctness does not
	// depend on it: the ref moves only by compare-and-swap. It spares
	// lockgate's own writers from losing swaps to each other.
	Lock func(ctx context.Context) (unlock func(), err error)
	// Name and Email sign the commits; "lockgate" and
	// "lockgate@localhost" when empty.
	Name, Email string
	// Sign, when set, signs every commit the Writer makes, as git's
	// commit -S does (workflow.signed: required).
	Sign func(ctx context.Context, payload []byte) (string, error)
	// Vouches, when set (workflow.signed: required), says whether the
	// writer's signature speaks for an event's worker. CatchUp and Sync
	// commit only the journal's events it vouches for: the journal of a
	// clone is shared by its worktrees, whose workers sign with keys of
	// their own, and a commit adding another worker's event under this
	// writer's signature is refused by the server (and would stay on the
	// branch, refused with every later push). The others are left in the
	// journal for their own worker's commands to commit.
	Vouches func(worker string) bool
	// MaxAttempts bounds the compare-and-swap attempts of one write; 10
	// when zero.
	MaxAttempts int
	// RotateJournal is the size in bytes past which CatchUp and Sync
	// rotate the journal they commit (journal.Rotate), once every event
	// of it is on the branch; 0 never.
	RotateJournal int64
}

// Errors a caller can test with errors.Is.
var (
	// ErrNoRemote: the configured remote does not exist.
	ErrNoRemote = errors.New("remote not configured")
	// ErrUnreachable: git could not talk to the remote (wrong URL, network,
	// authentication).
	ErrUnreachable = errors.New("remote unreachable")
	// ErrRejected: the remote still refused the branch after fetching and
	// merging, or refused it for a reason merging cannot fix (a hook).
	ErrRejected = errors.New("push rejected")
	// ErrContention: the branch kept moving under every attempt of a write.
	ErrContention = errors.New("workflow branch kept moving")
	// ErrUnsupported: a repository format go-git cannot write (SHA-256
	// object names, the reftable ref backend).
	ErrUnsupported = errors.New("unsupported repository format")
)

// Writer commits events to the workflow branch of one repository and
// pushes it. It is safe for concurrent use by goroutines; processes
// coordinate through the compare-and-swap of the ref.
type Writer struct {
	repo        *gitexec.Repo
	common      string
	branch      string // "lockgate/workflow"
	ref         plumbing.ReferenceName
	remote      string
	lock        func(context.Context) (func(), error)
	name, email string
	sign        func(ctx context.Context, payload []byte) (string, error)
	vouches     func(worker string) bool
	attempts    int
	rotateAt    int64

	mu  sync.Mutex // guards st: go-git's object storage is not goroutine safe
	st  *filesystem.Storage
	odb *odb // reads objects (see odb)

	// casLost counts compare-and-swaps lost to another writer (tests).
	casLost atomic.Int64
}

// Open checks cfg and opens the repository's object store. Nothing is
// written until the first Commit.
func Open(cfg Config) (*Writer, error) {
	if cfg.CommonDir == "" && cfg.GitDir == "" {
		return nil, errors.New("workflow branch: no repository")
	}
	repo := gitexec.Repo{Toplevel: cfg.WorkTree, GitDir: cfg.GitDir, CommonDir: cfg.CommonDir}
	if repo.CommonDir == "" {
		repo.CommonDir = repo.GitDir
	}
	if repo.GitDir == "" {
		repo.GitDir = repo.CommonDir
	}
	br := strings.TrimPrefix(cfg.Branch, "refs/heads/")
	if br == "" {
		br = DefaultBranch
	}
	ref := plumbing.NewBranchReferenceName(br)
	if err := ref.Validate(); err != nil || strings.HasPrefix(br, "-") {
		return nil, fmt.Errorf("workflow branch %q: not a valid branch name", cfg.Branch)
	}
	remote := cfg.Remote
	if remote == "" {
		remote = DefaultRemote
	}
	if strings.HasPrefix(remote, "-") || strings.ContainsAny(remote, " \t\n\x00:") {
		return nil, fmt.Errorf("workflow branch: remote %q: not a remote name", remote)
	}
	if fi, err := os.Stat(filepath.Join(repo.CommonDir, "objects")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("workflow branch: %s is not a git directory (no objects/)", repo.CommonDir)
	}
	w := &Writer{
		repo:     &repo,
		common:   repo.CommonDir,
		branch:   br,
		ref:      ref,
		remote:   remote,
		lock:     cfg.Lock,
		name:     cfg.Name,
		email:    cfg.Email,
		sign:     cfg.Sign,
		vouches:  cfg.Vouches,
		attempts: cfg.MaxAttempts,
		rotateAt: cfg.RotateJournal,
	}
	if w.name == "" {
		w.name = DefaultName
	}
	if w.email == "" {
		w.email = DefaultEmail
	}
	if w.attempts <= 0 {
		w.attempts = DefaultMaxAttempts
	}
	w.st = filesystem.NewStorage(osfs.New(w.common), cache.NewObjectLRUDefault())
	w.odb = newODB(w.st, filepath.Join(w.common, "objects"))
	if err := w.checkFormat(); err != nil {
		return nil, err
	}
	return w, nil
}

// checkFormat refuses repositories go-git v5 would write wrongly.
func (w *Writer) checkFormat() error {
	c, err := w.st.Config()
	if err != nil {
		return fmt.Errorf("workflow branch: read %s/config: %w", w.common, err)
	}
	ext := c.Raw.Section("extensions")
	if f := ext.Option("objectformat"); f != "" && !strings.EqualFold(f, "sha1") {
		return fmt.Errorf("workflow branch: %w: extensions.objectformat = %s", ErrUnsupported, f)
	}
	if f := ext.Option("refstorage"); f != "" && !strings.EqualFold(f, "files") {
		return fmt.Errorf("workflow branch: %w: extensions.refstorage = %s", ErrUnsupported, f)
	}
	return nil
}

// Branch returns the short name of the workflow branch.
func (w *Writer) Branch() string { return w.branch }

// Ref returns the full ref name of the workflow branch.
func (w *Writer) Ref() string { return w.ref.String() }

// Close releases the object store's resources.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return errors.Join(w.odb.Close(), w.st.Close())
}

// tip returns the commit the branch points at, or the zero hash when the
// branch does not exist yet.
func (w *Writer) tip() (plumbing.Hash, error) {
	return w.readRef(w.ref)
}

func (w *Writer) readRef(name plumbing.ReferenceName) (plumbing.Hash, error) {
	ref, err := w.st.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read %s: %w", name, err)
	}
	if ref.Type() != plumbing.HashReference {
		return plumbing.ZeroHash, fmt.Errorf("read %s: a symbolic ref (to %s), not a branch", name, ref.Target())
	}
	return ref.Hash(), nil
}

// writerLockWait bounds how long a write waits for the clone's other
// writers before it goes ahead with compare-and-swap alone.
const writerLockWait = time.Minute

// withLock runs fn under the caller's lock, if any, and then under an
// flock(2) that every writer of this clone takes (WriterLockPath): a
// writer that loses a compare-and-swap to another lockgate process retries
// after it, so writers of one clone queue instead of racing, however
// loaded the machine. Only a writer from outside lockgate (git itself) can
// still make a swap fail, and the loop in commitLocked handles that.
func (w *Writer) withLock(ctx context.Context, fn func() error) error {
	if w.lock != nil {
		unlock, err := w.lock(ctx)
		if err != nil {
			return fmt.Errorf("workflow lock: %w", err)
		}
		if unlock != nil {
			defer unlock()
		}
	}
	unlock, ok, err := lockWriters(ctx, w.WriterLockPath(), writerLockWait)
	if err != nil {
		return err
	}
	if ok {
		defer unlock()
	}
	return fn()
}

// WriterLockPath is the file whose flock serializes the writers of this
// clone's workflow branch.
func (w *Writer) WriterLockPath() string {
	return filepath.Join(w.common, "lockgate", "branch.flock")
}

// backoff sleeps before attempt+1 (attempt counts from 0): a random time
// up to took << attempt, where took is how long the lost attempt lasted
// (at least 1 ms), capped at 64 × took and 2 s. Writers who lost the same
// swap spread out over a window as long as the work they contend for, so
// that eight writers without a shared lock still get through in a few
// attempts each.
func backoff(ctx context.Context, attempt int, took time.Duration) error {
	bound := max(took, time.Millisecond) << min(attempt, 6)
	bound = min(bound, 2*time.Second)
	t := time.NewTimer(rand.N(bound) + 100*time.Microsecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// errRetry marks an attempt that lost its compare-and-swap.
var errRetry = errors.New("compare-and-swap lost")

// swap moves the branch from old to new with git update-ref. It returns
// errRetry when another writer got there first (the ref moved, or its lock
// file was held), any other failure as it is.
func (w *Writer) swap(ctx context.Context, name plumbing.ReferenceName, newH, old plumbing.Hash, msg string) error {
	oldS := gitexec.ZeroSHA
	if !old.IsZero() {
		oldS = old.String()
	}
	err := gitexec.UpdateRef(ctx, w.repo, name.String(), newH.String(), oldS, oneLine("lockgate: "+msg, maxSubject))
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var ge *gitexec.Error
	if errors.As(err, &ge) {
		s := ge.Stderr
		if strings.Contains(s, "but expected") || strings.Contains(s, "reference already exists") ||
			strings.Contains(s, ".lock': File exists") || strings.Contains(s, "unable to resolve reference") {
			w.casLost.Add(1)
			return fmt.Errorf("%w: %s", errRetry, gitReason(err))
		}
	}
	// Whatever git said, if the ref is no longer what we read, we lost.
	if cur, rerr := w.readRef(name); rerr == nil && cur != old {
		w.casLost.Add(1)
		return fmt.Errorf("%w: %s", errRetry, gitReason(err))
	}
	return fmt.Errorf("move %s to %s: %w", name, newH, err)
}
