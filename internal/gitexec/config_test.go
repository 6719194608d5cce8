package gitexec

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
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

// trickyConfigs are config files, each appended to a fresh clone's own,
// whose lockgate.store the in-process reader must read as git does or
// leave to git.
var trickyConfigs = map[string]string{
	"tab inside":           "[lockgate]\n\tstore = a\tb  c \n",
	"cr inside":            "[lockgate]\n\tstore = a\rb\n",
	"empty quotes first":   "[lockgate]\n\tstore = \"\" a\n",
	"quoted spaces":        "[lockgate]\n\tstore = \" a \" \n",
	"quote joins":          "[lockgate]\n\tstore = \"a\"b\"c\"\n",
	"quoted comment chars": "[lockgate]\n\tstore = \"a ; b # c\" ; d\n",
	"comment with quote":   "[lockgate]\n\tstore = a # \"b\n",
	"escapes":              "[lockgate]\n\tstore = \\\"a\\\" \\\\ \\t\\n\\b\n",
	"escaped newline end":  "[lockgate]\n\tstore = a\\n\n",
	"unknown escape":       "[lockgate]\n\tstore = \"a\\qb\"\n",
	"unterminated quote":   "[lockgate]\n\tstore = \"ab\n",
	"continuation spaces":  "[lockgate]\n\tstore = a \\\n   b\n",
	"continuation crlf":    "[lockgate]\r\n\tstore = a\\\r\nb\r\n",
	"backslash at eof":     "[lockgate]\n\tstore = a\\",
	"no newline at eof":    "[lockgate]\n\tstore = a",
	"key at eof":           "[lockgate]\n\tstore",
	"key then spaces":      "[lockgate]\n\tstore \t\n",
	"key then comment":     "[lockgate]\n\tstore # c\n",
	"key then cr":          "[lockgate]\n\tstore \r x\n",
	"empty quoted":         "[lockgate]\n\tstore = \"\"\n",
	"no spaces":            "[lockgate]\nstore=a\n",
	"tab before equals":    "[lockgate]\nstore\t=\ta\n",
	"upper key":            "[lockgate]\n\tSTORE = a\n",
	"upper section":        "[LOCKGATE]\n\tstore = a\n",
	"repeated":             "[lockgate]\n\tstore = a\n\tstore = b\n[LockGate]\n\tStore = c\n[core]\n\tstore = d\n",
	"repeated then none":   "[lockgate]\n\tstore = a\n[lockgate \"x\"]\n\tstore = b\n",
	"subsection":           "[lockgate \"store\"]\n\tstore = a\n",
	"subsection escapes":   "[lockgate \"a\\\"b\\\\c\"]\n\tstore = a\n[lockgate]\n\tstore = b\n",
	"subsection newline":   "[lockgate \"a\nb\"]\n\tstore = a\n",
	"subsection spaces":    "[lockgate   \"x\"]\n\tstore = a\n",
	"subsection then ]":    "[lockgate \"x\" ]\n\tstore = a\n",
	"empty subsection":     "[lockgate \"\"]\n\tstore = a\n",
	"dotted section":       "[lockgate.x]\n\tstore = a\n",
	"dotted only":          "[.]\n\tstore = a\n",
	"space before ]":       "[lockgate ]\n\tstore = a\n",
	"empty section":        "[]\n\tstore = a\n",
	"unterminated section": "[lockgate\n\tstore = a\n",
	"section at eof":       "[lockgate",
	"bad section char":     "[lock_gate]\n\tstore = a\n",
	"header then key":      "[lockgate] store = a ; c\n",
	"header then comment":  "[lockgate] # c\n\tstore = a\n",
	"header then ]":        "[lockgate] ]\n\tstore = a\n",
	"indented comments":    "  # [core]\n\t; x\n[lockgate]\n  # store = b\n\tstore = a\n",
	"comments only":        "# [lockgate]\n; store = file\n",
	"key before section":   "store = a\n",
	"digit key":            "[lockgate]\n\t1store = a\n",
	"dash key":             "[lockgate]\n\t-store = a\n",
	"underscore key":       "[lockgate]\n\tst_ore = a\n",
	"dash in key":          "[lockgate]\n\tstore-x = a\n\tstore = b\n",
	"bom":                  "\xef\xbb\xbf[lockgate]\n\tstore = a\n",
	"utf8 value":           "[lockgate]\n\tstore = caf\xc3\xa9\n",
	"latin1 value":         "[lockgate]\n\tstore = caf\xe9\n",
	"nul in value":         "[lockgate]\n\tstore = a\x00b\n",
	"cr only lines":        "[lockgate]\rstore = a\r",
	"blank crlf":           "\r\n\r\n[lockgate]\r\n\r\n\tstore = a\r\n",
	"lone cr in header":    "[lockgate\r]\n\tstore = a\n",
	"form feed":            "[lockgate]\n\f store = a\n",
	"vertical tab value":   "[lockgate]\n\tstore = a\vb\n",
	"lockgate elsewhere":   "[core]\n\tlockgatestore = x\n",
	"include section":      "[include]\n\tpath = /nonexistent/lockgate\n[lockgate]\n\tstore = a\n",
}

