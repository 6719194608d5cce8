package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/internal/hint"
)

// hintRepo is a real git repository in which the built binary runs as
// alice (who holds things) or bob (who is refused).
type hintRepo struct {
	t   *testing.T
	dir string
	env []string
}

const (
	alice = "alice@test"
	bob   = "bob@test"
)

func newHintRepo(t *testing.T, config string) *hintRepo {
	t.Helper()
	bin := lockgateBinary(t)
	root := t.TempDir()
	home := filepath.Join(root, "home")
	dir := filepath.Join(root, "repo")
	for _, d := range []string{home, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), gittest.Env(home)...)
	env = append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LOCKGATE_WORKER_TYPE=human", "LOCKGATE_SKIP=", "LOCKGATE_STORE=", "LOCKGATE_SESSION=",
		"LC_ALL=C.UTF-8") // bash reads $'\u…' only in a UTF-8 locale
	r := &hintRepo{t: t, dir: dir, env: env}
	r.git("init", "-q", "-b", "main")
	r.write(".lockgate.yaml", config)
	r.write("a.py", "a\n")
	r.write("b.py", "b\n")
	r.write("work-packages.yaml", "packages:\n  - id: WP-1\n    title: one\n    locks: {files: [a.py]}\n  - id: WP-2\n    title: two\n    locks: {files: [a.py, b.py]}\n")
	r.git("add", ".")
	r.git("commit", "-q", "-m", "init")
	if _, errOut, code := r.run(alice, "lockgate install"); code != 0 {
		t.Fatalf("install: %s", errOut)
	}
	return r
}

func (r *hintRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *hintRepo) git(args ...string) {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	if out, err := cmd.CombinedOutput(); err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// run runs a shell command line (as a user pastes it) as worker as.
func (r *hintRepo) run(as, line string) (stdout, stderr string, code int) {
	return r.runIn(r.dir, as, line)
}

// runIn runs line in dir, with LOCKGATE_WORKER=as.
func (r *hintRepo) runIn(dir, as, line string) (stdout, stderr string, code int) {
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), r.env...), "LOCKGATE_WORKER="+as)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		r.t.Fatalf("%s: %v", line, err)
	}
	return o.String(), e.String(), code
}

func (r *hintRepo) must(as, line string) string {
	r.t.Helper()
	return r.mustIn(r.dir, as, line)
}

func (r *hintRepo) mustIn(dir, as, line string) string {
	r.t.Helper()
	out, errOut, code := r.runIn(dir, as, line)
	if code != 0 {
		r.t.Fatalf("%s (as %s) exited %d:\n%s%s", line, as, code, out, errOut)
	}
	return out
}

// hintScenario sets up a refusal in a fresh repository and triggers it as
// bob: the refused command line, and the git arguments that "…" in a
// LOCKGATE_SKIP hint stands for.
type hintScenario struct {
	name    string
	config  string
	setup   func(r *hintRepo)
	trigger string // run as bob; fails, unless succeeds
	// succeeds: the command goes through and warns with a hint.
	succeeds bool
	gitArgs  string
	// retrigger: after the hint's commands, trigger again and expect
	// success (false when the hint does not promise that).
	retrigger bool
	// release is what alice runs to free what is waited for (default:
	// release a.py).
	release string
}

const plainConfig = "version: 1\n"

