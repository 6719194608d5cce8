package service_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/verify"
)

// logPolicy keeps events in the journal until a sync puts them on the
// workflow branch.
const logPolicy = "version: 1\nworkflow: {auto_commit: false, auto_push: false}\n"

// takeKeys has e take keys, one request each.
func takeKeys(t *testing.T, e *service.Workspace, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := e.Locks().Acquire(context.Background(), lockops.AcquireRequest{Keys: []string{k}}); err != nil {
			t.Fatal(err)
		}
	}
}

// syncBranch commits the journal's events to the workflow branch.
func syncBranch(t *testing.T, e *service.Workspace) {
	t.Helper()
	if _, err := e.SyncWorkflow(context.Background(), service.SyncRequest{NoPush: true}); err != nil {
		t.Fatal(err)
	}
}

func TestReadLockLog(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// setup writes the log; it returns the extra revisions to read.
		setup func(t *testing.T, r *gittest.Repo, e *service.Workspace) []string
		// wantAcquired are the keys the log's acquisitions name, in order.
		wantAcquired []string
		wantErr      any
	}{
		{name: "no lock log", setup: func(*testing.T, *gittest.Repo, *service.Workspace) []string { return nil },
			wantErr: new(*verify.LogMissingError)},
		{name: "the journal alone",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) []string {
				takeKeys(t, e, "api:GET /a")
				return nil
			},
			wantAcquired: []string{"api:GET /a"}},
		{name: "the branch and the journal, each event once",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) []string {
				takeKeys(t, e, "api:GET /a")
				syncBranch(t, e)
				takeKeys(t, e, "api:GET /b")
				return nil
			},
			wantAcquired: []string{"api:GET /a", "api:GET /b"}},
		{name: "the branch alone, at a revision pushed",
			setup: func(t *testing.T, r *gittest.Repo, e *service.Workspace) []string {
				takeKeys(t, e, "api:GET /a")
				syncBranch(t, e)
				tip := r.Git("rev-parse", "refs/heads/lockgate/workflow")
				r.Git("update-ref", "-d", "refs/heads/lockgate/workflow")
				if err := os.Remove(e.JournalFile().Path()); err != nil {
					t.Fatal(err)
				}
				return []string{strings.TrimSpace(tip)}
			},
			wantAcquired: []string{"api:GET /a"}},
		{name: "a torn last line is skipped",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) []string {
				takeKeys(t, e, "api:GET /a")
				appendTo(t, e.JournalFile().Path(), `{"id":"torn`)
				return nil
			},
			wantAcquired: []string{"api:GET /a"}},
		{name: "a damaged line before the last cannot be judged by",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) []string {
				takeKeys(t, e, "api:GET /a")
				appendTo(t, e.JournalFile().Path(), "not json\n")
				takeKeys(t, e, "api:GET /b")
				return nil
			},
			wantErr: new(*journal.CorruptLineError)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repoWith(t, map[string]string{".lockgate.yaml": logPolicy})
			e := openAs(t, r.Dir, "alice", nil)
			extra := tt.setup(t, r, e)
			evs, err := e.Verifier().ReadLockLog(ctx, extra...)
			wantError(t, err, tt.wantErr)
			if tt.wantErr != nil {
				return
			}
			var acquired []string
			for _, ev := range evs {
				if ev.Action == journal.ActionAcquire {
					acquired = append(acquired, ev.Key)
				}
			}
			if !slices.Equal(acquired, tt.wantAcquired) {
				t.Fatalf("acquisitions %v, want %v", acquired, tt.wantAcquired)
			}
		})
	}
}

// appendTo appends text to the file at path.
func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

