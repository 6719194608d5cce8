package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// runTimed runs lockgate (or git) once in dir and returns how long it took;
// ok lists the exit codes that count as a normal run.
func runTimed(b *testing.B, dir string, env []string, stdin string, ok []int, argv ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	start := time.Now()
	err := cmd.Run()
	el := time.Since(start)
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && slices.Contains(ok, ee.ExitCode()):
	default:
		b.Fatalf("%v: %v\n%s", argv, err, errOut.String())
	}
	return el
}

// BenchmarkGuardHarnesses: each harness's guard, given an edit (or a
// shell append) of a free file in its payload, against `lockgate guard
// edit PATH` of the same file (the baseline: the same question without a
// payload to read), alternately, with the bench policy and 10,000 path and
// 100 pattern locks of others.
func BenchmarkGuardHarnesses(b *testing.B) {
	r, env := benchRepo(b)
	r.Write(".lockgate.yaml", benchPolicy())
	seedLocks(b, r, 10000, 100)
	bin := lockgateBinary(b)
	file := filepath.Join(r.Dir, "src/app/free.go")
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	payloads := map[string]string{
		"claude-code": `{"hook_event_name":"PreToolUse","cwd":` + q(r.Dir) + `,"tool_name":"Edit","tool_input":{"file_path":` + q(file) + `,"old_string":"a","new_string":"b"}}`,
		"codex":       `{"hook_event_name":"PreToolUse","cwd":` + q(r.Dir) + `,"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: src/app/free.go\n@@\n-a\n+b\n*** End Patch\n"}}`,
		"codex-shell": `{"hook_event_name":"PreToolUse","cwd":` + q(r.Dir) + `,"tool_name":"Bash","tool_input":{"command":"echo b >> src/app/free.go"}}`,
		"gemini":      `{"hook_event_name":"BeforeTool","cwd":` + q(r.Dir) + `,"tool_name":"write_file","tool_input":{"file_path":"src/app/free.go","content":"b"}}`,
		"opencode":    `{"input":{"tool":"write"},"output":{"args":{"filePath":` + q(file) + `,"content":"b"}},"directory":` + q(r.Dir) + `}`,
		"cursor":      `{"hook_event_name":"preToolUse","workspace_roots":[` + q(r.Dir) + `],"tool_name":"Write","tool_input":{"file_path":` + q(file) + `,"content":"b"}}`,
		"copilot":     `{"cwd":` + q(r.Dir) + `,"toolName":"create","toolArgs":{"path":` + q(file) + `,"file_text":"b"}}`,
		"cline":       `{"hookName":"PreToolUse","workspaceRoots":[` + q(r.Dir) + `],"preToolUse":{"toolName":"write_to_file","parameters":{"path":"src/app/free.go","content":"b"}}}`,
		"goose":       `{"event":"PreToolUse","working_dir":` + q(r.Dir) + `,"tool_name":"developer__write","tool_input":{"path":` + q(file) + `,"content":"b"}}`,
	}
	names := make([]string, 0, len(payloads))
	for n := range payloads {
		names = append(names, n)
	}
	slices.Sort(names)
	base := func() time.Duration { return runTimed(b, r.Dir, env, "", nil, bin, "guard", "edit", "src/app/free.go") }
	guard := func(n string) time.Duration {
		h, _, _ := strings.Cut(n, "-shell")
		return runTimed(b, r.Dir, env, payloads[n], nil, bin, "guard", h)
	}
	base()
	for _, n := range names {
		guard(n)
	}
	var baseTotal time.Duration
	totals := make([]time.Duration, len(names))
	b.ResetTimer()
	for range b.N {
		baseTotal += base()
		for i, n := range names {
			totals[i] += guard(n)
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(baseTotal, b.N), "guard-edit-ms/op")
	for i, n := range names {
		b.ReportMetric(float64(totals[i])/float64(baseTotal), n+"-x")
	}
}

// refTxRepos are two clones of one repository, each with a remote of
// 1,000 branches: one with every hook lockgate install installs, one with
// all of them but reference-transaction.
func refTxRepos(b *testing.B) (with, without, origin *gittest.Repo, env []string) {
	b.Helper()
	origin = gittest.New(b)
	origin.Write("a.txt", "a\n")
	origin.Commit("init")
	var refs strings.Builder
	head := strings.TrimSpace(origin.Git("rev-parse", "HEAD"))
	for i := range 1000 {
		fmt.Fprintf(&refs, "create refs/heads/b%04d %s\n", i, head)
	}
	cmd := exec.Command("git", "update-ref", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = origin.Dir, origin.Env, strings.NewReader(refs.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("update-ref: %v\n%s", err, out)
	}
	clone := func(hooks ...string) *gittest.Repo {
		r := gittest.New(b)
		r.Git("remote", "add", "origin", origin.Dir)
		r.Git("fetch", "-q", "origin", "main")
		r.Git("reset", "-q", "--hard", "origin/main")
		env = append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=bench", "LOCKGATE_WORKER_TYPE=human")
		args := []string{"install"}
		for _, h := range hooks {
			args = append(args, "--hook", h)
		}
		runTimed(b, r.Dir, env, "", nil, append([]string{lockgateBinary(b)}, args...)...)
		return r
	}
	with = clone()
	without = clone("pre-commit", "pre-merge-commit", "commit-msg", "pre-push", "post-checkout", "post-merge", "post-rewrite")
	if _, err := os.Stat(filepath.Join(without.Dir, ".git", "hooks", "reference-transaction")); err == nil {
		b.Fatal("the clone without the hook has it")
	}
	return with, without, origin, env
}

// BenchmarkRefTxCommit: `git commit -qam` of a one-line change through
// lockgate's hooks, with the reference-transaction hook and without it.
// The commit hooks pass and leave the record the reference-transaction
// hook takes: what it adds is a process that reads its stdin and one file.
func BenchmarkRefTxCommit(b *testing.B) {
	with, without, _, env := refTxRepos(b)
	commit := func(r *gittest.Repo, i int) time.Duration {
		r.Write("a.txt", fmt.Sprintf("%d\n", i))
		return runTimed(b, r.Dir, env, "", nil, "git", "commit", "-qam", fmt.Sprintf("c%d", i))
	}
	commit(with, -1)
	commit(without, -1)
	var w, wo time.Duration
	b.ResetTimer()
	for i := range b.N {
		w += commit(with, i)
		wo += commit(without, i)
	}
	b.StopTimer()
	b.ReportMetric(ms(wo, b.N), "without-ms/op")
	b.ReportMetric(ms(w, b.N), "with-ms/op")
	b.ReportMetric(float64(w)/float64(wo), "with-x-without")
}

// BenchmarkRefTxFetch: a `git fetch` that creates 1,000 remote-tracking
// refs (into a namespace of their own each round), with the
// reference-transaction hook, without it, and with a hook that only
// reads its stdin (`cat >/dev/null`): git 2.39 runs the hook for each
// ref a fetch updates, twice, so that any hook at all sets the floor.
// With --atomic, one transaction for all of them.
func BenchmarkRefTxFetch(b *testing.B) {
	with, without, origin, env := refTxRepos(b)
	floor := catHookClone(b, origin)
	for _, atomic := range []bool{false, true} {
		b.Run(fmt.Sprintf("atomic=%v", atomic), func(b *testing.B) {
			fetch := func(r *gittest.Repo, i int) time.Duration {
				args := []string{"-c", "gc.auto=0", "fetch", "-q"}
				if atomic {
					args = append(args, "--atomic")
				}
				args = append(args, "origin", fmt.Sprintf("+refs/heads/*:refs/remotes/a%v-%d/*", atomic, i))
				return runTimed(b, r.Dir, env, "", nil, append([]string{"git"}, args...)...)
			}
			var w, wo, fl time.Duration
			b.ResetTimer()
			for i := range b.N {
				w += fetch(with, i)
				wo += fetch(without, i)
				fl += fetch(floor, i)
			}
			b.StopTimer()
			reportAgainstFloor(b, w, wo, fl)
		})
	}
}

// BenchmarkRefTxFastForward: `git pull --ff-only` of one new commit (a
// fetch, then main moved onto the fetched commit), with the
// reference-transaction hook, without it, and with a hook that only reads
// its stdin. The shim lets the fast-forward through after one rev-list
// finds nothing that a remote-tracking ref lacks; lockgate is not started.
func BenchmarkRefTxFastForward(b *testing.B) {
	with, without, origin, env := refTxRepos(b)
	floor := catHookClone(b, origin)
	pull := func(r *gittest.Repo) time.Duration {
		return runTimed(b, r.Dir, env, "", nil, "git", "-c", "gc.auto=0", "pull", "-q", "--ff-only", "origin", "main")
	}
	var w, wo, fl time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		origin.Write("a.txt", fmt.Sprintf("ff %d\n", i))
		origin.Commit(fmt.Sprintf("ff %d", i))
		b.StartTimer()
		w += pull(with)
		wo += pull(without)
		fl += pull(floor)
	}
	b.StopTimer()
	reportAgainstFloor(b, w, wo, fl)
}

// catHookClone is a clone of origin whose only hook is a
// reference-transaction hook that reads its stdin and nothing else: the
// floor any such hook pays, since git starts it for every transaction.
func catHookClone(b *testing.B, origin *gittest.Repo) *gittest.Repo {
	b.Helper()
	r := gittest.New(b)
	r.Git("remote", "add", "origin", origin.Dir)
	r.Git("fetch", "-q", "origin", "main")
	r.Git("reset", "-q", "--hard", "origin/main")
	hook := filepath.Join(r.Dir, ".git", "hooks", "reference-transaction")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >/dev/null\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	return r
}

// reportAgainstFloor reports the totals of runs with lockgate's hook (w),
// without any hook (wo) and with the cat hook (fl), per op and as ratios.
func reportAgainstFloor(b *testing.B, w, wo, fl time.Duration) {
	b.ReportMetric(ms(wo, b.N), "without-ms/op")
	b.ReportMetric(ms(fl, b.N), "cat-hook-ms/op")
	b.ReportMetric(ms(w, b.N), "with-ms/op")
	b.ReportMetric(float64(w)/float64(wo), "with-x-without")
	b.ReportMetric(float64(w)/float64(fl), "with-x-cat-hook")
}
