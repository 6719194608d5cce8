package workflow

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

func TestLocate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, id string
		plain    bool
	}{
		{name: "journal id", id: "187d0c2a1b2c3d4e5f60718293a4b5c6", plain: true},
		{name: "short", id: "x", plain: true},
		{name: "dots and dashes", id: "a.b-c_d", plain: true},
		{name: "slash", id: "a/b", plain: false},
		{name: "dotdot", id: "..", plain: false},
		{name: "leading dash", id: "-rf", plain: false},
		{name: "space", id: "a b", plain: false},
		{name: "unicode", id: "événement", plain: false},
		{name: "nul", id: "a\x00b", plain: false},
		{name: "long", id: strings.Repeat("a", 101), plain: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := locate(tt.id)
			if len(loc.l1) != 2 || len(loc.l2) != 2 {
				t.Fatalf("shards %q/%q", loc.l1, loc.l2)
			}
			if got := loc.name == tt.id+".json"; got != tt.plain {
				t.Fatalf("locate(%q).name = %q, plain = %v, want %v", tt.id, loc.name, got, tt.plain)
			}
			if strings.ContainsAny(loc.name, "/\x00") || strings.HasPrefix(loc.name, ".") {
				t.Fatalf("bad file name %q", loc.name)
			}
			if EventPath(tt.id) != loc.String() || !strings.HasPrefix(loc.String(), "events/") {
				t.Fatalf("EventPath = %q", EventPath(tt.id))
			}
		})
	}
	// Journal ids share their leading (time) digits: the shards must not.
	seen := make(map[string]bool)
	for range 64 {
		seen[locate(journal.NewID()).l1] = true
	}
	if len(seen) < 16 {
		t.Fatalf("64 fresh ids fell in %d first-level shards: not spread", len(seen))
	}
}

func TestSubject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   journal.Event
		want string
	}{
		{name: "key", ev: journal.Event{Action: "lock_acquire", Key: "api:GET /v1/users", Worker: "agent-7"}, want: "lock_acquire api:GET /v1/users by agent-7"},
		{name: "task", ev: journal.Event{Action: "completed_task", TaskID: "T-1", Worker: "w"}, want: "completed_task task T-1 by w"},
		{name: "activity", ev: journal.Event{Action: "blocked", ActivityID: "A-1", Worker: "w"}, want: "blocked activity A-1 by w"},
		{name: "control characters", ev: journal.Event{Action: "lock_clear", Key: "a\nb\tc", Worker: "x\ry"}, want: `lock_clear a\nb\tc by x\ry`},
		{name: "escape and format characters", ev: journal.Event{Action: "lock\x1b[2J", Key: "a\u202eb", Worker: "w\xff"}, want: `lock\x1b[2J a\u202eb by w\xff`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Subject(tt.ev); got != tt.want {
				t.Fatalf("Subject = %q, want %q", got, tt.want)
			}
		})
	}
	long := Subject(journal.Event{Action: "lock_acquire", Key: strings.Repeat("é", 300), Worker: "w"})
	if len(long) > maxSubject || !strings.HasSuffix(long, "…") {
		t.Fatalf("long subject: %d bytes %q", len(long), long)
	}
}