var hintScenarios = []hintScenario{
	{name: "refresh a lock not held", config: plainConfig,
		setup:   func(r *hintRepo) {},
		trigger: "lockgate lock refresh a.py", retrigger: true},
	{name: "acquire held", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire a.py") },
		trigger: "lockgate lock acquire a.py", retrigger: true},
	{name: "acquire held for days", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire a.py --ttl 100h") },
		trigger: "lockgate lock acquire a.py", retrigger: true},
	{name: "acquire dash key held", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire -- -rf") },
		trigger: "lockgate lock acquire -- -rf", retrigger: true, release: "lockgate lock release -- -rf"},
	{name: "release dash key not owner", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire -- -rf") },
		trigger: "lockgate lock release -- -rf", retrigger: true},
	{name: "refresh dash key not owner", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire -- -rf") },
		trigger: "lockgate lock refresh -- -rf", retrigger: true},
	{name: "package held", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire a.py") },
		trigger: "lockgate lock acquire --package WP-1", retrigger: true},
	{name: "claim held", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire a.py") },
		trigger: "lockgate claim WP-1", retrigger: true},
	{name: "claim next held", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire a.py") },
		trigger: "lockgate claim", retrigger: true},
	{name: "claim next, a file in another's claim", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate claim WP-2") },
		trigger: "lockgate claim", retrigger: true, release: "lockgate release-package WP-2"},
	{name: "release not owner", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire a.py") },
		trigger: "lockgate lock release a.py", retrigger: true},
	{name: "refresh not owner", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire a.py") },
		trigger: "lockgate lock refresh a.py", retrigger: true},
	{name: "pause held", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate pause FEAT-1") },
		trigger: "lockgate pause FEAT-1", retrigger: true},
	{name: "unpause not owner", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate pause FEAT-1") },
		trigger: "lockgate unpause FEAT-1", retrigger: true},
	{name: "agent clears a person's lock", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate lock acquire a.py") },
		trigger: "lockgate --worker-type agent lock clear --force a.py"},
	{name: "ports release not owner", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate ports allocate > ../port") },
		trigger: "lockgate ports release $(cat ../port)", retrigger: true},
	{name: "lock release of a port", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(bob, "lockgate ports allocate > ../port") },
		trigger: "lockgate lock release port:$(cat ../port)"},
	{name: "lock check of a port", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(bob, "lockgate ports allocate > ../port") },
		trigger: "lockgate lock check port:$(cat ../port)"},
	{name: "ports refresh not owner", config: plainConfig,
		setup:   func(r *hintRepo) { r.must(alice, "lockgate ports allocate > ../port") },
		trigger: "lockgate ports refresh $(cat ../port)"},
	{name: "corrupt record", config: plainConfig,
		setup:   func(r *hintRepo) { r.write(".git/lockgate/locks/b.py.lock", "{not json") },
		trigger: "lockgate lock acquire b.py", retrigger: true},
	{name: "corrupt record listed", config: plainConfig,
		setup:   func(r *hintRepo) { r.write(".git/lockgate/locks/b.py.lock", "{not json") },
		trigger: "lockgate lock list", succeeds: true},
	{name: "foreign record listed", config: plainConfig,
		setup: func(r *hintRepo) {
			r.write(".git/lockgate/locks/keys/zzz.lock", "{not json")
			r.write(".git/lockgate/locks/patterns/abc.lock", "")
		},
		trigger: "lockgate lock list", succeeds: true},
	{name: "commit locked path", config: plainConfig,
		setup: func(r *hintRepo) {
			r.must(alice, "lockgate lock acquire a.py")
			r.write("a.py", "changed\n")
			r.git("add", "a.py")
		},
		trigger: "git commit -q -m change", gitArgs: "-q -m change", retrigger: true},
	{name: "commit locked dash path for days", config: plainConfig,
		setup: func(r *hintRepo) {
			r.must(alice, "lockgate lock acquire --ttl 100h -- -rf")
			r.write("-rf", "changed\n")
			r.git("add", "--", "-rf")
		},
		trigger: "git commit -q -m change", gitArgs: "-q -m change", retrigger: true},
	{name: "commit corrupt record", config: plainConfig,
		setup: func(r *hintRepo) {
			r.write(".git/lockgate/locks/b.py.lock", "{not json")
			r.write("b.py", "changed\n")
			r.git("add", "b.py")
		},
		trigger: "git commit -q -m change", gitArgs: "-q -m change", retrigger: true},
	{name: "commit without lock", config: "version: 1\nhooks: {require_lock: true}\n",
		setup: func(r *hintRepo) {
			r.write("a.py", "changed\n")
			r.git("add", "a.py")
		},
		trigger: "git commit -q -m change", gitArgs: "-q -m change", retrigger: true},
	// Under locks.per_branch the lock to take is the branch's: one on
	// every branch is refused while another branch's lock of the path is
	// held.
	{name: "commit without lock, held on another branch", config: "version: 1\nlocks: {per_branch: true}\nhooks: {require_lock: true}\n",
		setup: func(r *hintRepo) {
			r.must(alice, "lockgate lock acquire a.py --branch release")
			r.write("a.py", "changed\n")
			r.git("add", "a.py")
		},
		trigger: "git commit -q -m change", gitArgs: "-q -m change", retrigger: true},
	{name: "commit without key", config: "version: 1\nscope:\n  key_rules:\n    - {paths: [migrations/**], keys: [\"db:migration-slot\"]}\n",
		setup: func(r *hintRepo) {
			r.write("migrations/1.sql", "create\n")
			r.git("add", "migrations/1.sql")
		},
		trigger: "git commit -q -m migrate", gitArgs: "-q -m migrate", retrigger: true},
	{name: "commit without key another holds", config: "version: 1\nscope:\n  key_rules:\n    - {paths: [migrations/**], keys: [\"db:migration-slot\"]}\n",
		setup: func(r *hintRepo) {
			r.must(alice, "lockgate lock acquire db:migration-slot")
			r.write("migrations/1.sql", "create\n")
			r.git("add", "migrations/1.sql")
		},
		trigger: "git commit -q -m migrate", gitArgs: "-q -m migrate", retrigger: true,
		release: "lockgate lock release db:migration-slot"},
	{name: "commit while paused", config: plainConfig,
		setup: func(r *hintRepo) {
			r.must(alice, "lockgate pause FEAT-1")
			r.write("a.py", "changed\n")
			r.git("add", "a.py")
		},
		trigger: "git commit -q -m change", gitArgs: "-q -m change", retrigger: true},
	{name: "commit without task lock", config: "version: 1\nhooks: {commit_msg: {require_task: true}}\n",
		setup: func(r *hintRepo) {
			r.write("a.py", "changed\n")
			r.git("add", "a.py")
		},
		trigger: "git commit -q -m 'change' -m 'Task: T-1'", gitArgs: "-q -m change -m 'Task: T-1'", retrigger: true},
	{name: "commit with a task another holds", config: "version: 1\nhooks: {commit_msg: {require_task: true}}\n",
		setup: func(r *hintRepo) {
			r.must(alice, "lockgate lock acquire task:T-1")
			r.write("a.py", "changed\n")
			r.git("add", "a.py")
		},
		trigger: "git commit -q -m 'change' -m 'Task: T-1'", gitArgs: "-q -m change -m 'Task: T-1'", retrigger: true,
		release: "lockgate lock release task:T-1"},
	{name: "hook cannot decide", config: plainConfig,
		setup: func(r *hintRepo) {
			r.write(".lockgate.yaml", "version: 1\nlocks: {store: nosuchstore}\n")
			r.write("a.py", "changed\n")
			r.git("add", "a.py")
		},
		trigger: "git commit -q -m change", gitArgs: "-q -m change"},
	{name: "hook store unreachable", config: plainConfig,
		setup: func(r *hintRepo) {
			r.write(".lockgate.yaml", "version: 1\nlocks: {store: \"redis://127.0.0.1:1/0\"}\n")
			r.write("a.py", "changed\n")
			r.git("add", "a.py")
		},
		trigger: "git commit -q -m change", gitArgs: "-q -m change"},
	{name: "workflow branch not written", config: plainConfig,
		setup: func(r *hintRepo) {
			// A ref git cannot read: events stay in the journal.
			r.write(".git/refs/heads/lockgate/workflow", "not a hash\n")
		},
		trigger: "lockgate lock acquire b.py", succeeds: true},
}

