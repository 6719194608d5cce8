package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
)

// outside is a directory outside the repository with one file, bait, whose
// content a test checks is never changed.
type outside struct {
	t    *testing.T
	dir  string
	bait string
}

const baitContent = "outside the repository\n"

func newOutside(t *testing.T) *outside {
	t.Helper()
	dir := t.TempDir()
	o := &outside{t: t, dir: dir, bait: filepath.Join(dir, "bait")}
	if err := os.WriteFile(o.bait, []byte(baitContent), 0o644); err != nil {
		t.Fatal(err)
	}
	return o
}

// untouched fails unless the outside directory holds only the unchanged
// bait.
func (o *outside) untouched(what string) {
	o.t.Helper()
	entries, err := os.ReadDir(o.dir)
	if err != nil {
		o.t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "bait" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		o.t.Fatalf("%s: lockgate wrote outside the repository: %v", what, names)
	}
	b, err := os.ReadFile(o.bait)
	if err != nil || string(b) != baitContent {
		o.t.Fatalf("%s: the file outside the repository changed: %q, %v", what, b, err)
	}
	fi, err := os.Stat(o.bait)
	if err != nil || fi.Mode().Perm() != 0o644 {
		o.t.Fatalf("%s: the file outside the repository changed mode: %v, %v", what, fi.Mode(), err)
	}
}

func plant(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func glob(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) != 1 {
		t.Fatalf("glob %s: %v, %v", pattern, m, err)
	}
	return m[0]
}

// TestSymlinksInStateDir: a symbolic link planted anywhere lockgate keeps
// its state (<git-dir>/lockgate) is refused, never followed: the file it
// points to stays as it was and the command fails, naming the path.
func TestSymlinksInStateDir(t *testing.T) {
	t.Parallel()
	w := []string{"LOCKGATE_WORKER=alice"}
	state := func(r *gittest.Repo, p ...string) string {
		return filepath.Join(append([]string{r.Dir, ".git", "lockgate"}, p...)...)
	}
	cases := []struct {
		name  string
		setup func(r *gittest.Repo, o *outside) string // plants a link, returns the path to name
		args  []string
		code  int
	}{
		{"state directory", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r))
			return state(r)
		}, []string{"lock", "acquire", "a.py"}, 3},
		{"lock directory", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r, "locks"))
			return state(r, "locks")
		}, []string{"lock", "acquire", "a.py"}, 3},
		{"temp directory", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r, "locks", ".tmp"))
			return state(r, "locks", ".tmp")
		}, []string{"lock", "acquire", "a.py"}, 3},
		{"guard directory", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r, "locks", ".guard"))
			return state(r, "locks", ".guard")
		}, []string{"lock", "acquire", "a.py"}, 3},
		{"keys directory", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r, "locks", "keys"))
			return state(r, "locks", "keys")
		}, []string{"lock", "acquire", "api:GET /x"}, 3},
		{"patterns directory", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r, "locks", "patterns"))
			return state(r, "locks", "patterns")
		}, []string{"lock", "list"}, 3},
		{"guard files", func(r *gittest.Repo, o *outside) string {
			for i := range 256 {
				plant(t, o.bait, state(r, "locks", ".guard", fmt.Sprintf("%02x", i)))
			}
			return "is a symbolic link"
		}, []string{"lock", "acquire", "a.py"}, 3},
		{"cache directory", func(r *gittest.Repo, o *outside) string {
			r.Write(".lockgate.yaml", "version: 1\n") // only a config file is cached
			plant(t, o.dir, state(r, "cache"))
			return state(r, "cache")
		}, []string{"lock", "list"}, 3},
		{"cache file", func(r *gittest.Repo, o *outside) string {
			r.Write(".lockgate.yaml", "version: 1\n")
			if code, out := runIn(t, r, "", w, "lock", "list"); code != 0 {
				t.Fatalf("lock list: %s", out)
			}
			f := glob(t, state(r, "cache", "config-*.json"))
			plant(t, o.bait, f)
			return f
		}, []string{"lock", "list"}, 3},
		{"journal read", func(r *gittest.Repo, o *outside) string {
			plant(t, o.bait, state(r, "events.jsonl"))
			return state(r, "events.jsonl")
		}, []string{"log"}, 3},
		{"journal directory read", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r))
			return state(r)
		}, []string{"log"}, 3},
		{"dangling journal link", func(r *gittest.Repo, o *outside) string {
			plant(t, filepath.Join(o.dir, "created"), state(r, "events.jsonl"))
			return state(r, "events.jsonl")
		}, []string{"lock", "acquire", "a.py"}, 3},
		{"intents directory", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r, "intents"))
			return state(r, "intents")
		}, []string{"lock", "acquire", "a.py"}, 3},
		{"intents directory recovered", func(r *gittest.Repo, o *outside) string {
			plant(t, o.dir, state(r, "intents"))
			return state(r, "intents")
		}, []string{"lock", "list"}, 0}, // recovery is best effort for a reader
		{"intent file", func(r *gittest.Repo, o *outside) string {
			if err := os.MkdirAll(state(r, "intents"), 0o755); err != nil {
				t.Fatal(err)
			}
			plant(t, o.bait, state(r, "intents", "x.json"))
			return state(r, "intents", "x.json")
		}, []string{"lock", "list"}, 0},
		{"workflow branch flock", func(r *gittest.Repo, o *outside) string {
			if code, out := runIn(t, r, "", w, "lock", "acquire", "a.py"); code != 0 {
				t.Fatalf("acquire: %s", out)
			}
			// The event is still to be committed by the sync below.
			r.Git("update-ref", "-d", "refs/heads/lockgate/workflow")
			if err := os.Remove(state(r, "branch.flock")); err != nil {
				t.Fatal(err)
			}
			plant(t, filepath.Join(o.dir, "created"), state(r, "branch.flock"))
			return state(r, "branch.flock")
		}, []string{"workflow", "sync"}, 3},
		{"journal sync", func(r *gittest.Repo, o *outside) string {
			plant(t, o.bait, state(r, "events.jsonl"))
			return state(r, "events.jsonl")
		}, []string{"workflow", "sync"}, 3},
		{"lock record", func(r *gittest.Repo, o *outside) string {
			if code, out := runIn(t, r, "", w, "lock", "acquire", "a.py"); code != 0 {
				t.Fatalf("acquire: %s", out)
			}
			rec := glob(t, state(r, "locks", "*.lock"))
			b, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			// The link points at a valid record: it still must not count.
			if err := os.WriteFile(o.bait, b, 0o644); err != nil {
				t.Fatal(err)
			}
			plant(t, o.bait, rec)
			return rec
		}, []string{"lock", "release", "a.py"}, 4},
		{"init --force", func(r *gittest.Repo, o *outside) string {
			// A config read through a link is fine; writing through it is not.
			if err := os.WriteFile(o.bait, []byte("version: 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			plant(t, o.bait, filepath.Join(r.Dir, ".lockgate.yaml"))
			return filepath.Join(r.Dir, ".lockgate.yaml")
		}, []string{"init", "--force", "--no-install"}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			o := newOutside(t)
			want := tc.setup(r, o)
			bait, err := os.ReadFile(o.bait)
			if err != nil {
				t.Fatal(err)
			}
			code, out := runIn(t, r, "", w, tc.args...)
			if code != tc.code || !strings.Contains(out, want) || !strings.Contains(out, "symbolic link") {
				t.Fatalf("%v: exit %d, want %d naming %s as a symbolic link; stderr:\n%s", tc.args, code, tc.code, want, out)
			}
			if after, _ := os.ReadFile(o.bait); string(after) != string(bait) {
				t.Fatalf("%v changed the file outside the repository:\n%s", tc.args, after)
			}
			if string(bait) == baitContent {
				o.untouched(strings.Join(tc.args, " "))
			}
		})
	}
}

