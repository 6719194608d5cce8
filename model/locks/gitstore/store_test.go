package gitstore

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

// git runs git in dir with the tests' environment.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gittest.Env(t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// bareRemote makes an empty bare repository.
func bareRemote(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "remote.git")
	git(t, t.TempDir(), "init", "-q", "--bare", dir)
	return dir
}

// clone makes a repository whose origin is url.
func clone(t testing.TB, url string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	git(t, t.TempDir(), "init", "-q", dir)
	git(t, dir, "remote", "add", "origin", url)
	return dir
}

// openClone opens the store of a clone of url.
func openClone(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	dir := clone(t, url)
	opts.GitDir = filepath.Join(dir, ".git")
	opts.WorkTree = dir
	if opts.Remote == "" {
		opts.Remote = "origin"
	}
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMain(m *testing.M) {
	// The git the store runs must not read the developer's configuration.
	for _, kv := range gittest.Env(os.TempDir()) {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}

func TestConformance(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locks.Store {
		return openClone(t, bareRemote(t), Options{})
	})
}

// Two clones of one remote are one store.
func TestConformanceAcrossClones(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locks.Store {
		url := bareRemote(t)
		return &twoClones{Store: openClone(t, url, Options{Reuse: -1}), other: openClone(t, url, Options{Reuse: -1})}
	})
}

// twoClones writes through one clone and reads through another.
type twoClones struct {
	*Store
	other *Store
}

func (c *twoClones) Get(ctx context.Context, key string) (locks.Lock, error) {
	return c.other.Get(ctx, key)
}

func (c *twoClones) List(ctx context.Context) ([]locks.Entry, error) { return c.other.List(ctx) }

func (c *twoClones) Overlapping(ctx context.Context, key string) ([]locks.Entry, error) {
	return c.other.Overlapping(ctx, key)
}

func (c *twoClones) Covering(ctx context.Context, paths []string) ([]locks.Entry, error) {
	return c.other.Covering(ctx, paths)
}

func (c *twoClones) InNamespace(ctx context.Context, ns string) ([]locks.Entry, error) {
	return c.other.InNamespace(ctx, ns)
}

func (c *twoClones) Close() error { return errors.Join(c.Store.Close(), c.other.Close()) }

func TestConformanceIgnoreCase(t *testing.T) {
	locktest.RunIgnoreCase(t, func(t *testing.T) locktest.Views {
		url := bareRemote(t)
		reopen := func(t *testing.T) locks.Store {
			s := openClone(t, url, Options{Reuse: -1})
			t.Cleanup(func() { s.Close() })
			return s
		}
		return locktest.Views{
			Folded:      openClone(t, url, Options{Reuse: -1}),
			Exact:       openClone(t, url, Options{Reuse: -1}),
			LegacyASCII: openClone(t, url, Options{Reuse: -1, legacyASCII: true}),
			Reopen:      reopen,
		}
	})
}

// A fence blob at the top of uint64 refuses the next fence rather than
// wrap to 0.
func TestFenceLimit(t *testing.T) {
	s := openClone(t, bareRemote(t), Options{})
	locktest.RunFenceLimit(t, s, math.MaxUint64, func(t *testing.T, _ string, fence uint64) {
		err := s.Transact(context.Background(), func(v locks.Store) error {
			v.(*view).fence = fence
			v.(*view).seal()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
