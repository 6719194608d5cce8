package gitexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

func TestParsePorcelain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		out      string
		want     []PushStatus
		rejected []bool
	}{
		{
			name: "new branch",
			out:  "To /tmp/remote.git\n*\trefs/heads/a:refs/heads/a\t[new branch]\nDone\n",
			want: []PushStatus{{Flag: '*', From: "refs/heads/a", To: "refs/heads/a", Summary: "[new branch]"}},
		},
		{
			name:     "fetch first",
			out:      "To /tmp/remote.git\n!\trefs/heads/a:refs/heads/a\t[rejected] (fetch first)\nDone\n",
			want:     []PushStatus{{Flag: '!', From: "refs/heads/a", To: "refs/heads/a", Summary: "[rejected] (fetch first)"}},
			rejected: []bool{true},
		},
		{
			name:     "remote hook",
			out:      "To x\n!\trefs/heads/a:refs/heads/a\t[remote rejected] (pre-receive hook declined)\nDone\n",
			want:     []PushStatus{{Flag: '!', From: "refs/heads/a", To: "refs/heads/a", Summary: "[remote rejected] (pre-receive hook declined)"}},
			rejected: []bool{false},
		},
		{
			name: "two refs",
			out:  "To x\n \trefs/heads/a:refs/heads/a\t1111111..2222222\n=\trefs/heads/b:refs/heads/b\t[up to date]\nDone\n",
			want: []PushStatus{
				{Flag: ' ', From: "refs/heads/a", To: "refs/heads/a", Summary: "1111111..2222222"},
				{Flag: '=', From: "refs/heads/b", To: "refs/heads/b", Summary: "[up to date]"},
			},
		},
		{name: "nothing", out: "", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := parsePorcelain([]byte(tt.out))
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("status %d = %+v, want %+v", i, got[i], tt.want[i])
				}
				if i < len(tt.rejected) && got[i].Rejected() != tt.rejected[i] {
					t.Fatalf("status %d Rejected = %v", i, got[i].Rejected())
				}
			}
		})
	}
}

func TestPushRefusesForce(t *testing.T) {
	t.Parallel()
	_, err := Push(context.Background(), &Repo{GitDir: t.TempDir()}, "origin", "+refs/heads/a:refs/heads/a")
	if err == nil || !strings.Contains(err.Error(), "forced") {
		t.Fatalf("Push with a + refspec = %v", err)
	}
}

// TestUpdateRefIgnoresInheritedGitDir: inside a hook git exports GIT_DIR
// and GIT_INDEX_FILE; UpdateRef still moves the ref of the repository it
// is given, by compare-and-swap.
func TestUpdateRefIgnoresInheritedGitDir(t *testing.T) {
	r := gittest.New(t)
	r.Write("a", "a\n")
	r.Commit("one")
	head := r.Git("rev-parse", "HEAD")
	other := gittest.New(t)
	t.Setenv("GIT_DIR", filepath.Join(other.Dir, ".git"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(other.Dir, ".git", "index"))
	repo := &Repo{Toplevel: r.Dir, GitDir: filepath.Join(r.Dir, ".git"), CommonDir: filepath.Join(r.Dir, ".git")}
	ctx := context.Background()

	if err := UpdateRef(ctx, repo, "refs/heads/x", head, "", "test"); err != nil {
		t.Fatal(err)
	}
	if got := r.Git("rev-parse", "refs/heads/x"); got != head {
		t.Fatalf("refs/heads/x = %s", got)
	}
	// A stale old value loses.
	err := UpdateRef(ctx, repo, "refs/heads/x", head, ZeroSHA, "test")
	var ge *Error
	if !errors.As(err, &ge) || !strings.Contains(ge.Stderr, "reference already exists") {
		t.Fatalf("create over an existing ref = %v", err)
	}
	// A cancelled context does not start a swap.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := UpdateRef(cctx, repo, "refs/heads/y", head, "", ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("UpdateRef with a cancelled context = %v", err)
	}
	if _, err := os.Stat(filepath.Join(other.Dir, ".git", "refs", "heads", "x")); err == nil {
		t.Fatal("the ref was written to the repository of GIT_DIR")
	}

	if ok, err := IsAncestor(ctx, repo, head, head); err != nil || !ok {
		t.Fatalf("IsAncestor(head, head) = %v, %v", ok, err)
	}
	if _, ok, err := RemoteURL(ctx, repo, "origin"); err != nil || ok {
		t.Fatalf("RemoteURL of a missing remote = %v, %v", ok, err)
	}
	r.Git("remote", "add", "origin", "../elsewhere.git")
	if url, ok, err := RemoteURL(ctx, repo, "origin"); err != nil || !ok || url != "../elsewhere.git" {
		t.Fatalf("RemoteURL = %q, %v, %v", url, ok, err)
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in           string
		major, minor int
		bad          bool
	}{
		{in: "git version 2.39.5\n", major: 2, minor: 39},
		{in: "git version 2.28.0 (Apple Git-143)", major: 2, minor: 28},
		{in: "git version 2.45.0.windows.1", major: 2, minor: 45},
		{in: "git version 2", bad: true},
		{in: "hub version 2.39", bad: true},
		{in: "", bad: true},
		{in: "git version x.y", bad: true},
	} {
		major, minor, err := parseVersion(tc.in)
		if (err != nil) != tc.bad || major != tc.major || minor != tc.minor {
			t.Errorf("parseVersion(%q) = %d, %d, %v", tc.in, major, minor, err)
		}
	}
}

// TestOwnRefWritesRunNoHooks: lockgate's own ref writes (UpdateRef,
// Fetch, FetchRef, Push, LeasePush) start no reference-transaction hook,
// while the same write made by git directly does (the hook is live).
func TestOwnRefWritesRunNoHooks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	origin := gittest.New(t)
	origin.Write("a", "a\n")
	origin.Commit("one")
	head := origin.Git("rev-parse", "HEAD")
	origin.Git("update-ref", "refs/lockgate/locks", head)
	r := gittest.New(t)
	r.Git("remote", "add", "origin", origin.Dir)
	logFile := filepath.Join(t.TempDir(), "hook.log")
	hook := "#!/bin/sh\necho \"$1\" >> '" + logFile + "'\ncat >> '" + logFile + "'\n"
	if err := os.WriteFile(filepath.Join(r.Dir, ".git", "hooks", "reference-transaction"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := &Repo{Toplevel: r.Dir, GitDir: filepath.Join(r.Dir, ".git"), CommonDir: filepath.Join(r.Dir, ".git")}

	if err := FetchRef(ctx, repo, "origin", "refs/lockgate/locks", "refs/lockgate/fetched/x"); err != nil {
		t.Fatal(err)
	}
	if err := Fetch(ctx, repo, "origin", "+refs/lockgate/locks:refs/lockgate/fetched/y"); err != nil {
		t.Fatal(err)
	}
	if err := UpdateRef(ctx, repo, "refs/lockgate/mine", head, "", "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, repo, "origin", "refs/lockgate/mine:refs/lockgate/pushed"); err != nil {
		t.Fatal(err)
	}
	if _, err := LeasePush(ctx, repo, "origin", head, "refs/lockgate/leased", ""); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(logFile); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lockgate's own ref writes ran the reference-transaction hook:\n%s", b)
	}
	r.Git("update-ref", "refs/lockgate/direct", head)
	b, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(b), "refs/lockgate/direct") {
		t.Fatalf("git update-ref did not run the hook (%v): %q", err, b)
	}
}
