package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
)

// benchPolicy is a .lockgate.yaml of 200 patterns, none of which refuses
// the synthetic staged files.
func benchPolicy() string {
	var b strings.Builder
	b.WriteString("version: 1\nscope:\n  user_owned:\n")
	for i := range 40 {
		fmt.Fprintf(&b, "    - docs/owned%02d/**\n", i)
	}
	b.WriteString("  core:\n")
	for i := range 40 {
		fmt.Fprintf(&b, "    - bridge/core%02d.py\n", i)
	}
	b.WriteString("  profiles:\n    backfill:\n      allow:\n")
	for i := range 40 {
		fmt.Fprintf(&b, "        - tests/area%02d/**\n", i)
	}
	b.WriteString("    backfill-bridge:\n      allow:\n")
	for i := range 40 {
		fmt.Fprintf(&b, "        - \"**/*.ext%02d\"\n", i)
	}
	b.WriteString("  key_rules:\n")
	for i := range 40 {
		fmt.Fprintf(&b, "    - {paths: [migrations/set%02d/**], keys: [\"db:migration-slot\"]}\n", i)
	}
	return b.String()
}

// seedOthersLocks holds 9,900 path locks and 100 pattern locks for someone
// else, none covering the staged files.
func seedOthersLocks(b *testing.B, dir string) {
	s, err := filestore.Open(filepath.Join(dir, ".git", "lockgate", "locks"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m := &locks.Manager{Store: s}
	other := locks.Owner{Holder: "other", HolderType: "agent", Session: "other"}
	ctx := context.Background()
	for i := range 10000 {
		key := fmt.Sprintf("locked/dir%03d/file%05d.py", i%300, i)
		if i < 100 {
			key = fmt.Sprintf("locked/area%03d/**", i)
		}
		if _, err := m.Acquire(ctx, locks.Request{Keys: []string{key}, Owner: other, TTL: 24 * time.Hour}); err != nil {
			b.Fatal(err)
		}
	}
}

// tool is one command timed against the git floor.
type tool struct {
	name string
	cmd  []string
	// ok lists exit codes that count as a normal run.
	ok []int
	// before, when set, runs untimed before each run.
	before func()
}

// measure runs the floor and every tool alternately b.N times and reports
// each tool's ms/op, its ratio to the floor, and lockgate's peak RSS.
func measure(b *testing.B, dir string, env []string, stdin string, floor func() time.Duration, tools []tool) {
	run := func(t tool) (time.Duration, int64) {
		cmd := exec.Command(t.cmd[0], t.cmd[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = io.Discard, &out
		if t.before != nil {
			t.before()
		}
		start := time.Now()
		err := cmd.Run()
		el := time.Since(start)
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			b.Fatalf("%s: %v", t.name, err)
		}
		good := code == 0
		for _, c := range t.ok {
			good = good || code == c
		}
		if !good {
			b.Fatalf("%s exited %d: %s", t.name, code, out.String())
		}
		rss := int64(0)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss // KiB on Linux
		}
		return el, rss
	}
	var base time.Duration
	total := make([]time.Duration, len(tools))
	peak := make([]int64, len(tools))
	// One warm-up round: page cache, git's index, lazily built state.
	floor()
	for _, t := range tools {
		run(t)
	}
	b.ResetTimer()
	for range b.N {
		base += floor()
		for i, t := range tools {
			el, rss := run(t)
			total[i] += el
			peak[i] = max(peak[i], rss)
		}
	}
	b.StopTimer()
	b.ReportMetric(ms(base, b.N), "git-ms/op")
	goFloor := -1 // the Go floor among the tools, if any
	for i, t := range tools {
		if t.name == "go-floor" {
			goFloor = i
		}
	}
	for i, t := range tools {
		b.ReportMetric(ms(total[i], b.N), t.name+"-ms/op")
		b.ReportMetric(float64(total[i])/float64(base), t.name+"-x-git")
		if goFloor >= 0 && i != goFloor {
			b.ReportMetric(float64(total[i])/float64(total[goFloor]), t.name+"-x-gofloor")
		}
		if t.name == "lockgate" || t.name == "lockgate-hook" {
			b.ReportMetric(float64(peak[i])/1024, t.name+"-peak-MiB")
		}
	}
}

func ms(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(n) / 1000 }

func gitFloor(b *testing.B, dir string, env []string, args ...string) func() time.Duration {
	return func() time.Duration {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdout = io.Discard
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("git %v: %v", args, err)
		}
		return time.Since(start)
	}
}

// recordTools are other hook runners timed for the record when their
// binaries are given: LOCKGATE_BENCH_LEFTHOOK, LOCKGATE_BENCH_GITLEAKS, and
// the pre-commit tool when on PATH.
func recordTools(b *testing.B, r *gittest.Repo, env []string) []tool {
	var out []tool
	if lh := os.Getenv("LOCKGATE_BENCH_LEFTHOOK"); lh != "" {
		r.Write("lefthook.yml", "pre-commit:\n  commands:\n    noop:\n      run: \"true\"\n")
		out = append(out, tool{name: "lefthook", cmd: []string{lh, "run", "pre-commit"}})
	}
	if pc, err := exec.LookPath("pre-commit"); err == nil && os.Getenv("LOCKGATE_BENCH_PRECOMMIT") == "1" {
		r.Write(".pre-commit-config.yaml", "repos:\n  - repo: local\n    hooks:\n      - id: noop\n        name: noop\n        entry: \"true\"\n        language: system\n        pass_filenames: false\n        always_run: true\n")
		r.Git("add", ".pre-commit-config.yaml", "lefthook.yml")
		r.Git("commit", "-q", "--no-verify", "-m", "hook runner configs")
		out = append(out, tool{name: "pre-commit-tool", cmd: []string{pc, "run", "--hook-stage", "commit"}})
	}
	if gl := os.Getenv("LOCKGATE_BENCH_GITLEAKS"); gl != "" {
		out = append(out, tool{name: "gitleaks", cmd: []string{gl, "git", "--pre-commit", "--staged", "--no-banner", "--log-level", "error"}})
	}
	return out
}

// BenchmarkHookPreCommit: `lockgate hook pre-commit` and the hook binary's
// `lockgate-hook pre-commit` against `git diff --cached --name-status -z
// -M` and against a Go program that only runs it (go-floor), on the same
// repository state, on
// synthetic repositories of 1,000 and 100,000 files with 1 and 1,000
// staged changes, 200 policy patterns and 10,000 locks held by others.
func BenchmarkHookPreCommit(b *testing.B) {
	bin, floor := lockgateBinary(b), gitFloorBinary(b)
	for _, files := range []int{1000, 100000} {
		r := gittest.New(b)
		r.Synthetic(files)
		r.Write(".lockgate.yaml", benchPolicy())
		r.Git("add", ".lockgate.yaml")
		r.Git("commit", "-q", "--no-verify", "-m", "policy")
		seedOthersLocks(b, r.Dir)
		env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=bench", "LOCKGATE_WORKER_TYPE=agent", "PRE_COMMIT_HOME="+filepath.Join(b.TempDir(), "pc"))
		extra := recordTools(b, r, env)
		for _, staged := range []int{1, 1000} {
			b.Run(fmt.Sprintf("files=%d/staged=%d", files, staged), func(b *testing.B) {
				r.Stage(staged)
				tools := append([]tool{{name: "lockgate", cmd: []string{bin, "hook", "pre-commit"}}, {name: "lockgate-hook", cmd: []string{hookBinary(b), "pre-commit"}},
					{name: "go-floor", cmd: []string{floor}}}, extra...)
				measure(b, r.Dir, env, "", gitFloor(b, r.Dir, env, "diff", "--cached", "--name-status", "-z", "-M"), tools)
			})
		}
	}
}

// BenchmarkHookPreCommitBaseline: this tree's `lockgate hook pre-commit`
// against an earlier build's, the binary LOCKGATE_BENCH_BASELINE names
// (without it, against a copy of itself: the ratios' spread is then the
// measurement's own noise), on one state: the 1,000-file repository, the
// 200-pattern policy, 10,000 locks of another worker and one staged file,
// each binary on its own copy of it: the two keep their decoded configs
// under one name, so on a shared clone each run would parse the policy
// again and rewrite the other's. Each iteration runs both, one after the
// other, the one that goes first alternating; the figures are the medians
// of the pairs' ratios (this tree's over the baseline's) of wall and of
// CPU time, which stay comparable while a shared machine's speed drifts,
// and the wall ratio's quartiles. Cases: a change that passes, LOCKGATE_SKIP=1, and a refusal
// (the staged file is held by the other worker).
func BenchmarkHookPreCommitBaseline(b *testing.B) {
	baseline := os.Getenv("LOCKGATE_BENCH_BASELINE")
	if baseline == "" {
		baseline = lockgateBinary(b)
	}
	// Both run from copies written the same way: here a binary as the
	// linker left it ran 7-20 % slower than a byte-identical copy.
	dir := b.TempDir()
	bin, base := copyBinary(b, lockgateBinary(b), filepath.Join(dir, "lockgate")), copyBinary(b, baseline, filepath.Join(dir, "baseline"))
	r := gittest.New(b)
	r.Synthetic(1000)
	r.Write(".lockgate.yaml", benchPolicy())
	r.Git("add", ".lockgate.yaml")
	r.Git("commit", "-q", "--no-verify", "-m", "policy")
	seedOthersLocks(b, r.Dir)
	env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=bench", "LOCKGATE_WORKER_TYPE=agent")
	for _, c := range []struct {
		name string
		env  []string
		// stage makes the staged change; code is the hook's exit code.
		stage func()
		code  int
	}{
		{"pass", env, func() { r.Stage(1) }, 0},
		{"skip", slices.Concat(env, []string{"LOCKGATE_SKIP=1"}), func() { r.Stage(1) }, 0},
		{"refuse", env, func() {
			r.Stage(0)
			held := "locked/dir000/file00300.py" // seedOthersLocks holds it
			r.Write(held, "change\n")
			r.Git("add", held)
		}, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			c.stage()
			clone := filepath.Join(b.TempDir(), "clone")
			if out, err := exec.Command("cp", "-a", r.Dir, clone).CombinedOutput(); err != nil {
				b.Fatalf("cp -a: %v: %s", err, out)
			}
			dirs := map[string]string{bin: r.Dir, base: clone}
			run := func(path string) (wall, cpu time.Duration) {
				cmd := exec.Command(path, "hook", "pre-commit")
				cmd.Dir, cmd.Env, cmd.Stdout = dirs[path], c.env, io.Discard
				var out strings.Builder
				cmd.Stderr = &out
				start := time.Now()
				err := cmd.Run()
				wall = time.Since(start)
				if cmd.ProcessState == nil {
					b.Fatalf("%s hook pre-commit: %v", path, err)
				}
				if code := cmd.ProcessState.ExitCode(); code != c.code {
					b.Fatalf("%s hook pre-commit: exit %d, want %d (%v): %s", path, code, c.code, err, out.String())
				}
				return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			}
			run(bin) // warm-up: page cache, the decoded-config cache
			run(base)
			walls, cpus := make([]float64, 0, b.N), make([]float64, 0, b.N)
			var binWall, baseWall []time.Duration
			b.ResetTimer()
			for i := range b.N {
				var w, wb, u, ub time.Duration
				if i%2 == 0 {
					w, u = run(bin)
					wb, ub = run(base)
				} else {
					wb, ub = run(base)
					w, u = run(bin)
				}
				binWall, baseWall = append(binWall, w), append(baseWall, wb)
				walls = append(walls, float64(w)/float64(wb))
				if ub > 0 { // where CPU time is counted in clock ticks, a short run reads 0
					cpus = append(cpus, float64(u)/float64(ub))
				}
			}
			b.StopTimer()
			b.ReportMetric(quantile(walls, 0.5), "wall-x-baseline")
			b.ReportMetric(quantile(walls, 0.25), "wall-x-q1")
			b.ReportMetric(quantile(walls, 0.75), "wall-x-q3")
			b.ReportMetric(quantile(cpus, 0.5), "cpu-x-baseline")
			b.ReportMetric(medianMs(binWall), "lockgate-ms")
			b.ReportMetric(medianMs(baseWall), "baseline-ms")
		})
	}
}