// gitConfigGet runs `git config --local --get key` and returns its answer
// byte for byte: the value, whether it is set, and whether git failed.
func gitConfigGet(t *testing.T, r *gittest.Repo, key string) (value string, set, failed bool) {
	t.Helper()
	cmd := exec.Command("git", "config", "--local", "--get", key)
	cmd.Dir, cmd.Env = r.Dir, r.Env
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	var xe *exec.ExitError
	switch {
	case err == nil:
		return strings.TrimSuffix(out.String(), "\n"), true, false
	case errors.As(err, &xe) && xe.ExitCode() == 1:
		return "", false, false
	case errors.As(err, &xe):
		return "", false, true
	}
	t.Fatal(err)
	return "", false, false
}

// TestLocalConfigTricky: for config files that stretch git's syntax, the
// in-process read answers exactly what `git config --local --get`
// prints, fails when git fails, and reads in-process every file git reads
// but one that includes others or holds a NUL byte.
func TestLocalConfigTricky(t *testing.T) {
	t.Parallel()
	for name, content := range trickyConfigs {
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
			gitFailed := false
			for _, key := range []string{"lockgate.store", "LockGate.STORE", "lockgate.store-x", "core.bare"} {
				want, wantSet, failed := gitConfigGet(t, r, key)
				gitFailed = gitFailed || failed
				got, ok, err := LocalConfig(context.Background(), repo, key)
				if failed != (err != nil) || got != want || ok != wantSet {
					t.Errorf("%s: LocalConfig = %q, %v, %v; git config --get = %q, %v, failed %v", key, got, ok, err, want, wantSet, failed)
				}
			}
			_, inProcess := readConfig(append(base, content...), []configKey{{"lockgate", "store"}})
			if leftToGit := strings.Contains(name, "include") || strings.Contains(content, "\x00"); !gitFailed && inProcess == leftToGit {
				t.Errorf("read in-process: %v, want %v", inProcess, !leftToGit)
			}
		})
	}
}

// FuzzLocalConfigAgreesWithGit: whatever a config file holds, the
// in-process reader either leaves it to git or answers what
// `git config --get` answers. git reads the file through --file, the
// parser --local uses, so that the settings of a repository (a format
// version it does not know, say) in a fuzzed file do not stop git before
// it parses the file.
func FuzzLocalConfigAgreesWithGit(f *testing.F) {
	for _, content := range trickyConfigs {
		f.Add([]byte(content))
	}
	r := gittest.New(f)
	keys := []string{"lockgate.store", "core.bare"}
	names := []configKey{{"lockgate", "store"}, {"core", "bare"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := readConfig(data, names)
		if !ok {
			return // git reads it
		}
		file := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for i, key := range keys {
			cmd := exec.Command("git", "config", "--file", file, "--get", key)
			cmd.Dir, cmd.Env = r.Dir, r.Env
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			err := cmd.Run()
			var xe *exec.ExitError
			want := ConfigValue{Value: strings.TrimSuffix(out.String(), "\n"), Set: err == nil}
			if err != nil && (!errors.As(err, &xe) || xe.ExitCode() != 1) {
				t.Fatalf("%s: read in-process as %+v; git config --get: %v: %s", key, got[i], err, stderr.Bytes())
			}
			if got[i] != want {
				t.Errorf("%s: read in-process as %+v; git config --get: %+v", key, got[i], want)
			}
		}
	})
}