func TestLogRefsAndFetchLockLog(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// remote names the clone's one remote ("" none); missing points
		// it at a repository that is not there.
		remote  string
		missing bool
		// pushed: the remote has the workflow branch.
		pushed   bool
		wantRefs []string
		wantErr  bool
	}{
		{name: "origin", remote: "origin", pushed: true,
			wantRefs: []string{"refs/heads/lockgate/workflow", "refs/remotes/origin/lockgate/workflow"}},
		{name: "the one remote of a clone, whatever its name", remote: "upstream", pushed: true,
			wantRefs: []string{"refs/heads/lockgate/workflow", "refs/remotes/upstream/lockgate/workflow"}},
		{name: "a remote without the branch", remote: "origin", wantErr: true,
			wantRefs: []string{"refs/heads/lockgate/workflow", "refs/remotes/origin/lockgate/workflow"}},
		{name: "no remote", wantErr: true,
			wantRefs: []string{"refs/heads/lockgate/workflow", "refs/remotes/origin/lockgate/workflow"}},
		{name: "a remote that is not there", remote: "origin", missing: true, wantErr: true,
			wantRefs: []string{"refs/heads/lockgate/workflow", "refs/remotes/origin/lockgate/workflow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repoWith(t, map[string]string{".lockgate.yaml": logPolicy})
			e := openAs(t, r.Dir, "alice", nil)
			takeKeys(t, e, "api:GET /a")
			syncBranch(t, e)
			if tt.remote != "" {
				remote := filepath.Join(t.TempDir(), "remote.git")
				if !tt.missing {
					r.Git("init", "-q", "--bare", remote)
				}
				r.Git("remote", "add", tt.remote, remote)
				if tt.pushed {
					r.Git("push", "-q", tt.remote, "lockgate/workflow")
					r.Git("update-ref", "-d", "refs/remotes/"+tt.remote+"/lockgate/workflow")
				}
			}
			if got := e.LogRefs(); !slices.Equal(got, tt.wantRefs) {
				t.Fatalf("LogRefs = %v, want %v", got, tt.wantRefs)
			}
			err := e.Verifier().FetchLockLog(ctx)
			if (err != nil) != tt.wantErr {
				t.Fatalf("FetchLockLog: %v, want an error: %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			local := strings.TrimSpace(r.Git("rev-parse", tt.wantRefs[0]))
			if fetched := strings.TrimSpace(r.Git("rev-parse", tt.wantRefs[1])); fetched != local {
				t.Fatalf("fetched %s, want the branch pushed, %s", fetched, local)
			}
		})
	}
}

func TestFenceFloor(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// setup writes the log; it returns the highest fence it holds.
		setup   func(t *testing.T, r *gittest.Repo, e *service.Workspace) uint64
		wantErr bool
	}{
		{name: "no lock log: 0", setup: func(*testing.T, *gittest.Repo, *service.Workspace) uint64 { return 0 }},
		{name: "the journal's highest fence",
			setup: func(t *testing.T, _ *gittest.Repo, e *service.Workspace) uint64 {
				takeKeys(t, e, "api:GET /a", "api:GET /b", "api:GET /c")
				return highestFence(t, e)
			}},
		{name: "a remote without the branch adds nothing",
			setup: func(t *testing.T, r *gittest.Repo, e *service.Workspace) uint64 {
				takeKeys(t, e, "api:GET /a")
				remote := filepath.Join(t.TempDir(), "remote.git")
				r.Git("init", "-q", "--bare", remote)
				r.Git("remote", "add", "origin", remote)
				return highestFence(t, e)
			}},
		{name: "the remote's branch counts, whatever this clone forgot",
			setup: func(t *testing.T, r *gittest.Repo, e *service.Workspace) uint64 {
				takeKeys(t, e, "api:GET /a", "api:GET /b")
				want := highestFence(t, e)
				syncBranch(t, e)
				remote := filepath.Join(t.TempDir(), "remote.git")
				r.Git("init", "-q", "--bare", remote)
				r.Git("remote", "add", "origin", remote)
				r.Git("push", "-q", "origin", "lockgate/workflow")
				r.Git("update-ref", "-d", "refs/heads/lockgate/workflow")
				if err := os.Remove(e.JournalFile().Path()); err != nil {
					t.Fatal(err)
				}
				return want
			}},
		{name: "a remote that cannot be read fails",
			setup: func(t *testing.T, r *gittest.Repo, e *service.Workspace) uint64 {
				takeKeys(t, e, "api:GET /a")
				r.Git("remote", "add", "origin", filepath.Join(t.TempDir(), "gone.git"))
				return 0
			},
			wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repoWith(t, map[string]string{".lockgate.yaml": logPolicy})
			e := openAs(t, r.Dir, "alice", nil)
			want := tt.setup(t, r, e)
			got, err := e.Verifier().FenceFloor(ctx)
			if (err != nil) != tt.wantErr {
				t.Fatalf("FenceFloor: %v, want an error: %v", err, tt.wantErr)
			}
			if got != want {
				t.Fatalf("FenceFloor = %d, want %d", got, want)
			}
		})
	}
}

// highestFence is the highest fence of e's locks, which the journal's
// acquisitions name.
func highestFence(t *testing.T, e *service.Workspace) uint64 {
	t.Helper()
	list, err := e.Locks().List(context.Background(), lockops.ListRequest{All: true})
	if err != nil {
		t.Fatal(err)
	}
	var top uint64
	for _, l := range list.Live() {
		top = max(top, l.Fence)
	}
	if top == 0 {
		t.Fatal("no fences")
	}
	return top
}

func TestEventCommits(t *testing.T) {
	ctx := context.Background()
	r := repoWith(t, map[string]string{".lockgate.yaml": logPolicy})
	e := openAs(t, r.Dir, "alice", nil)
	takeKeys(t, e, "api:GET /a")
	syncBranch(t, e)
	base := strings.TrimSpace(r.Git("rev-parse", "lockgate/workflow"))
	takeKeys(t, e, "api:GET /b")
	syncBranch(t, e)
	events := strings.TrimSpace(r.Git("rev-parse", "lockgate/workflow"))
	r.Git("update-ref", "refs/heads/lockgate/workflow", base) // the branch as it was before the push
	code := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
	tests := []struct {
		name       string
		commits    []string
		wantReason bool
		wantErr    bool
	}{
		{name: "nothing pushed"},
		{name: "a commit that adds events", commits: []string{events}},
		{name: "a commit of code pushed to the branch", commits: []string{code}, wantReason: true},
		{name: "not an object name", commits: []string{"HEAD"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, err := e.Verifier().EventCommits(ctx, tt.commits)
			if (err != nil) != tt.wantErr || (reason != "") != tt.wantReason {
				t.Fatalf("EventCommits = %q, %v; want a reason %v, an error %v", reason, err, tt.wantReason, tt.wantErr)
			}
		})
	}
}