// copyBinary copies the executable src to dst.
func copyBinary(b *testing.B, src, dst string) string {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	return dst
}

// quantile is the q-quantile of xs (nearest rank), 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[int(q*float64(len(s)-1)+0.5)]
}

// medianMs is the median of ds in milliseconds.
func medianMs(ds []time.Duration) float64 {
	ms := make([]float64, len(ds))
	for i, d := range ds {
		ms[i] = float64(d.Microseconds()) / 1000
	}
	return quantile(ms, 0.5)
}

// BenchmarkHookPrePush: `lockgate hook pre-push` for a push of 1,000 new
// commits in the 100,000-file repository against
// `git rev-list … | git diff-tree --stdin -r -z --name-status -M`.
func BenchmarkHookPrePush(b *testing.B) {
	bin := lockgateBinary(b)
	r := gittest.New(b)
	r.Synthetic(100000)
	base := r.Git("rev-parse", "main")
	tip := r.SyntheticCommits("topic", 1000, 3, 100000)
	r.Git("update-ref", "refs/remotes/origin/main", base)
	seedOthersLocks(b, r.Dir)
	env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=bench")
	floor := judgedFloor(b, r.Dir, env, base, tip)
	stdin := fmt.Sprintf("refs/heads/topic %s refs/heads/topic %s\n", tip, base)
	measure(b, r.Dir, env, stdin, floor, []tool{{name: "lockgate", cmd: []string{bin, "hook", "pre-push", "origin", "../remote.git"}}})
}

