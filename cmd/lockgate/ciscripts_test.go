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
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lockgate/lockgate/internal/gittest"
)

// prCheck is the script the GitHub Action and the GitLab template run.
const prCheck = "ci/scripts/pr-check.sh"

// ciRepo is a repository as a CI job sees it: main pushed to origin, a
// lock log on the workflow branch of origin that began before the commits
// (gittest dates them 2026-01-02), alice holding b.txt now, and a policy
// making DESIGN.md a people's file. Branch "pass" changes a.txt, "locked"
// b.txt, "userowned" DESIGN.md.
func ciRepo(t *testing.T) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	origin := filepath.Join(filepath.Dir(r.Dir), "origin.git")
	r.Git("init", "-q", "--bare", "-b", "main", origin)
	r.Git("remote", "add", "origin", origin)
	r.Write("a.txt", "a\n")
	r.Write("b.txt", "b\n")
	r.Write("DESIGN.md", "design\n")
	r.Write(".lockgate.yaml", "version: 1\nscope:\n  user_owned: [DESIGN.md]\n")
	r.Commit("init")
	r.Git("push", "-q", "origin", "main")
	// The lock log begins before the commits: an event a clone pushed then.
	r.Write(".git/lockgate/events.jsonl", `{"id":"00000000000000000000000000000001","timestamp":"2026-01-01T00:00:00Z","worker":"setup@test","worker_type":"human","action":"store_use"}`+"\n")
	alice := []string{"LOCKGATE_WORKER=alice@test", "LOCKGATE_WORKER_TYPE=human"}
	for _, args := range [][]string{{"lock", "acquire", "--ttl", "1h", "b.txt"}, {"workflow", "sync", "--push"}} {
		if code, stderr := runIn(t, r, "", alice, args...); code != 0 {
			t.Fatalf("lockgate %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
	for branch, file := range map[string]string{"pass": "a.txt", "locked": "b.txt", "userowned": "DESIGN.md"} {
		r.Git("checkout", "-q", "-b", branch, "main")
		r.Write(file, "changed\n")
		r.Commit("change " + file)
	}
	// "forged" changes b.txt with hooks off, its trailers naming alice and
	// her lock's fence, as anyone can type them.
	code, out := runCI(t, r, alice, lockgateBinary(t), "--json", "lock", "list")
	m := regexp.MustCompile(`"fence": (\d+)`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("lock list: exit %d, no fence: %s", code, out)
	}
	r.Git("checkout", "-q", "-b", "forged", "main")
	r.Write("b.txt", "forged\n")
	r.Git("add", "b.txt")
	// Dated now, under alice's lock, as a forger would date it.
	now := time.Now().UTC().Format(time.RFC3339)
	forge := exec.Command("git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "change b.txt\n\nLockgate-Worker: alice@test\nLockgate-Worker-Type: human\n"+
		"Lockgate-Session: alice@test\nLockgate-Lock: b.txt fence="+m[1])
	forge.Dir = r.Dir
	forge.Env = append(append([]string(nil), r.Env...), "GIT_AUTHOR_DATE="+now, "GIT_COMMITTER_DATE="+now)
	if out, err := forge.CombinedOutput(); err != nil {
		t.Fatalf("forge a commit: %v: %s", err, out)
	}
	r.Git("checkout", "-q", "main")
	return r
}

// runCI runs a command in r as a CI job would: the built lockgate on PATH,
// judged as the agent "ci". It returns the exit code and stdout+stderr.
func runCI(t *testing.T, r *gittest.Repo, env []string, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = r.Dir
	cmd.Env = append(append([]string(nil), r.Env...),
		"PATH="+filepath.Dir(lockgateBinary(t))+string(os.PathListSeparator)+os.Getenv("PATH"),
		"LOCKGATE_WORKER=ci@test", "LOCKGATE_WORKER_TYPE=agent")
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("run %s: %v", name, err)
	return -1, ""
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestCIScriptsPRCheck: the script passes a range that touches only free
// paths, and refuses, with a workflow annotation, one that touches a path
// another worker holds or one out of the agent's scope; without a base it
// is a usage error.
func TestCIScriptsPRCheck(t *testing.T) {
	t.Parallel()
	r := ciRepo(t)
	script := filepath.Join(repoRoot(t), prCheck)

	if code, out := runCI(t, r, nil, script, "main", "pass"); code != 0 {
		t.Fatalf("pass: exit %d, want 0:\n%s", code, out)
	}
	code, out := runCI(t, r, nil, script, "main", "locked")
	if code != 1 {
		t.Fatalf("locked: exit %d, want 1:\n%s", code, out)
	}
	if !strings.Contains(out, "::error file=b.txt,") {
		t.Fatalf("locked: no ::error annotation for b.txt:\n%s", out)
	}
	code, out = runCI(t, r, nil, script, "main", "userowned")
	if code != 1 || !strings.Contains(out, "::error file=DESIGN.md,title=lockgate user_owned::") {
		t.Fatalf("userowned: exit %d, want 1 with a user_owned annotation for DESIGN.md:\n%s", code, out)
	}
	// The range may come from the environment too.
	if code, out := runCI(t, r, []string{"LOCKGATE_BASE=main", "LOCKGATE_HEAD=locked"}, script); code != 1 {
		t.Fatalf("locked from env: exit %d, want 1:\n%s", code, out)
	}
	if code, out := runCI(t, r, nil, script); code != 2 {
		t.Fatalf("no base: exit %d, want 2:\n%s", code, out)
	}
}

// actionFile is the part of action.yml the tests read.
type actionFile struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

// TestCIScriptsAction: action.yml is a composite action with the inputs
// version and range, installs lockgate with go install after setup-go,
// and its check step — run here as GitHub runs it, with the script of
// this checkout — is the tested script's verdict.
func TestCIScriptsAction(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml: runs.using %q, want composite", a.Runs.Using)
	}
	for _, in := range []string{"version", "range"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Fatalf("action.yml: no input %q", in)
		}
	}
	steps := a.Runs.Steps
	if len(steps) != 3 || !strings.HasPrefix(steps[0].Uses, "actions/setup-go@") ||
		!strings.Contains(steps[1].Run, "go install \"github.com/lockgate/lockgate/cmd/lockgate@") ||
		!strings.Contains(steps[2].Run, "$GITHUB_ACTION_PATH/"+prCheck) {
		t.Fatalf("action.yml: want setup-go, go install of cmd/lockgate, then %s; got %+v", prCheck, steps)
	}
	if p := steps[2].Env["LOCKGATE_PUSHER"]; !strings.Contains(p, "github.event.pull_request.user.login") {
		t.Fatalf("action.yml: the check step's LOCKGATE_PUSHER is %q, want the pull request's author", p)
	}

	r := ciRepo(t)
	for _, c := range []struct {
		env  []string
		want int
	}{
		{[]string{"RANGE=main..pass"}, 0},
		{[]string{"RANGE=main..locked"}, 1},
		{[]string{"RANGE=", "PR_BASE=main", "PR_HEAD=locked"}, 1},
		{[]string{"RANGE=", "PR_BASE=", "PR_HEAD="}, 2},
		// Forged trailers pass only when no pusher is known; the
		// action always names one (the pull request's author).
		{[]string{"RANGE=main..forged"}, 0},
		{[]string{"RANGE=main..forged", "LOCKGATE_PUSHER=mal@test"}, 1},
		{[]string{"RANGE=main..forged", "LOCKGATE_PUSHER=alice@test"}, 0},
	} {
		env := append([]string{"GITHUB_ACTION_PATH=" + root}, c.env...)
		if code, out := runCI(t, r, env, "bash", "-e", "-c", steps[2].Run); code != c.want {
			t.Errorf("action step with %v: exit %d, want %d:\n%s", c.env, code, c.want, out)
		}
	}
}

// TestCIScriptsGitLab: the GitLab template runs the tested script on the
// merge request's range, only for merge requests.
func TestCIScriptsGitLab(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "ci", "gitlab", "lockgate.gitlab-ci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var jobs map[string]struct {
		Rules []struct {
			If string `yaml:"if"`
		} `yaml:"rules"`
		Script []string `yaml:"script"`
	}
	if err := yaml.Unmarshal(data, &jobs); err != nil {
		t.Fatalf("lockgate.gitlab-ci.yml: %v", err)
	}
	job, ok := jobs["lockgate"]
	if !ok || len(job.Script) == 0 {
		t.Fatalf("lockgate.gitlab-ci.yml: no lockgate job with a script: %+v", jobs)
	}
	last := job.Script[len(job.Script)-1]
	if !strings.Contains(last, "/"+prCheck+`" "$CI_MERGE_REQUEST_DIFF_BASE_SHA" "$CI_COMMIT_SHA"`) {
		t.Fatalf("lockgate.gitlab-ci.yml: the last command %q does not run %s on the merge request's range", last, prCheck)
	}
	if len(job.Rules) != 1 || !strings.Contains(job.Rules[0].If, `"merge_request_event"`) {
		t.Fatalf("lockgate.gitlab-ci.yml: rules %+v, want merge requests only", job.Rules)
	}
}

