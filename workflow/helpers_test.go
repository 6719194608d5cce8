package workflow

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// TestMain makes the git commands the package itself runs (update-ref,
// push, fetch use the process environment) as hermetic as those of
// gittest: no user or system config, a fixed identity. It is set once,
// before any test runs, so tests stay parallel.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "branch-test-home")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, kv := range gittest.Env(home) {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasSuffix(k, "_DATE") {
			continue // commits need real dates for the merge tests' ordering
		}
		os.Setenv(k, v)
	}
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"} {
		os.Unsetenv(k)
	}
	if os.Getenv(envHelper) != "" { // a writer process of the multi-process tests
		helperProcess()
		os.RemoveAll(home)
		os.Exit(0)
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// repoOf returns the gitexec view of a test repository with a work tree.
func repoOf(r *gittest.Repo) *gitexec.Repo {
	return &gitexec.Repo{Toplevel: r.Dir, GitDir: filepath.Join(r.Dir, ".git"), CommonDir: filepath.Join(r.Dir, ".git")}
}

// bareOf returns the gitexec view of a bare repository.
func bareOf(dir string) *gitexec.Repo {
	return &gitexec.Repo{GitDir: dir, CommonDir: dir}
}

func openWriter(t testing.TB, repo *gitexec.Repo) *Writer {
	t.Helper()
	w, err := Open(Config{GitDir: repo.GitDir, CommonDir: repo.CommonDir, WorkTree: repo.Toplevel})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// newRepo is a repository with one commit on main.
func newRepo(t testing.TB) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	r.Write("a.txt", "a\n")
	r.Write("b.txt", "b\n")
	r.Commit("initial")
	return r
}

// event returns a valid event with a fresh id.
func event(worker string, i int) journal.Event {
	return journal.Event{
		ID:         journal.NewID(),
		Timestamp:  time.Date(2026, 1, 2, 3, 4, 5, i, time.UTC),
		Worker:     worker,
		WorkerType: "agent",
		Action:     journal.ActionAcquire,
		Key:        fmt.Sprintf("api:GET /v1/items/%d", i),
	}
}

func events(worker string, n int) []journal.Event {
	evs := make([]journal.Event, n)
	for i := range evs {
		evs[i] = event(worker, i)
	}
	return evs
}

// idsOf returns the sorted ids of evs.
func idsOf(evs []journal.Event) []string {
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	sort.Strings(ids)
	return ids
}

// branchIDs returns the sorted ids of the events on w's branch and fails
// on a duplicate.
func branchIDs(t testing.TB, w *Writer) []string {
	t.Helper()
	evs, err := w.Events(context.Background())
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	ids := idsOf(evs)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Fatalf("event %s is on the branch twice", ids[i])
		}
	}
	return ids
}

func equalIDs(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		missing, extra := diffIDs(got, want)
		t.Fatalf("%s: got %d ids, want %d; missing %v; unexpected %v", what, len(got), len(want), missing, extra)
	}
}

func diffIDs(got, want []string) (missing, extra []string) {
	g := make(map[string]bool)
	for _, id := range got {
		g[id] = true
	}
	w := make(map[string]bool)
	for _, id := range want {
		w[id] = true
		if !g[id] {
			missing = append(missing, id)
		}
	}
	for _, id := range got {
		if !w[id] {
			extra = append(extra, id)
		}
	}
	return missing, extra
}

// gitIn runs git in dir with env and stdin and returns trimmed stdout.
func gitIn(t testing.TB, dir string, env []string, stdin string, args ...string) string {
	t.Helper()
	out, err := tryGit(dir, env, stdin, args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

func tryGit(dir string, env []string, stdin string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// fsck fails the test unless `git fsck --strict` is clean.
func fsck(t testing.TB, dir string, env []string) {
	t.Helper()
	cmd := exec.Command("git", "fsck", "--strict", "--no-dangling", "--no-progress")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("error")) || bytes.Contains(out, []byte("warning")) {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// userState is everything of the user's that writing the branch must not
// change: the index file byte for byte, every file of the work tree, HEAD,
// every ref but the workflow branch (and its remote-tracking ref), the state files of a commit, merge or
// rebase in progress.
func userState(t testing.TB, r *gittest.Repo) string {
	t.Helper()
	var b strings.Builder
	gitDir := filepath.Join(r.Dir, ".git")
	for _, name := range []string{"index", "HEAD", "MERGE_HEAD", "MERGE_MSG", "ORIG_HEAD", "COMMIT_EDITMSG", "index.lock"} {
		data, err := os.ReadFile(filepath.Join(gitDir, name))
		if err != nil {
			fmt.Fprintf(&b, "%s: absent\n", name)
			continue
		}
		fmt.Fprintf(&b, "%s: %x\n", name, sha256.Sum256(data))
	}
	err := filepath.WalkDir(r.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(r.Dir, p)
		fmt.Fprintf(&b, "file %s: %x\n", rel, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	refs := gitIn(t, r.Dir, r.Env, "", "for-each-ref", "--format=%(refname) %(objectname)")
	for _, line := range strings.Split(refs, "\n") {
		// The workflow branch and its remote-tracking ref (which Push
		// fetches into, as git fetch would) are ours to move.
		if line != "" && !strings.HasPrefix(line, "refs/heads/lockgate/") && !strings.HasPrefix(line, "refs/remotes/origin/lockgate/") {
			b.WriteString("ref " + line + "\n")
		}
	}
	head, _ := r.Run("rev-parse", "--verify", "-q", "HEAD")
	b.WriteString("HEAD " + head + "\n")
	return b.String()
}

// writeFile creates a file with mode.
func writeFile(t testing.TB, name, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// decodeCache reads a cache file back: the ref and tree it describes and
// their events. Strings of the events share one copy of each block.
func decodeCache(data []byte) (ref, tree string, evs []journal.Event, err error) {
	c, err := parseCache(data)
	if err != nil {
		return "", "", nil, err
	}
	evs, _, err = c.decode(0, len(c.blocks), Match{})
	if err != nil {
		return "", "", nil, err
	}
	return c.ref, c.tree, evs, nil
}

// parseCache checks a cache file held in memory, lists its blocks and
// reads each one's compressed events (load).
func parseCache(data []byte) (*cacheIndex, error) {
	c, err := parseCacheAt(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	if err := c.load(len(c.blocks)); err != nil {
		return nil, err
	}
	return c, nil
}
