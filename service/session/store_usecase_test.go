package session_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/config"
	"github.com/lockgate/lockgate/service/session"
)

func TestRecordStore(t *testing.T) {
	ctx := context.Background()
	r := repoWith(t, nil)
	// gitConfig is the clone's value of key, "" when unset.
	gitConfig := func(key string) string {
		out, _ := r.Run("config", "--local", "--get", key)
		return strings.TrimSpace(out)
	}
	tests := []struct {
		name                      string
		spec, prefix, remote, ref string
		// want is the four keys' values after, in the order of the
		// request's fields.
		want [4]string
	}{
		{name: "the file store", spec: "file", want: [4]string{"file", "", "", ""}},
		{name: "Redis and its prefix", spec: "redis://127.0.0.1:6379/0", prefix: "lg:repo:",
			want: [4]string{"redis://127.0.0.1:6379/0", "lg:repo:", "", ""}},
		{name: "git and where it keeps the locks", spec: "git", remote: "origin", ref: "refs/lockgate/locks",
			want: [4]string{"git", "", "origin", "refs/lockgate/locks"}},
		{name: "a remote without a ref records neither", spec: "git", remote: "origin",
			want: [4]string{"git", "", "", ""}},
		{name: "nothing unsets all", want: [4]string{"", "", "", ""}},
	}
	keys := [4]string{session.CloneStoreKey, session.ClonePrefixKey, session.CloneGitRemoteKey, session.CloneGitRefKey}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := loadAs(t, r.Dir, "alice", nil)
			if err := e.RecordStore(ctx, tt.spec, tt.prefix, tt.remote, tt.ref); err != nil {
				t.Fatal(err)
			}
			for i, k := range keys {
				if got := gitConfig(k); got != tt.want[i] {
					t.Fatalf("%s = %q, want %q", k, got, tt.want[i])
				}
			}
		})
	}
	t.Run("a config git cannot change", func(t *testing.T) {
		e := loadAs(t, r.Dir, "alice", nil)
		r.Write(".git/config.lock", "") // git cannot change the config while another does
		if err := e.RecordStore(ctx, "file", "", "", ""); err == nil || !strings.Contains(err.Error(), session.CloneStoreKey) {
			t.Fatalf("RecordStore with the config locked: %v, want an error naming %s", err, session.CloneStoreKey)
		}
	})
}

func TestPrefixOf(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// remote is origin's URL ("" none); prefix is locks.redis_prefix.
		remote, prefix string
		wantFrom       string
	}{
		{name: "the policy's", prefix: "team:", wantFrom: "locks.redis_prefix in .lockgate.yaml"},
		{name: "from the remote's URL", remote: "https://example.com/team/repo.git", wantFrom: "derived from remote origin"},
		{name: "from the git directory", wantFrom: "derived from the git directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Two clones: a prefix from the policy or the remote is the
			// same in both, one from the git directory is each clone's own.
			var got [2]string
			for i := range got {
				r := repoWith(t, nil)
				if tt.remote != "" {
					r.Git("remote", "add", "origin", tt.remote)
				}
				e := loadAs(t, r.Dir, "alice", nil)
				cfg := config.Default()
				cfg.Locks.RedisPrefix = tt.prefix
				prefix, from := e.PrefixOf(ctx, cfg)
				if prefix == "" || !strings.HasPrefix(from, tt.wantFrom) {
					t.Fatalf("PrefixOf = %q from %q, want one %s", prefix, from, tt.wantFrom)
				}
				got[i] = prefix
			}
			if same := got[0] == got[1]; same != (tt.remote != "" || tt.prefix != "") {
				t.Fatalf("the two clones' prefixes %q and %q: the same %v", got[0], got[1], same)
			}
			if tt.prefix != "" && got[0] != tt.prefix {
				t.Fatalf("prefix %q, want the policy's %q", got[0], tt.prefix)
			}
		})
	}
}

// The accessors front ends render a workspace through.
func TestWorkspaceAccessors(t *testing.T) {
	ctx := context.Background()
	r := repoWith(t, map[string]string{".lockgate.yaml": "version: 1\n", "src/a.go": "package a\n"})
	e, err := session.Load(ctx, session.Options{Dir: filepath.Join(r.Dir, "src"), As: "alice", Getenv: envOf(), Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if got := e.StoreLabel(); got != "the lock store" {
		t.Fatalf("StoreLabel before Open = %q, want the generic label", got)
	}
	// Before Open no store is chosen: the name is empty and the
	// background writers have nothing to do — neither panics.
	if got := e.StoreName(); got != "" {
		t.Fatalf("StoreName before Open = %q, want empty", got)
	}
	e.Background()()
	if err := e.Open(ctx, session.Purpose{TakesLocks: true}); err != nil {
		t.Fatal(err)
	}
	top, err := filepath.EvalSymlinks(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b string) bool {
		ra, errA := filepath.EvalSymlinks(a)
		rb, errB := filepath.EvalSymlinks(b)
		return errA == nil && errB == nil && ra == rb
	}
	fold, err := e.IgnoreCase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gitFold, _ := r.Run("config", "--bool", "core.ignorecase") // unset: false
	tests := []struct {
		name string
		ok   bool
	}{
		{"WorkTree is the top", same(e.WorkTree(), top)},
		{"Root is the top", same(e.Root(), top)},
		{"ConfigPath is the policy read", same(e.ConfigPath(), filepath.Join(top, ".lockgate.yaml"))},
		{"StateDir is in the git directory", same(e.StateDir(), filepath.Join(top, ".git", "lockgate"))},
		{"StoreName is the file store", e.StoreName() == "file"},
		{"StoreLabel names it", strings.Contains(e.StoreLabel(), "file")},
		{"Now is the clock's", e.Now().Equal(epoch)},
		{"UserDir is where the user works", e.UserDir() == "src/"},
		{"CmdFile is relative to the user's directory", same(e.CmdFile("a.go"), filepath.Join(top, "src", "a.go"))},
		{"CmdFile keeps stdin", e.CmdFile("-") == "-"},
		{"IgnoreCase is git's core.ignorecase", fold == (strings.TrimSpace(gitFold) == "true")},
		{"LockStore is the opened store", e.LockStore() != nil},
	}
	for _, tt := range tests {
		if !tt.ok {
			t.Errorf("%s: no", tt.name)
		}
	}
}