// gitDispatcher is a pre-receive hook as Gitea's and GitLab's run extra
// hooks: each executable of pre-receive.d, with the push on stdin.
const gitDispatcher = `#!/bin/sh
data=$(cat)
for h in "$(dirname "$0")"/pre-receive.d/*; do printf '%s\n' "$data" | "$h" || exit $?; done
`

// TestCIScriptsPreReceiveRecipe: the hook file docs/hooks.md writes for a
// forge's pre-receive.d refuses a push that touches what another worker
// holds and lets the holder's through, the pusher named by each forge's
// variable.
func TestCIScriptsPreReceiveRecipe(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "hooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	const write = " > custom_hooks/pre-receive.d/lockgate"
	var recipe string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "printf ") && strings.HasSuffix(line, write) {
			recipe = line
		}
	}
	if recipe == "" {
		t.Fatalf("docs/hooks.md: no line writing the hook file (printf …%s)", write)
	}

	r := gittest.New(t)
	server := filepath.Join(filepath.Dir(r.Dir), "server.git")
	r.Git("init", "-q", "--bare", "-b", "main", server)
	r.Git("remote", "add", "origin", server)
	r.Write("a.txt", "a\n")
	r.Write("b.txt", "b\n")
	r.Commit("init")
	r.Git("push", "-q", "origin", "main")

	hooks := filepath.Join(server, "hooks")
	if err := os.WriteFile(filepath.Join(hooks, "pre-receive"), []byte(gitDispatcher), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out := runCI(t, r, nil, "sh", "-c", "cd "+hooks+" && mkdir -p custom_hooks/pre-receive.d && "+recipe+
		" && chmod +x custom_hooks/pre-receive.d/lockgate && mv custom_hooks/pre-receive.d ."); code != 0 {
		t.Fatalf("the recipe: exit %d: %s", code, out)
	}
	cmd := exec.Command(lockgateBinary(t), "lock", "acquire", "--ttl", "1h", "b.txt")
	cmd.Dir = server
	cmd.Env = append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=alice", "LOCKGATE_WORKER_TYPE=human")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lock acquire on the server: %v: %s", err, out)
	}

	r.Write("b.txt", "changed\n")
	r.Commit("change b.txt")
	for _, forge := range []string{"GITEA_PUSHER_NAME", "GL_USERNAME"} {
		code, out := runCI(t, r, []string{forge + "=carol"}, "git", "push", "origin", "main")
		if code == 0 || !strings.Contains(out, "b.txt: locked: locked by alice") {
			t.Fatalf("%s=carol: exit %d, want a refusal naming alice's lock:\n%s", forge, code, out)
		}
	}
	if code, out := runCI(t, r, []string{"GL_USERNAME=alice"}, "git", "push", "origin", "main"); code != 0 {
		t.Fatalf("GL_USERNAME=alice: exit %d, want 0:\n%s", code, out)
	}
}