// hintLine is one "hint:" line and the table entry it renders.
type hintLine struct {
	id   hint.ID
	text string
}

var backquoted = regexp.MustCompile("`([^`]+)`")

// carried matches the global options hints carry (of the tests: no value
// with a space).
var carried = regexp.MustCompile("`lockgate (?:(?:-C|-c|--store|--as|--worker-type|--session) [^ `]+ |--allow-store-mismatch )*")

// templateRE matches a rendered hint of a template.
func templateRE(tmpl string) *regexp.Regexp {
	parts := regexp.MustCompile(`%[sk]`).Split(tmpl, -1)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, "(.*?)") + "$")
}

func parseHints(t *testing.T, stderr string) []hintLine {
	t.Helper()
	var out []hintLine
	for _, l := range strings.Split(stderr, "\n") {
		text, ok := strings.CutPrefix(l, "hint: ")
		if !ok {
			continue
		}
		// The most specific template that matches: the one with the most
		// fixed text.
		found, best := false, hint.ID(0)
		bare := carried.ReplaceAllString(text, "`lockgate ")
		for id, tmpl := range hint.Table {
			if templateRE(tmpl).MatchString(bare) && (!found || len(tmpl) > len(hint.Table[best])) {
				found, best = true, id
			}
		}
		if found {
			out = append(out, hintLine{id: best, text: text})
		} else {
			t.Errorf("hint %q is not from the hint table", text)
		}
	}
	return out
}