// TestSymlinkedJournalAppend: an event is never appended through a link
// planted at the journal; the command says so.
func TestSymlinkedJournalAppend(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	o := newOutside(t)
	plant(t, o.bait, filepath.Join(r.Dir, ".git", "lockgate", "events.jsonl"))
	_, out := runIn(t, r, "", []string{"LOCKGATE_WORKER=alice"}, "lock", "acquire", "a.py")
	if !strings.Contains(out, "events.jsonl is a symbolic link") {
		t.Fatalf("stderr does not name the link:\n%s", out)
	}
	o.untouched("lock acquire")
	_, out = runIn(t, r, "", []string{"LOCKGATE_WORKER=alice", "LOCKGATE_SKIP=1"}, "hook", "pre-commit")
	if !strings.Contains(out, "symbolic link") {
		t.Fatalf("bypass recorded through the link? stderr:\n%s", out)
	}
	o.untouched("hook bypass")
}

// TestSymlinkedRecordCleared: a planted record link is removed by
// `lock clear --force`, and the file it pointed to is left alone.
func TestSymlinkedRecordCleared(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	o := newOutside(t)
	w := []string{"LOCKGATE_WORKER=alice"}
	if code, out := runIn(t, r, "", w, "lock", "acquire", "a.py"); code != 0 {
		t.Fatalf("acquire: %s", out)
	}
	rec := glob(t, filepath.Join(r.Dir, ".git", "lockgate", "locks", "*.lock"))
	plant(t, o.bait, rec)
	if code, out := runIn(t, r, "", []string{"LOCKGATE_WORKER=bob"}, "lock", "acquire", "a.py"); code != 4 {
		t.Fatalf("acquire over a planted link: exit %d, want 4\n%s", code, out)
	}
	if code, out := runIn(t, r, "", w, "lock", "clear", "a.py", "--force"); code != 0 {
		t.Fatalf("clear: exit %d\n%s", code, out)
	}
	if _, err := os.Lstat(rec); !os.IsNotExist(err) {
		t.Fatalf("the link is still there: %v", err)
	}
	o.untouched("lock clear")
	if code, out := runIn(t, r, "", []string{"LOCKGATE_WORKER=bob"}, "lock", "acquire", "a.py"); code != 0 {
		t.Fatalf("acquire after clear: exit %d\n%s", code, out)
	}
}

// TestInstallSymlinkedHooks: install never writes through links in the
// hooks directory: not at a hook, not at a name it once used for its temp
// file.
func TestInstallSymlinkedHooks(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	o := newOutside(t)
	hooks := filepath.Join(r.Dir, ".git", "hooks")
	plant(t, o.bait, filepath.Join(hooks, "pre-commit"))
	plant(t, o.bait, filepath.Join(hooks, "pre-push.lockgate-tmp"))
	plant(t, o.bait, filepath.Join(hooks, "commit-msg.lockgate-tmp"))
	if code, out := runIn(t, r, "", nil, "install"); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	o.untouched("install")
	fi, err := os.Lstat(filepath.Join(hooks, "pre-commit"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("pre-commit is not lockgate's shim: %v, %v", fi, err)
	}
	if _, err := os.Lstat(filepath.Join(hooks, "pre-commit.pre-lockgate")); err != nil {
		t.Fatalf("the linked hook was not kept and chained: %v", err)
	}
	if code, out := runIn(t, r, "", nil, "uninstall"); code != 0 {
		t.Fatalf("uninstall: exit %d\n%s", code, out)
	}
	o.untouched("uninstall")
}