func TestCommitIdempotent(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	w := openWriter(t, repoOf(r))
	ctx := context.Background()
	before := userState(t, r)

	evs := events("agent-7", 3)
	n, err := w.Commit(ctx, evs)
	if err != nil || n != 3 {
		t.Fatalf("Commit = %d, %v; want 3", n, err)
	}
	tip := r.Git("rev-parse", "lockgate/workflow")
	n, err = w.Commit(ctx, evs)
	if err != nil || n != 0 {
		t.Fatalf("second Commit = %d, %v; want 0", n, err)
	}
	// A batch with the old events and a new one commits only the new one.
	more := append(evs[:2:2], event("agent-7", 9))
	n, err = w.Commit(ctx, append(more, more...))
	if err != nil || n != 1 {
		t.Fatalf("third Commit = %d, %v; want 1", n, err)
	}
	if got := r.Git("rev-parse", "lockgate/workflow^"); got != tip {
		t.Fatalf("parent of the third commit is %s, want %s", got, tip)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(append(evs, more[2])))
	if n, err := w.Commit(ctx, nil); err != nil || n != 0 {
		t.Fatalf("Commit(nil) = %d, %v", n, err)
	}

	// The story in git log, one line per commit.
	log := r.Git("log", "--format=%s", "lockgate/workflow")
	wantLog := "lock_acquire api:GET /v1/items/9 by agent-7\n3 events"
	if log != wantLog {
		t.Fatalf("git log:\n%s\nwant:\n%s", log, wantLog)
	}
	body := r.Git("log", "-1", "--format=%b", "lockgate/workflow")
	if body != "Event-Id: "+more[2].ID {
		t.Fatalf("body %q", body)
	}
	batch := r.Git("log", "-1", "--format=%B", "lockgate/workflow^")
	if !strings.Contains(batch, "\nlock_acquire api:GET /v1/items/1 by agent-7\n") {
		t.Fatalf("batch message:\n%s", batch)
	}
	// The first commit is a root commit: the branch is independent.
	if got := r.Git("rev-list", "--max-parents=0", "lockgate/workflow"); got != r.Git("rev-parse", "lockgate/workflow^") {
		t.Fatalf("root commit %s", got)
	}
	// Layout: the blob at the event's path is its journal line.
	got := r.Git("show", "lockgate/workflow:"+EventPath(evs[0].ID))
	ev, err := journal.ParseLine([]byte(got))
	if err != nil || ev.ID != evs[0].ID || ev.Key != evs[0].Key {
		t.Fatalf("blob at %s = %q (%v)", EventPath(evs[0].ID), got, err)
	}
	if after := userState(t, r); after != before {
		t.Fatalf("user state changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	fsck(t, r.Dir, r.Env)
}

func TestHasAndEvents(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	w := openWriter(t, repoOf(r))
	ctx := context.Background()
	if ok, err := w.Has(ctx, "nope"); err != nil || ok {
		t.Fatalf("Has on a missing branch = %v, %v", ok, err)
	}
	if evs, err := w.Events(ctx); err != nil || len(evs) != 0 {
		t.Fatalf("Events on a missing branch = %v, %v", evs, err)
	}
	if _, err := w.Has(ctx, ""); err == nil {
		t.Fatal("Has(\"\") succeeded")
	}
	// Out of order timestamps, odd ids, no id at all.
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	evs := []journal.Event{
		{ID: "c", Timestamp: base.Add(2 * time.Second), Worker: "w", Action: "lock_release"},
		{ID: "b/../x y", Timestamp: base, Worker: "w", Action: "lock_acquire"},
		{ID: "a", Timestamp: base, Worker: "w", Action: "lock_acquire", Details: "<&>"},
		{Timestamp: base.Add(time.Second), Worker: "w", Action: "pause"},
	}
	if n, err := w.Commit(ctx, evs); err != nil || n != 4 {
		t.Fatalf("Commit = %d, %v", n, err)
	}
	// The event without an id got one from its content: committing the
	// same line again finds it.
	if n, err := w.Commit(ctx, evs[3:]); err != nil || n != 0 {
		t.Fatalf("Commit of the id-less event again = %d, %v", n, err)
	}
	got, err := w.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, ev := range got {
		order = append(order, ev.Action+":"+ev.ID)
	}
	if len(got) != 4 || got[0].ID != "a" || got[1].ID != "b/../x y" || got[2].Action != "pause" || got[3].ID != "c" {
		t.Fatalf("Events order: %v", order)
	}
	if got[0].Details != "<&>" || !got[0].Timestamp.Equal(base) {
		t.Fatalf("event a read back as %+v", got[0])
	}
	for _, id := range []string{"a", "b/../x y", "c", got[2].ID} {
		if ok, err := w.Has(ctx, id); err != nil || !ok {
			t.Fatalf("Has(%q) = %v, %v", id, ok, err)
		}
	}
	if ok, err := w.Has(ctx, "d"); err != nil || ok {
		t.Fatalf("Has(d) = %v, %v", ok, err)
	}
	if out := r.Git("ls-tree", "-r", "--name-only", "lockgate/workflow"); !strings.Contains(out, "/~") {
		t.Fatalf("the id with a slash is not stored under a hash:\n%s", out)
	}
	fsck(t, r.Dir, r.Env)
}

func TestCommitBadEvents(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	w := openWriter(t, repoOf(r))
	for _, ev := range []journal.Event{
		{ID: "x", Worker: "w", Action: "lock_acquire"}, // no timestamp
		{ID: "y", Worker: "w", Timestamp: time.Now()},  // no action
	} {
		if n, err := w.Commit(context.Background(), []journal.Event{ev}); err == nil || n != 0 {
			t.Fatalf("Commit(%+v) = %d, %v; want an error", ev, n, err)
		}
	}
	if _, err := r.Run("rev-parse", "--verify", "-q", "lockgate/workflow"); err == nil {
		t.Fatal("a failed Commit created the branch")
	}
}

func TestSyncRepairsCrash(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	repo := repoOf(r)
	w := openWriter(t, repo)
	ctx := context.Background()
	j := journal.Open(filepath.Join(repo.CommonDir, "lockgate", "events.jsonl"))

	// A missing journal has nothing to sync.
	if res, err := w.Sync(ctx, j); err != nil || res.Journal != 0 || res.Committed != 0 {
		t.Fatalf("Sync of a missing journal = %+v, %v", res, err)
	}
	evs := events("agent-1", 5)
	if err := j.Append(evs...); err != nil {
		t.Fatal(err)
	}
	// Auto-commit got the first two in; then the process died.
	if n, err := w.Commit(ctx, evs[:2]); err != nil || n != 2 {
		t.Fatalf("Commit = %d, %v", n, err)
	}
	res, err := w.Sync(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	if res.Journal != 5 || res.Present != 2 || res.Committed != 3 || res.Commits != 1 {
		t.Fatalf("Sync = %+v", res)
	}
	res, err = w.Sync(ctx, j)
	if err != nil || res.Committed != 0 || res.Present != 5 || res.Commits != 0 {
		t.Fatalf("second Sync = %+v, %v", res, err)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(evs))

	// A corrupt line does not keep the events after it off the branch,
	// and a torn last line is left alone.
	f, err := os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("not json\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	late := event("agent-1", 99)
	if err := j.Append(late); err != nil {
		t.Fatal(err)
	}
	if f, err = os.OpenFile(j.Path(), os.O_APPEND|os.O_WRONLY, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"id":"torn","timestamp":"2026-01-0`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res, err = w.Sync(ctx, j)
	if err != nil || res.Committed != 1 || len(res.Corrupt) != 1 || res.Corrupt[0].Line != 6 {
		t.Fatalf("Sync with a corrupt line = %+v, %v", res, err)
	}
	if ok, _ := w.Has(ctx, late.ID); !ok {
		t.Fatal("the event after the corrupt line is not on the branch")
	}
	if ok, _ := w.Has(ctx, "torn"); ok {
		t.Fatal("the torn line was committed")
	}
}

func TestSyncBatches(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	repo := repoOf(r)
	w := openWriter(t, repo)
	j := journal.Open(filepath.Join(t.TempDir(), "events.jsonl"))
	evs := events("w", SyncBatch+20)
	if err := j.Append(evs...); err != nil {
		t.Fatal(err)
	}
	res, err := w.Sync(context.Background(), j)
	if err != nil || res.Committed != len(evs) || res.Commits != 2 {
		t.Fatalf("Sync = %+v, %v", res, err)
	}
	if got := r.Git("log", "--format=%s", "lockgate/workflow"); got != "20 events\n500 events" {
		t.Fatalf("git log: %q", got)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(evs))
	fsck(t, r.Dir, r.Env)
}

// TestRepositoryStates: the branch is written the same way whatever state
// the user's repository is in, and that state is left as it was.
func TestRepositoryStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T) (*gittest.Repo, *gitexec.Repo)
	}{
		{name: "unborn HEAD", setup: func(t *testing.T) (*gittest.Repo, *gitexec.Repo) {
			r := gittest.New(t)
			r.Write("staged.txt", "x\n")
			r.Git("add", "staged.txt")
			return r, repoOf(r)
		}},
		{name: "detached HEAD", setup: func(t *testing.T) (*gittest.Repo, *gitexec.Repo) {
			r := newRepo(t)
			r.Write("a.txt", "second\n")
			r.Commit("second")
			r.Git("checkout", "-q", "--detach", "HEAD~1")
			return r, repoOf(r)
		}},
		{name: "merge in progress", setup: func(t *testing.T) (*gittest.Repo, *gitexec.Repo) {
			r := newRepo(t)
			r.Git("checkout", "-q", "-b", "other")
			r.Write("a.txt", "other\n")
			r.Commit("other")
			r.Git("checkout", "-q", "main")
			r.Write("a.txt", "main\n")
			r.Commit("main")
			if _, err := r.Run("merge", "other"); err == nil {
				t.Fatal("merge did not conflict")
			}
			return r, repoOf(r)
		}},
		{name: "rebase in progress", setup: func(t *testing.T) (*gittest.Repo, *gitexec.Repo) {
			r := newRepo(t)
			r.Git("checkout", "-q", "-b", "topic")
			r.Write("a.txt", "topic\n")
			r.Commit("topic")
			r.Git("checkout", "-q", "main")
			r.Write("a.txt", "main\n")
			r.Commit("main")
			r.Git("checkout", "-q", "topic")
			if _, err := r.Run("rebase", "main"); err == nil {
				t.Fatal("rebase did not stop")
			}
			return r, repoOf(r)
		}},
		{name: "worktree", setup: func(t *testing.T) (*gittest.Repo, *gitexec.Repo) {
			r := newRepo(t)
			wt := filepath.Join(filepath.Dir(r.Dir), "wt")
			r.Git("worktree", "add", "-q", "-b", "wt", wt)
			repo, err := gitexec.Discover(context.Background(), wt)
			if err != nil {
				t.Fatal(err)
			}
			if repo.CommonDir == repo.GitDir {
				t.Fatalf("worktree has no separate git dir: %+v", repo)
			}
			return r, repo
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, repo := tt.setup(t)
			before := userState(t, r)
			status := r.Git("status", "--porcelain=v2")
			w := openWriter(t, repo)
			evs := events("w", 3)
			for i := range evs {
				if n, err := w.Commit(context.Background(), evs[i:i+1]); err != nil || n != 1 {
					t.Fatalf("Commit = %d, %v", n, err)
				}
			}
			equalIDs(t, "branch", branchIDs(t, w), idsOf(evs))
			if after := userState(t, r); after != before {
				t.Fatalf("user state changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if got := r.Git("status", "--porcelain=v2"); got != status {
				t.Fatalf("git status changed:\n%s\nwant:\n%s", got, status)
			}
			// Every worktree sees the one branch.
			if got := r.Git("rev-list", "--count", "lockgate/workflow"); got != "3" {
				t.Fatalf("%s commits on the branch seen from the main worktree", got)
			}
			fsck(t, r.Dir, r.Env)
		})
	}
}

func TestBareRepository(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "bare.git")
	env := gittest.Env(t.TempDir())
	gitIn(t, filepath.Dir(dir), env, "", "init", "-q", "--bare", dir)
	w := openWriter(t, bareOf(dir))
	evs := events("w", 4)
	if n, err := w.Commit(context.Background(), evs); err != nil || n != 4 {
		t.Fatalf("Commit = %d, %v", n, err)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(evs))
	if got := gitIn(t, dir, env, "", "log", "--format=%s", "lockgate/workflow"); got != "4 events" {
		t.Fatalf("git log: %q", got)
	}
	fsck(t, dir, env)
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "no repo", cfg: Config{}, want: "no repository"},
		{name: "not a git dir", cfg: Config{CommonDir: t.TempDir()}, want: "not a git directory"},
		{name: "bad branch", cfg: Config{GitDir: repoOf(r).GitDir, CommonDir: repoOf(r).CommonDir, WorkTree: repoOf(r).Toplevel, Branch: "a..b"}, want: "not a valid branch name"},
		{name: "bad branch lock", cfg: Config{GitDir: repoOf(r).GitDir, CommonDir: repoOf(r).CommonDir, WorkTree: repoOf(r).Toplevel, Branch: "x.lock"}, want: "not a valid branch name"},
		{name: "bad remote", cfg: Config{GitDir: repoOf(r).GitDir, CommonDir: repoOf(r).CommonDir, WorkTree: repoOf(r).Toplevel, Remote: "--upload-pack=evil"}, want: "not a remote name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Open(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Open = %v, want an error with %q", err, tt.want)
			}
		})
	}
	w, err := Open(Config{GitDir: repoOf(r).GitDir, CommonDir: repoOf(r).CommonDir, WorkTree: repoOf(r).Toplevel, Branch: "refs/heads/team/events"})
	if err != nil || w.Ref() != "refs/heads/team/events" || w.Branch() != "team/events" {
		t.Fatalf("Open with a full ref = %v, %v", w, err)
	}
	w.Close()
}