// runHint runs the commands of one hint the way it tells: commands another
// worker is asked to run as that worker (first), the rest as the refused
// user, in the shell the refusal was printed in (u).
func runHint(t *testing.T, r *hintRepo, sc hintScenario, u hintUser, h hintLine) {
	t.Helper()
	self := func(line string) { r.t.Helper(); r.mustIn(u.dir(r), u.as, line) }
	cmds := backquoted.FindAllStringSubmatch(h.text, -1)
	line := func(i int) string {
		c := cmds[i][1]
		if rest, ok := strings.CutSuffix(c, " …"); ok {
			c = rest + " " + sc.gitArgs
		}
		return c
	}
	switch h.id {
	case hint.AskRelease, hint.AskUnpause, hint.ForceAgentHuman:
		r.must(alice, line(0))
	case hint.AskFinishPackage: // "ask them to finish it with `done`, or give it back with `release-package`"
		r.must(alice, line(0))
	case hint.PathLocked: // "wait for alice to run `release`, or take it when free: `acquire --wait`"
		r.must(alice, line(0))
		self(line(1))
	case hint.Paused: // "wait with `pause wait`; alice resumes with `unpause`"
		r.must(alice, line(1))
		self(line(0))
	case hint.WaitAcquire, hint.WaitPackage, hint.WaitClaim, hint.KeyHeld:
		// What is waited for comes free: alice gives it back.
		release := sc.release
		if release == "" {
			release = "lockgate lock release a.py"
		}
		r.must(alice, release)
		self(line(0))
	case hint.HookFailed, hint.HookFailedStore:
		// "fix the cause … or bypass once": the bypass commits.
		self(line(0))
		r.must(bob, "git log -1 --format=%s | grep -qx change")
	case hint.BypassHook:
		self(line(0))
		r.must(bob, "git log -1 --format=%s | grep -q .")
		if _, _, code := r.run(bob, "git diff --cached --quiet"); code != 0 {
			t.Errorf("%s: the bypass did not commit the staged change", sc.name)
		}
	case hint.WorkflowSync:
		r.must(bob, "rm .git/refs/heads/lockgate/workflow") // the cause, fixed
		self(line(0))
		r.must(bob, "git rev-parse --verify -q lockgate/workflow")
	default:
		for i := range cmds {
			self(line(i))
		}
	}
}

// hintUser is the shell bob is refused in: his own (LOCKGATE_WORKER=bob,
// in the repository), or another worker's in another directory, where bob
// names the repository and himself on the command line (-C, --as).
type hintUser struct {
	as      string
	options bool
}

func (u hintUser) dir(r *hintRepo) string {
	if u.options {
		return filepath.Join(filepath.Dir(r.dir), "elsewhere")
	}
	return r.dir
}

// line is a lockgate command line as bob types it in u.
func (u hintUser) line(l string) string {
	if rest, ok := strings.CutPrefix(l, "lockgate "); ok && u.options {
		return "lockgate -C ../repo --as " + bob + " " + rest
	}
	return l
}

// hintUsers are the shells a scenario's trigger is run in: with options
// only where the trigger is a lockgate command (git takes none).
func hintUsers(sc hintScenario) []hintUser {
	if !strings.HasPrefix(sc.trigger, "lockgate ") {
		return []hintUser{{as: bob}}
	}
	return []hintUser{{as: bob}, {as: "mallory@test", options: true}}
}

// TestEveryHintRuns collects every hint the CLI and the hooks print in
// real refusals and runs each command in it, in a fresh copy of the
// scenario, as the hint says and in the shell it was printed in: each must
// succeed, and after it the refused command goes through. Every hint of
// the table that names a command must be seen.
func TestEveryHintRuns(t *testing.T) {
	t.Parallel()
	seen := map[hint.ID]bool{}
	for _, sc := range hintScenarios {
		for _, u := range hintUsers(sc) {
			everyHintRuns(t, sc, u, seen)
		}
	}
	for id, tmpl := range hint.Table {
		if strings.Contains(tmpl, "`") && !strings.HasPrefix(tmpl, "an operator") && !seen[id] && !isMCPHint(id) {
			t.Errorf("no scenario prints hint %q", tmpl)
		}
	}
}

// everyHintRuns runs the hints of sc, triggered by u.
func everyHintRuns(t *testing.T, sc hintScenario, u hintUser, seen map[hint.ID]bool) {
	trigger := func(r *hintRepo) (string, string, int) {
		if err := os.MkdirAll(u.dir(r), 0o755); err != nil {
			r.t.Fatal(err)
		}
		return r.runIn(u.dir(r), u.as, u.line(sc.trigger))
	}
	r := newHintRepo(t, sc.config)
	sc.setup(r)
	_, stderr, code := trigger(r)
	if (code == 0) != sc.succeeds {
		t.Fatalf("%s: %s exited %d:\n%s", sc.name, u.line(sc.trigger), code, stderr)
	}
	hints := parseHints(t, stderr)
	if len(hints) == 0 {
		t.Errorf("%s: no hint in:\n%s", sc.name, stderr)
	}
	for i, h := range hints {
		if !strings.Contains(h.text, "`") {
			continue // says what stands in the way, or advice without a command
		}
		seen[h.id] = true
		t.Run(sc.name+"/"+h.text, func(t *testing.T) {
			t.Parallel() // each in a repository of its own
			r := newHintRepo(t, sc.config)
			sc.setup(r)
			_, stderr, _ := trigger(r)
			again := parseHints(t, stderr)
			if len(again) != len(hints) || again[i].id != h.id {
				t.Fatalf("the scenario printed other hints the second time:\n%s", stderr)
			}
			runHint(t, r, sc, u, again[i])
			if sc.retrigger && h.id != hint.BypassHook {
				if out, errOut, code := trigger(r); code != 0 {
					t.Errorf("after the hint, %s still fails (%d):\n%s%s", u.line(sc.trigger), code, out, errOut)
				}
			}
		})
	}
}