// BenchmarkHookCommitMsg: `lockgate hook commit-msg` with require_task and
// 10,000 locks held by others; the target is an absolute 5 ms.
func BenchmarkHookCommitMsg(b *testing.B) {
	bin := lockgateBinary(b)
	r := gittest.New(b)
	r.Write(".lockgate.yaml", "version: 1\nhooks:\n  commit_msg: {require_task: true}\n")
	r.Commit("init")
	seedOthersLocks(b, r.Dir)
	env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=bench")
	cmd := exec.Command(bin, "lock", "acquire", "task:TASK-1")
	cmd.Dir, cmd.Env = r.Dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	msg := filepath.Join(b.TempDir(), "MSG")
	if err := os.WriteFile(msg, []byte("TASK-1: change\n\nTask: TASK-1\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	// As in a commit, pre-commit runs first and leaves commit-msg the
	// locks its trailers name (see BenchmarkHookCommitMsgTrailers).
	cmd = exec.Command(bin, "hook", "pre-commit")
	cmd.Dir, cmd.Env = r.Dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	measure(b, r.Dir, env, "", gitFloor(b, r.Dir, env, "rev-parse", "--git-common-dir"),
		[]tool{{name: "lockgate", cmd: []string{bin, "hook", "commit-msg", msg}}})
}

// BenchmarkHookCommitMsgTrailers: `lockgate hook commit-msg` with 10,000
// locks held by others and two of the committer's covering the staged
// change: without trailers (hooks.trailers: false), with them from
// pre-commit's record, and with them read anew (no record: a second
// `git diff --cached`). Each run starts from the message as the user wrote
// it, so the trailers are written every time.
func BenchmarkHookCommitMsgTrailers(b *testing.B) {
	bin := lockgateBinary(b)
	r := gittest.New(b)
	r.Write(".lockgate.yaml", "version: 1\n")
	r.Commit("init")
	seedOthersLocks(b, r.Dir)
	env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=bench")
	run := lockgateIn(b, bin, r.Dir, env)
	run("lock", "acquire", "a.txt", "src/api/**")
	r.Write("a.txt", "a\n")
	r.Write("src/api/h.go", "package api\n")
	r.Git("add", "a.txt", "src/api/h.go")
	dir := b.TempDir()
	msg, orig := filepath.Join(dir, "MSG"), "Change the API\n\nSigned-off-by: B <b@example.com>\n"
	reset := func() {
		if err := os.WriteFile(msg, []byte(orig), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	record := filepath.Join(r.Dir, ".git", "lockgate", "staged-locks")
	cases := []struct {
		name, config string
		before       func()
	}{
		{"trailers=off", "version: 1\nhooks: {trailers: false}\n", reset},
		{"trailers=record", "version: 1\n", reset},
		{"trailers=no-record", "version: 1\n", func() { _ = os.Remove(record); reset() }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r.Write(".lockgate.yaml", c.config)
			run("hook", "pre-commit")
			reset()
			run("hook", "commit-msg", msg)
			if data, _ := os.ReadFile(msg); strings.Contains(string(data), "Lockgate-Lock: src/api/** fence=") != (c.name != "trailers=off") {
				b.Fatalf("%s: message after commit-msg:\n%s", c.name, data)
			}
			measure(b, r.Dir, env, "", gitFloor(b, r.Dir, env, "rev-parse", "--git-common-dir"),
				[]tool{{name: "lockgate", cmd: []string{bin, "hook", "commit-msg", msg}, before: c.before}})
		})
	}
}

// gitFloorBinary builds testdata/gitfloor as lockgate is built: a Go
// program that only runs the floor's git command, the least any hook
// written in Go costs.
func gitFloorBinary(b *testing.B) string { return floorBinary(b, "gitfloor") }

// readFloorBinary builds testdata/readfloor as lockgate is built: a Go
// program that only reads its stdin (and the file it is given), the least
// a hook that answers from what git gives it costs.
func readFloorBinary(b *testing.B) string { return floorBinary(b, "readfloor") }

// floorBinary builds testdata/NAME as lockgate is built (static,
// -trimpath -ldflags='-s -w').
func floorBinary(b *testing.B, name string) string {
	bin := filepath.Join(b.TempDir(), name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./testdata/"+name)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v: %s", name, err, out)
	}
	return bin
}

// BenchmarkHookBinary: the hooks the hook binary runs besides pre-commit
// (BenchmarkHookPreCommit) — `commit-msg` with require_task after
// pre-commit (as in a commit: it leaves commit-msg the locks its trailers
// name), `pre-push` of 1 and of 100 new commits, and
// `reference-transaction` for a branch gaining a commit no commit hook
// judged — each as `lockgate-hook NAME` and as `lockgate hook NAME`,
// against a Go program that only reads what git gives the hook (go-floor:
// testdata/readfloor) and against the git work the hook cannot do without
// (git: `git rev-parse --git-common-dir` for commit-msg; for the others
// `git rev-list NEW --not OLD | git diff-tree --stdin`, the commits and
// paths they judge), in a 1,000-file repository with 10,000 locks held by
// others.
func BenchmarkHookBinary(b *testing.B) {
	bin, hook, floor := lockgateBinary(b), hookBinary(b), readFloorBinary(b)
	r := gittest.New(b)
	r.Synthetic(1000)
	r.Write(".lockgate.yaml", "version: 1\nhooks:\n  commit_msg: {require_task: true}\n")
	r.Git("add", ".lockgate.yaml")
	r.Git("commit", "-q", "--no-verify", "-m", "policy")
	base := r.Git("rev-parse", "main")
	r.Git("update-ref", "refs/remotes/origin/main", base)
	seedOthersLocks(b, r.Dir)
	env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=bench")
	run := lockgateIn(b, bin, r.Dir, env)
	run("lock", "acquire", "task:TASK-1")
	msg := filepath.Join(b.TempDir(), "MSG")
	if err := os.WriteFile(msg, []byte("TASK-1: change\n\nTask: TASK-1\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	one := r.SyntheticCommits("one", 1, 3, 1000)
	hundred := r.SyntheticCommits("hundred", 100, 3, 1000)
	r.Git("checkout", "-q", "main")
	run("hook", "pre-commit")
	judged := func(old, new string) func() time.Duration { return judgedFloor(b, r.Dir, env, old, new) }
	cases := []struct {
		name  string
		args  []string
		stdin string
		git   func() time.Duration
	}{
		{"commit-msg", []string{"commit-msg", msg}, "", gitFloor(b, r.Dir, env, "rev-parse", "--git-common-dir")},
		{"pre-push/commits=1", []string{"pre-push", "origin", "../remote.git"}, fmt.Sprintf("refs/heads/one %s refs/heads/one %s\n", one, base), judged(base, one)},
		{"pre-push/commits=100", []string{"pre-push", "origin", "../remote.git"}, fmt.Sprintf("refs/heads/hundred %s refs/heads/hundred %s\n", hundred, base), judged(base, hundred)},
		{"reference-transaction", []string{"reference-transaction", "prepared"}, fmt.Sprintf("%s %s refs/heads/main\n", base, one), judged(base, one)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			tools := []tool{
				{name: "lockgate", cmd: append([]string{bin, "hook"}, c.args...)},
				{name: "lockgate-hook", cmd: append([]string{hook}, c.args...)},
				{name: "go-floor", cmd: append([]string{floor}, c.args...)},
			}
			measure(b, r.Dir, env, c.stdin, c.git, tools)
		})
	}
}

// judgedFloor is the git work of a hook that judges the commits of new
// that old lacks: `git rev-list NEW --not OLD | git diff-tree --stdin`.
func judgedFloor(b *testing.B, dir string, env []string, old, new string) func() time.Duration {
	return func() time.Duration {
		start := time.Now()
		rl := exec.Command("git", "rev-list", new, "--not", old)
		dt := exec.Command("git", "diff-tree", "--stdin", "-r", "-z", "--name-status", "-M", "--root")
		rl.Dir, dt.Dir, rl.Env, dt.Env = dir, dir, env, env
		pipe, err := rl.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		dt.Stdin, dt.Stdout = pipe, io.Discard
		if err := rl.Start(); err != nil {
			b.Fatal(err)
		}
		if err := dt.Run(); err != nil {
			b.Fatal(err)
		}
		if err := rl.Wait(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
}

// lockgateIn runs bin with args in dir, failing the benchmark on an error.
func lockgateIn(b *testing.B, bin, dir string, env []string) func(args ...string) {
	return func(args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("lockgate %v: %v: %s", args, err, out)
		}
	}
}
