package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/service/session"
	"github.com/lockgate/lockgate/service/verify"
)

// now is the tests' fake clock.
var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const (
	lockedPath = "src/locked.go"
	freePath   = "src/free.go"
)

// testRepo is a repository with a committed .lockgate.yaml (config) and
// two files, lockedPath locked by bob in its file store. Git runs in the
// tests' hermetic environment.
func testRepo(t *testing.T, config string) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	for _, kv := range r.Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for _, k := range []string{"LOCKGATE_SKIP", "LOCKGATE_PROFILE", "LOCKGATE_TASK_TYPE", "LOCKGATE_WORKER", "LOCKGATE_WORKER_TYPE", "LOCKGATE_SESSION", "LOCKGATE_STORE", "GIT_INDEX_FILE", "GIT_DIR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	r.Write(".lockgate.yaml", config)
	r.Write(lockedPath, "package src\n")
	r.Write(freePath, "package src\n")
	r.Commit("base")
	bob := load(t, r, "bob")
	if err := bob.Open(context.Background(), Purpose{TakesLocks: true}); err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if _, err := bob.Mgr.Acquire(context.Background(), locks.Request{Keys: []string{lockedPath}, Owner: bob.Me, TTL: time.Hour, Action: "lock"}); err != nil {
		t.Fatal(err)
	}
	return r
}

// load loads r's workspace as worker as, on the fake clock.
func load(t *testing.T, r *gittest.Repo, as string) *Workspace {
	t.Helper()
	return loadAt(t, r, as, now)
}