func isMCPHint(id hint.ID) bool {
	switch id {
	case hint.MCPTimeout, hint.MCPHeld, hint.MCPPortEnv, hint.MCPNotOwner, hint.MCPRateLimited, hint.MCPCorrupt, hint.MCPCorruptRecord, hint.MCPLockLost:
		return true
	}
	return false
}

// TestMCPHintCommandsAreCLIs: the commands MCP hints name for an operator
// are ones the CLI hints name too, which TestEveryHintRuns runs.
func TestMCPHintCommandsAreCLIs(t *testing.T) {
	cli := map[string]bool{}
	for id, tmpl := range hint.Table {
		if !isMCPHint(id) {
			for _, m := range backquoted.FindAllStringSubmatch(tmpl, -1) {
				cli[m[1]] = true
			}
		}
	}
	for id, tmpl := range hint.Table {
		if isMCPHint(id) {
			for _, m := range backquoted.FindAllStringSubmatch(tmpl, -1) {
				if !cli[m[1]] {
					t.Errorf("MCP hint %q names `%s`, which no CLI hint does", tmpl, m[1])
				}
			}
		}
	}
}

// TestNoBypassHintWhereSkipDoesNotWork: LOCKGATE_SKIP is offered only by
// the git hooks that honour it in the committer's environment — not by
// `check` (CI), `guard` or the server's pre-receive hook.
func TestNoBypassHintWhereSkipDoesNotWork(t *testing.T) {
	t.Parallel()
	r := newHintRepo(t, "version: 1\nscope:\n  profiles:\n    backfill: {allow: [tests/**]}\n")
	r.must(alice, "lockgate lock acquire a.py")
	r.write("a.py", "changed\n")
	r.git("add", "a.py")
	for _, line := range []string{
		"lockgate check",
		"lockgate check --profile backfill",
		"lockgate guard edit a.py",
		"LOCKGATE_WORKER_TYPE=agent lockgate guard edit a.py",
		"lockgate --store nosuchstore hook pre-receive </dev/null",
	} {
		_, stderr, code := r.run(bob, line)
		if code == 0 {
			t.Errorf("%s: succeeded; want a refusal", line)
		}
		if strings.Contains(stderr, "LOCKGATE_SKIP") {
			t.Errorf("%s offers LOCKGATE_SKIP, which it does not honour there:\n%s", line, stderr)
		}
	}
	// The pre-commit hook does honour it, and says so.
	_, stderr, _ := r.run(bob, "git commit -q -m change")
	if !strings.Contains(stderr, "LOCKGATE_SKIP=1 git commit") {
		t.Errorf("pre-commit refusal without the bypass hint:\n%s", stderr)
	}
}

// TestHintLinesOnlyFromTheTable: no code outside the hint table writes a
// "hint:" line of its own.
func TestHintLinesOnlyFromTheTable(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") ||
			filepath.ToSlash(p) == "../../internal/hint/hint.go" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte("hint: ")) {
			t.Errorf("%s writes a hint line of its own; use internal/hint", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestHookHintsWaitForTheLock: the hooks, guard and check offer to wait as
// long as the lock has left to run, as the CLI does, not a fixed time.
func TestHookHintsWaitForTheLock(t *testing.T) {
	t.Parallel()
	r := newHintRepo(t, plainConfig)
	r.must(alice, "lockgate lock acquire --ttl 100h a.py")
	r.write("a.py", "changed\n")
	r.git("add", "a.py")
	for _, line := range []string{"git commit -q -m change", "lockgate check", "lockgate guard edit a.py"} {
		_, stderr, code := r.run(bob, line)
		if code == 0 {
			t.Errorf("%s: succeeded; want a refusal", line)
		}
		if !strings.Contains(stderr, "`lockgate lock acquire --wait 4d3h a.py`") {
			t.Errorf("%s: no hint to wait 4d3h for the lock:\n%s", line, stderr)
		}
	}
}