func TestUnsupportedFormat(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	if _, err := r.Run("init", "-q", "--object-format=sha256", "sha"); err != nil {
		t.Fatalf("git cannot make a SHA-256 repository (git 2.29 or newer can): %v", err)
	}
	dir := filepath.Join(r.Dir, "sha", ".git")
	_, err := Open(Config{WorkTree: filepath.Dir(dir), GitDir: dir, CommonDir: dir})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Open of a SHA-256 repository = %v, want ErrUnsupported", err)
	}
}

// TestRefConflict: a branch named like the workflow branch's parent makes
// git refuse the ref for good; Commit says so at once instead of retrying.
func TestRefConflict(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.Git("branch", "lockgate")
	w := openWriter(t, repoOf(r))
	_, err := w.Commit(context.Background(), events("w", 1))
	if err == nil || !strings.Contains(err.Error(), "refs/heads/lockgate") || errors.Is(err, ErrContention) {
		t.Fatalf("Commit = %v, want git's ref conflict", err)
	}
	if n := w.casLost.Load(); n != 0 {
		t.Fatalf("retried a permanent failure %d times", n)
	}
}

// TestStaleLockFile: a .lock left by a crashed git blocks the ref; Commit
// gives up after its attempts and says which file is in the way.
func TestStaleLockFile(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	w := openWriter(t, repoOf(r))
	if _, err := w.Commit(context.Background(), events("w", 1)); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.Dir, ".git", "refs", "heads", "lockgate", "workflow.lock")
	writeFile(t, lock, "", 0o644)
	_, err := w.Commit(context.Background(), events("w", 1))
	if !errors.Is(err, ErrContention) || !strings.Contains(err.Error(), "workflow.lock") {
		t.Fatalf("Commit = %v, want ErrContention naming the lock file", err)
	}
}