// TestCIScriptsReleaseMerged: on a push, the action's step runs
// release-merged.sh in a fresh clone (the git store: the locks live on
// the remote). alice's lock on a.txt stays while her second pull request
// on it is open, and is released, as the CI job, once that lands too.
func TestCIScriptsReleaseMerged(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	step := a.Runs.Steps[len(a.Runs.Steps)-1].Run

	r := gittest.New(t)
	origin := filepath.Join(filepath.Dir(r.Dir), "origin.git")
	r.Git("init", "-q", "--bare", "-b", "main", origin)
	r.Git("remote", "add", "origin", origin)
	r.Write("a.txt", "a\n")
	r.Write(".lockgate.yaml", "version: 1\nlocks: {store: git, release_on_merge: true}\n")
	r.Commit("init")
	r.Git("push", "-q", "origin", "main")
	alice := []string{"LOCKGATE_WORKER=alice@test", "LOCKGATE_WORKER_TYPE=human"}
	if code, out := runIn(t, r, "", alice, "lock", "acquire", "a.txt"); code != 0 {
		t.Fatalf("lock acquire: exit %d: %s", code, out)
	}
	// alice's two pull requests on a.txt, the second on the first, made
	// now (under her lock) with her trailers.
	commit := func(branch, content string) {
		r.Git("checkout", "-q", "-B", branch)
		r.Write("a.txt", content)
		r.Git("add", "a.txt")
		now := time.Now().UTC().Format(time.RFC3339)
		c := exec.Command("git", "commit", "-q", "--no-verify", "-m", branch+"\n\nLockgate-Worker: alice@test\nLockgate-Worker-Type: human\nLockgate-Session: alice@test")
		c.Dir, c.Env = r.Dir, append(append([]string(nil), r.Env...), "GIT_AUTHOR_DATE="+now, "GIT_COMMITTER_DATE="+now)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("commit: %v: %s", err, out)
		}
		r.Git("push", "-q", "origin", branch)
	}
	commit("pr1", "one\n")
	commit("pr2", "two\n")
	ci := filepath.Join(filepath.Dir(r.Dir), "ci")
	r.Git("clone", "-q", origin, ci)
	ciRepo := &gittest.Repo{Dir: ci, Env: r.Env}
	land := func(branch string) (code int, out string) {
		t.Helper()
		before := strings.TrimSpace(r.Git("rev-parse", "main"))
		r.Git("checkout", "-q", "main")
		r.Git("merge", "-q", "--ff-only", branch)
		r.Git("push", "-q", "origin", "main")
		after := strings.TrimSpace(r.Git("rev-parse", "main"))
		cmd := exec.Command("git", "pull", "-q", "--ff-only")
		cmd.Dir, cmd.Env = ci, r.Env
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git pull: %v: %s", err, o)
		}
		return runCI(t, ciRepo, []string{"GITHUB_ACTION_PATH=" + root, "RANGE=", "EVENT=push",
			"PUSH_BEFORE=" + before, "PUSH_AFTER=" + after, "PUSH_BRANCH=main"}, "bash", "-e", "-c", step)
	}
	code, out := land("pr1")
	if code != 0 || !strings.Contains(out, "kept a.txt of alice@test") {
		t.Fatalf("pr1 landed: exit %d, want 0 and a.txt kept (pr2 is open):\n%s", code, out)
	}
	code, out = land("pr2")
	if code != 0 || !strings.Contains(out, "released a.txt of alice@test") {
		t.Fatalf("pr2 landed: exit %d, want 0 and a.txt released:\n%s", code, out)
	}
	if code, out := runCI(t, ciRepo, nil, lockgateBinary(t), "log", "--json", "--action", "lock_release"); code != 0 || !strings.Contains(out, `"worker": "ci@test"`) {
		t.Fatalf("the release is not logged as the CI job's: exit %d:\n%s", code, out)
	}
	if code, out := runIn(t, r, "", alice, "lock", "list"); code != 0 || strings.Contains(out, "a.txt") {
		t.Fatalf("alice's clone still lists the lock: exit %d:\n%s", code, out)
	}
	// A new branch's push names no earlier value: nothing landed.
	code, out = runCI(t, ciRepo, nil, filepath.Join(root, "ci", "scripts", "release-merged.sh"), strings.Repeat("0", 40), "HEAD", "main")
	if code != 0 || !strings.Contains(out, "new branch") {
		t.Fatalf("new branch: exit %d:\n%s", code, out)
	}
}
