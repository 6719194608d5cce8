package gitexec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestLocalConfigAgreesWithGit: the in-process read gives what
// `git config --local --get` gives, for the shapes a config file takes.
func TestLocalConfigAgreesWithGit(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"unset":        "",
		"plain":        "[lockgate]\n\tstore = redis://h:6379/0\n",
		"case":         "[LockGate]\n\tStore = file\n",
		"last wins":    "[lockgate]\n\tstore = file\n[core]\n\tbare = false\n[lockgate]\n\tstore = redis\n",
		"quoted":       "[lockgate]\n\tstore = \"redis://h:6379/0\" ; comment\n",
		"escaped":      "[lockgate]\n\tstore = \"a\\\"b\\\\c\"\n",
		"comment":      "# [lockgate]\n; store = file\n[core]\n\tbare = false\n",
		"subsection":   "[lockgate \"x\"]\n\tstore = file\n",
		"other key":    "[lockgate]\n\tredis = x\n",
		"continuation": "[lockgate]\n\tstore = redis://h:\\\n6379/0\n",
		"spaces":       "[lockgate]\n  store   =   redis://h:6379/0   \n",
		"inner spaces": "[lockgate]\n\tstore = a  b\t# c\n",
		"empty":        "[lockgate]\n\tstore =\n",
		"no value":     "[lockgate]\n\tstore\n",
		"crlf":         "[lockgate]\r\n\tstore = file\r\n",
		"same line":    "[lockgate] store = file\n",
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			repo, err := Discover(context.Background(), r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			cfg := LocalConfigPath(repo)
			base, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, append(base, content...), 0o644); err != nil {
				t.Fatal(err)
			}
			want, gitErr := r.Run("config", "--local", "--get", "lockgate.store")
			got, ok, err := LocalConfig(context.Background(), repo, "lockgate.store")
			if err != nil {
				t.Fatal(err)
			}
			if ok != (gitErr == nil) || got != strings.TrimSuffix(want, "\n") {
				t.Fatalf("LocalConfig = %q, %v; git config --get = %q, %v", got, ok, want, gitErr)
			}
		})
	}
}

// TestLocalConfigInclude: a value in an included file is found, through git.
func TestLocalConfigInclude(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	repo, err := Discover(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(t.TempDir(), "inc")
	if err := os.WriteFile(inc, []byte("[lockgate]\n\tstore = redis\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Git("config", "--local", "include.path", inc)
	got, ok, err := LocalConfig(context.Background(), repo, "lockgate.store")
	if err != nil || !ok || got != "redis" {
		t.Fatalf("LocalConfig = %q, %v, %v; want redis", got, ok, err)
	}
}

// TestSetLocalConfig writes, replaces and removes a value; removing an
// unset one is no error; every worktree reads the clone's value.
func TestSetLocalConfig(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a", "a")
	r.Commit("init")
	wt := filepath.Join(t.TempDir(), "wt")
	r.Git("worktree", "add", "-q", wt)
	ctx := context.Background()
	repo, err := Discover(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Discover(ctx, wt)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"file", "redis://h:1/2"} {
		if err := SetLocalConfig(ctx, repo, "lockgate.store", v, false); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := LocalConfig(ctx, other, "lockgate.store"); err != nil || !ok || got != v {
			t.Fatalf("after set %s: %q %v %v", v, got, ok, err)
		}
	}
	for range 2 {
		if err := SetLocalConfig(ctx, repo, "lockgate.store", "", true); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok, err := LocalConfig(ctx, repo, "lockgate.store"); err != nil || ok {
		t.Fatalf("after unset: %q %v %v", got, ok, err)
	}
}

// BenchmarkLocalConfig: what reading lockgate.store costs a hook, unset
// (the file does not mention it) and set (the file is parsed).
func BenchmarkLocalConfig(b *testing.B) {
	r := gittest.New(b)
	repo, err := Discover(context.Background(), r.Dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("unset", func(b *testing.B) {
		for range b.N {
			if _, ok, err := LocalConfig(context.Background(), repo, "lockgate.store"); ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	r.Git("config", "--local", "lockgate.store", "redis://h:6379/0")
	b.Run("set", func(b *testing.B) {
		for range b.N {
			if _, ok, err := LocalConfig(context.Background(), repo, "lockgate.store"); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}

// Worktrees of one clone share its config file, and their first commands
// record the clone's store at once: git takes config.lock for each write
// and fails a writer that finds it taken. Every write must land all the
// same.
func TestSetLocalConfigConcurrent(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	repo, err := Discover(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	errs := make(chan error, n)
	for i := range n {
		go func() {
			key := "lockgate.k" + strings.Repeat("x", i)
			errs <- SetLocalConfig(context.Background(), repo, key, "v", false)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("concurrent SetLocalConfig: %v", err)
		}
	}
	for i := range n {
		key := "lockgate.k" + strings.Repeat("x", i)
		if v, ok, err := LocalConfig(context.Background(), repo, key); err != nil || !ok || v != "v" {
			t.Errorf("%s = %q %v %v, want v", key, v, ok, err)
		}
	}
}