func TestLockIsCalled(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	held, calls := false, 0
	w, err := Open(Config{GitDir: repoOf(r).GitDir, CommonDir: repoOf(r).CommonDir, WorkTree: repoOf(r).Toplevel, Lock: func(ctx context.Context) (func(), error) {
		if held {
			t.Error("lock taken twice")
		}
		held = true
		calls++
		return func() { held = false }, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Commit(context.Background(), events("w", 1)); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || held {
		t.Fatalf("lock calls %d, held %v", calls, held)
	}
	w.lock = func(ctx context.Context) (func(), error) { return nil, errors.New("store down") }
	if _, err := w.Commit(context.Background(), events("w", 1)); err == nil || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("Commit with a failing lock = %v", err)
	}
}

// TestSyncRestoresDeletedEvent: what Sync finds missing is what the
// branch's history lacks, whatever its commit messages say: a commit
// that deletes an event's file leaves the event on the branch (the
// events are those of every commit), and an event whose commit was
// rewound away, though a later commit names its id, is committed again.
func TestSyncRestoresDeletedEvent(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	repo := repoOf(r)
	w := openWriter(t, repo)
	ctx := context.Background()
	j := journal.Open(filepath.Join(t.TempDir(), "events.jsonl"))
	evs := events("w", 3)
	if err := j.Append(evs[:2]...); err != nil {
		t.Fatal(err)
	}
	if res, err := w.Sync(ctx, j); err != nil || res.Committed != 2 {
		t.Fatalf("Sync = %+v, %v", res, err)
	}
	before := r.Git("rev-parse", mainRef)
	if err := j.Append(evs[2]); err != nil {
		t.Fatal(err)
	}
	if res, err := w.Sync(ctx, j); err != nil || res.Committed != 1 {
		t.Fatalf("Sync = %+v, %v", res, err)
	}
	gone := evs[2]
	commitOnTop(t, r, mainRef, Subject(gone)+"\n\nEvent-Id: "+gone.ID+"\n", "", []string{EventPath(gone.ID)}, nil)
	if got := branchIDs(t, w); len(got) != 3 {
		t.Fatalf("branch after a commit that deletes a file: %v, want the 3 events", got)
	}
	if res, err := w.Sync(ctx, j); err != nil || res.Committed != 0 || res.Present != 3 {
		t.Fatalf("Sync = %+v, %v; want nothing to commit", res, err)
	}
	// Rewound past the event's commit, with a commit naming it on top.
	r.Git("update-ref", mainRef, before)
	commitOnTop(t, r, mainRef, Subject(gone)+"\n\nEvent-Id: "+gone.ID+"\n", "", nil, nil)
	if got := branchIDs(t, w); len(got) != 2 {
		t.Fatalf("branch after the rewind: %v", got)
	}
	res, err := w.Sync(ctx, j)
	if err != nil || res.Committed != 1 || res.Present != 2 {
		t.Fatalf("Sync = %+v, %v; want the lost event committed again", res, err)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(evs))
}

// TestCatchUp: CatchUp commits the journal's events the branch lacks,
// reading only what came after its last call; a journal it cannot have
// read before is read whole.
func TestCatchUp(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	repo := repoOf(r)
	w := openWriter(t, repo)
	ctx := context.Background()
	j := journal.Open(filepath.Join(t.TempDir(), "events.jsonl"))
	if n, err := w.CatchUp(ctx, j); err != nil || n != 0 {
		t.Fatalf("CatchUp of a missing journal = %d, %v", n, err)
	}
	evs := events("w", 4)
	if err := j.Append(evs[:3]...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx, evs[2:3]); err != nil {
		t.Fatal(err)
	}
	if n, err := w.CatchUp(ctx, j); err != nil || n != 2 {
		t.Fatalf("CatchUp = %d, %v; want the 2 events not committed", n, err)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(evs[:3]))
	fi, err := os.Stat(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := readMark(w.syncedFile(j.Path())).off; got != fi.Size() {
		t.Fatalf("kept offset %d, want the journal's size %d", got, fi.Size())
	}
	if err := j.Append(evs[3]); err != nil {
		t.Fatal(err)
	}
	if n, err := w.CatchUp(ctx, j); err != nil || n != 1 {
		t.Fatalf("CatchUp after one more event = %d, %v", n, err)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(evs))

	// Another journal in its place, shorter: read from its start.
	other := events("v", 1)
	if err := os.Remove(j.Path()); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(other...); err != nil {
		t.Fatal(err)
	}
	if n, err := w.CatchUp(ctx, j); err != nil || n != 1 {
		t.Fatalf("CatchUp of a new journal = %d, %v", n, err)
	}
	equalIDs(t, "branch", branchIDs(t, w), idsOf(append(evs, other...)))
}

// TestJournalAfterSyncTrustsOnlyAHeldTip: the journal is read from
// CatchUp's mark only while the branch still holds the tip the mark was
// taken on; a branch rewound by hand past it lacks events the mark says
// are on it, and the whole journal is read instead.
func TestJournalAfterSyncTrustsOnlyAHeldTip(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	repo := repoOf(r)
	w := openWriter(t, repo)
	ctx := context.Background()
	cfg := Config{GitDir: repo.GitDir, CommonDir: repo.CommonDir, WorkTree: repo.Toplevel}
	j := journal.Open(filepath.Join(t.TempDir(), "events.jsonl"))
	evs := events("w", 3)
	if err := j.Append(evs[:1]...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.CatchUp(ctx, j); err != nil {
		t.Fatal(err)
	}
	first := strings.TrimSpace(r.Git("rev-parse", w.Ref()))
	if err := j.Append(evs[1:]...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.CatchUp(ctx, j); err != nil {
		t.Fatal(err)
	}
	after, _, _, ok, err := JournalAfterSync(ctx, cfg, w.Ref(), j)
	if err != nil || !ok || len(after) != 0 {
		t.Fatalf("after CatchUp: %d events, ok %v, %v; want none past the mark", len(after), ok, err)
	}
	r.Git("update-ref", w.Ref(), first)
	if _, _, _, ok, err := JournalAfterSync(ctx, cfg, w.Ref(), j); err != nil || ok {
		t.Fatalf("after the branch was rewound: ok %v, %v; want the mark not trusted", ok, err)
	}
}