// loadAt loads r's workspace as worker as, its clock stopped at at.
func loadAt(t *testing.T, r *gittest.Repo, as string, at time.Time) *Workspace {
	t.Helper()
	e, err := Load(context.Background(), Options{Dir: r.Dir, As: as, Clock: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// env is a hook environment of vars.
func env(vars ...string) func(string) string {
	return func(k string) string {
		for _, kv := range vars {
			if name, v, _ := strings.Cut(kv, "="); name == k {
				return v
			}
		}
		return ""
	}
}

// wantOutcome checks a use case's answer: a report with the violations
// rules names ("" none: a pass), or an error of want's type.
func wantOutcome(t *testing.T, r *Report, err error, rules []string, want any) {
	t.Helper()
	if want != nil {
		if err == nil || !errors.As(err, want) {
			t.Fatalf("err = %v (%T), want %T", err, err, want)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range r.Violations {
		got = append(got, v.Rule)
	}
	if strings.Join(got, ",") != strings.Join(rules, ",") || r.OK != (len(rules) == 0) {
		t.Fatalf("violations %v (ok %v), want %v", got, r.OK, rules)
	}
}

func TestHookContracts(t *testing.T) {
	var usage *UsageError
	var hookErr *HookError
	for _, tc := range []struct {
		name   string
		config string
		stage  []string // paths changed and staged
		run    func(*Workspace, context.Context, HookInput) (*Report, error)
		in     HookInput
		rules  []string
		want   any
	}{
		{name: "pre-commit passes a free path", stage: []string{freePath}, run: (*Workspace).PreCommit},
		{name: "pre-commit refuses a path another holds", stage: []string{lockedPath}, run: (*Workspace).PreCommit, rules: []string{"locked"}},
		{name: "pre-commit takes no arguments", run: (*Workspace).PreCommit, in: HookInput{Args: []string{"x"}}, want: &usage},
		{name: "an unknown LOCKGATE_PROFILE is invalid input", stage: []string{freePath}, run: (*Workspace).PreCommit,
			in: HookInput{Getenv: env("LOCKGATE_PROFILE=nope")}, want: &usage},
		{name: "pre-merge-commit cannot judge a malformed GITHEAD_", stage: []string{freePath}, run: (*Workspace).PreMergeCommit,
			in: HookInput{Environ: []string{"GITHEAD_xyz=theirs"}}, want: &hookErr},
		{name: "pre-merge-commit refuses as pre-commit", stage: []string{lockedPath}, run: (*Workspace).PreMergeCommit, rules: []string{"locked"}},
		{name: "commit-msg wants the message file", run: (*Workspace).CommitMsg, want: &usage},
		{name: "commit-msg passes", run: (*Workspace).CommitMsg, in: HookInput{Args: []string{"MSG"}}},
		{name: "commit-msg with require_task refuses a message naming no task", config: "hooks:\n  commit_msg: {require_task: true}\n",
			run: (*Workspace).CommitMsg, in: HookInput{Args: []string{"MSG"}}, rules: []string{"task"}},
		{name: "commit-msg cannot read a missing message", config: "hooks:\n  commit_msg: {require_task: true}\n",
			run: (*Workspace).CommitMsg, in: HookInput{Args: []string{"missing"}}, want: &hookErr},
		{name: "pre-push with nothing on stdin passes", run: (*Workspace).PrePush, in: HookInput{Args: []string{"origin", "url"}}},
		{name: "pre-push cannot judge a malformed ref line", run: (*Workspace).PrePush,
			in: HookInput{Args: []string{"origin"}, Stdin: strings.NewReader("refs/heads/main HEAD\n")}, want: &hookErr},
		{name: "pre-push takes at most REMOTE and URL", run: (*Workspace).PrePush, in: HookInput{Args: []string{"a", "b", "c"}}, want: &usage},
		{name: "pre-receive takes no arguments", run: (*Workspace).PreReceive, in: HookInput{Args: []string{"x"}}, want: &usage},
		{name: "pre-receive refuses a pusher id git would not print", run: (*Workspace).PreReceive,
			in: HookInput{Getenv: env("GL_USERNAME=bad\x01id")}, want: &hookErr},
		{name: "pre-receive cannot judge a malformed ref line", run: (*Workspace).PreReceive,
			in: HookInput{Stdin: strings.NewReader("0 1 refs/heads/main\n")}, want: &hookErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testRepo(t, tc.config)
			for _, p := range tc.stage {
				r.Write(p, "package src // changed\n")
				r.Git("add", p)
			}
			r.Write("MSG", "a change\n")
			in := tc.in
			for i, a := range in.Args {
				if a == "MSG" || a == "missing" {
					in.Args[i] = filepath.Join(r.Dir, a)
				}
			}
			if in.Getenv == nil {
				in.Getenv = env()
			}
			rep, err := tc.run(load(t, r, "alice"), context.Background(), in)
			wantOutcome(t, rep, err, tc.rules, tc.want)
		})
	}
}

func TestBypassHook(t *testing.T) {
	for _, tc := range []struct {
		name, hook, skip string
		want             session.Bypass
		recorded         int
	}{
		{name: "not asked", hook: "pre-commit"},
		{name: "skipped and recorded", hook: "pre-commit", skip: "yes", want: session.Bypass{Skipped: true}, recorded: 1},
		{name: "an invalid value runs the checks", hook: "pre-push", skip: "maybe", want: session.Bypass{Invalid: "maybe"}},
		{name: "the server never honours it", hook: "pre-receive", skip: "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testRepo(t, "")
			opts := Options{Dir: r.Dir, As: "alice", Getenv: env("LOCKGATE_SKIP=" + tc.skip)}
			e := load(t, r, "alice")
			for _, ws := range []*session.Workspace{e.Workspace, nil} { // nil: the config could not be read
				if got := session.BypassHook(context.Background(), ws, opts, tc.hook); got != tc.want {
					t.Fatalf("BypassHook(%v) = %+v, want %+v", ws != nil, got, tc.want)
				}
			}
			evs, err := e.JournalFile().Read(time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, ev := range evs {
				if ev.Action == journal.ActionHookBypass && ev.Worker == "alice" {
					n++
				}
			}
			if n != 2*tc.recorded {
				t.Fatalf("%d bypasses recorded, want %d", n, 2*tc.recorded)
			}
		})
	}
	t.Run("unrecordable", func(t *testing.T) {
		opts := Options{Dir: t.TempDir(), Getenv: env("LOCKGATE_SKIP=1")}
		if got := session.BypassHook(context.Background(), nil, opts, "pre-commit"); got.Skipped || got.Unrecorded == nil {
			t.Fatalf("outside a repository: %+v, want not honoured", got)
		}
	})
}

func TestCheck(t *testing.T) {
	var usage *UsageError
	patch := func(path string) string {
		return "diff --git a/" + path + " b/" + path + "\n--- a/" + path + "\n+++ b/" + path + "\n@@ -1 +1 @@\n-package src\n+package src // changed\n"
	}
	for _, tc := range []struct {
		name  string
		stage []string
		req   ChangeRequest
		rules []string
		want  any
	}{
		{name: "the staged change passes", stage: []string{freePath}},
		{name: "the staged change is refused", stage: []string{lockedPath}, rules: []string{"locked"}},
		{name: "nothing staged is invalid input", want: &usage},
		{name: "nothing staged, allowed", req: ChangeRequest{AllowEmpty: true}},
		{name: "a patch passes", req: ChangeRequest{Patch: "-", Stdin: strings.NewReader(patch(freePath))}},
		{name: "a patch is refused", req: ChangeRequest{Patch: "-", Stdin: strings.NewReader(patch(lockedPath))}, rules: []string{"locked"}},
		{name: "an empty patch is invalid input", req: ChangeRequest{Patch: "-"}, want: &usage},
		{name: "a missing patch file is invalid input", req: ChangeRequest{Patch: "no-such.diff"}, want: &usage},
		{name: "text that is no diff is invalid input", req: ChangeRequest{Patch: "-", Stdin: strings.NewReader("diff --git a\n")}, want: &usage},
		{name: "a range that is an option is invalid input", req: ChangeRequest{Range: "--all"}, want: &usage},
		{name: "a range git cannot resolve is invalid input", req: ChangeRequest{Range: "nope..HEAD"}, want: &usage},
		{name: "a range of no change is invalid input", req: ChangeRequest{Range: "HEAD..HEAD"}, want: &usage},
		{name: "a range passes", req: ChangeRequest{Range: "HEAD~1..HEAD"}},
		{name: "record-cooldown needs a backfill profile", req: ChangeRequest{RecordCooldown: true}, want: &usage},
		{name: "task-type needs record-cooldown", req: ChangeRequest{TaskType: "x"}, want: &usage},
		{name: "an unknown profile is invalid input", stage: []string{freePath}, req: ChangeRequest{Profile: "nope"}, want: &usage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testRepo(t, "")
			r.Write("other.go", "package other\n")
			r.Commit("second")
			for _, p := range tc.stage {
				r.Write(p, "package src // changed\n")
				r.Git("add", p)
			}
			res, err := load(t, r, "alice").CheckChange(context.Background(), tc.req)
			var rep *Report
			if res != nil {
				rep = res.Report
			}
			wantOutcome(t, rep, err, tc.rules, tc.want)
		})
	}
}

func TestVerify(t *testing.T) {
	var usage *UsageError
	var missing *verify.LogMissingError
	for _, tc := range []struct {
		name  string
		stage bool
		noLog bool // no lock event is recorded anywhere
		// locked: the staged change is to the path another holds.
		locked bool
		// soon: verified within verify's margin of the lock log's first
		// event, so the staged change cannot be judged.
		soon  bool
		req   verify.Request
		rules []string
		want  any
	}{
		{name: "staged and a range are one too many", req: verify.Request{Staged: true, Range: "HEAD~1..HEAD"}, want: &usage},
		{name: "nothing staged is invalid input", req: verify.Request{Staged: true}, want: &usage},
		{name: "a range that is an option is invalid input", req: verify.Request{Range: "--all"}, want: &usage},
		{name: "a range of no change is invalid input", req: verify.Request{Range: "HEAD..HEAD"}, want: &usage},
		{name: "a clone without a lock log cannot judge", noLog: true, req: verify.Request{Range: "HEAD~1..HEAD"}, want: &missing},
		{name: "a staged change made under no lock of another passes", stage: true, req: verify.Request{Staged: true}},
		{name: "a staged change under another's lock is refused", stage: true, locked: true, req: verify.Request{Staged: true}, rules: []string{"locked"}},
		{name: "a staged change made as the lock log begins is undecided, not nothing", stage: true, soon: true, req: verify.Request{Staged: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := ""
			if tc.noLog {
				config = "workflow:\n  auto_commit: false\n"
			}
			r := testRepo(t, config)
			if tc.noLog {
				if err := os.Remove(filepath.Join(r.Dir, ".git", "lockgate", "events.jsonl")); err != nil {
					t.Fatal(err)
				}
			}
			r.Write("other.go", "package other\n")
			r.Commit("second")
			if tc.stage {
				p := freePath
				if tc.locked {
					p = lockedPath
				}
				r.Write(p, "package src // changed\n")
				r.Git("add", p)
			}
			// Later than the lock log's first event by more than
			// verify's margin: a change made now can be judged.
			at := now.Add(10 * time.Minute)
			if tc.soon {
				at = now.Add(time.Second)
			}
			rep, err := loadAt(t, r, "alice", at).Verifier().Verify(context.Background(), tc.req)
			if tc.soon {
				if err != nil || rep.OK || len(rep.Undecided) != 1 || rep.Paths != 1 {
					t.Fatalf("report %+v, err %v: want the staged path counted and undecided", rep, err)
				}
				return
			}
			wantOutcome(t, rep, err, tc.rules, tc.want)
		})
	}
}

func TestCheckPaths(t *testing.T) {
	var usage *UsageError
	for _, tc := range []struct {
		name  string
		req   PathCheck
		rules []string
		want  any
	}{
		{name: "a free path may be edited", req: PathCheck{Paths: []string{freePath}}},
		{name: "a path another holds may not", req: PathCheck{Paths: []string{freePath, lockedPath}}, rules: []string{"locked"}},
		{name: "a commit of a path another holds is refused", req: PathCheck{Paths: []string{lockedPath}, Commit: true}, rules: []string{"locked"}},
		{name: "a path outside the worktree is invalid input", req: PathCheck{Paths: []string{"../elsewhere"}}, want: &usage},
		{name: "an unknown profile is invalid input", req: PathCheck{Paths: []string{freePath}, Profile: "nope"}, want: &usage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testRepo(t, "")
			res, err := load(t, r, "alice").CheckPaths(context.Background(), tc.req)
			var rep *Report
			if res != nil {
				rep = res.Report
			}
			wantOutcome(t, rep, err, tc.rules, tc.want)
		})
	}
}

func TestInstallHooks(t *testing.T) {
	var usage *UsageError
	for _, tc := range []struct {
		name      string
		hooksPath string // core.hooksPath, set in the global config
		req       HookInstall
		installed []string
		want      any
	}{
		{name: "the default hooks", installed: []string{"pre-commit", "pre-merge-commit", "commit-msg", "pre-push", "reference-transaction"}},
		{name: "the hooks asked for", req: HookInstall{Hooks: []string{"pre-receive"}}, installed: []string{"pre-receive"}},
		{name: "an unknown hook is invalid input", req: HookInstall{Hooks: []string{"post-applypatch"}}, want: &usage},
		{name: "a global core.hooksPath is refused", hooksPath: "global", want: &usage},
		{name: "a global core.hooksPath, when allowed", hooksPath: "global", req: HookInstall{Hooks: []string{"pre-push"}, GlobalHooksPath: true}, installed: []string{"pre-push"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testRepo(t, "")
			if tc.hooksPath != "" {
				global := filepath.Join(t.TempDir(), "gitconfig")
				dir := filepath.Join(t.TempDir(), "hooks")
				if err := os.WriteFile(global, []byte("[core]\n\thooksPath = "+dir+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Setenv("GIT_CONFIG_GLOBAL", global)
			}
			e := load(t, r, "alice")
			tc.req.Command = "/usr/bin/lockgate"
			res, err := e.InstallHooks(context.Background(), tc.req)
			if tc.want != nil {
				wantOutcome(t, nil, err, nil, tc.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range res {
				got = append(got, h.Hook)
				if !strings.Contains(readFile(t, h.Path), "/usr/bin/lockgate") {
					t.Errorf("%s does not run lockgate", h.Path)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.installed, ",") {
				t.Fatalf("installed %v, want %v", got, tc.installed)
			}
			removed, err := e.UninstallHooks(context.Background(), tc.req)
			if err != nil || len(removed) != len(got) {
				t.Fatalf("uninstall: %v, %v", removed, err)
			}
			for _, h := range res {
				if _, err := os.Stat(h.Path); err == nil {
					t.Errorf("%s is still there", h.Path)
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPreReceivePusher: a server judges a pushed commit without trailers
// as the pusher hooks.identity_env names.
func TestPreReceivePusher(t *testing.T) {
	for _, tc := range []struct {
		name, pusher string
		rules        []string
	}{
		{name: "the lock's holder may push its path", pusher: "bob"},
		{name: "another may not", pusher: "carol", rules: []string{"locked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := testRepo(t, "")
			old := r.Git("rev-parse", "HEAD")
			r.Write(lockedPath, "package src // changed\n")
			r.Git("add", lockedPath)
			// A commit on no ref yet, as a push brings it.
			pushed := r.Git("commit-tree", "-p", old, "-m", "change", r.Git("write-tree"))
			in := HookInput{Stdin: strings.NewReader(old + " " + pushed + " refs/heads/main\n"), Getenv: env("GL_USERNAME=" + tc.pusher)}
			rep, err := load(t, r, "alice").PreReceive(context.Background(), in)
			wantOutcome(t, rep, err, tc.rules, nil)
		})
	}
}

// TestCorruptRecordHint: the hint for a lock record that cannot be read
// names the file that holds it when the store keeps records in files.
func TestCorruptRecordHint(t *testing.T) {
	r := testRepo(t, "")
	e := load(t, r, "alice")
	if err := e.Open(context.Background(), Purpose{Judges: true}); err != nil {
		t.Fatal(err)
	}
	where := e.RecordWhere()
	if where == nil {
		t.Fatal("the file store does not say where its records are")
	}
	file := where(lockedPath)
	if err := os.WriteFile(file, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.CheckPaths(context.Background(), PathCheck{Paths: []string{lockedPath}})
	if err != nil {
		t.Fatal(err)
	}
	wantOutcome(t, res.Report, nil, []string{"corrupt_lock"}, nil)
	if h := res.Report.Violations[0].Hint; !strings.Contains(h, file) {
		t.Fatalf("hint %q does not name %s", h, file)
	}
}
