package main

import (
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

// gitStoreRemotes makes a bare remote and serves it two ways: as a path
// (file://) and through `git daemon` on 127.0.0.1 (git://).
func gitStoreRemotes(b *testing.B) map[string]string {
	base := b.TempDir()
	env := gittest.Env(b.TempDir())
	bare := filepath.Join(base, "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", bare).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v: %s", err, out)
	}
	cmd, url, err := startGitDaemon(base, env)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stopDaemon(cmd) })
	return map[string]string{"file": bare, "daemon": url + "remote.git"}
}

// gitStoreClone makes a clone whose origin is url, with policy as its
// .lockgate.yaml.
func gitStoreClone(b *testing.B, url, policy string) (*gittest.Repo, []string) {
	r := gittest.New(b)
	r.Write(".lockgate.yaml", policy)
	r.Write("README.md", "x\n")
	r.Commit("init")
	r.Git("remote", "add", "origin", url)
	return r, append(r.Env, "LOCKGATE_WORKER=bench", "LOCKGATE_WORKER_TYPE=agent")
}

// timed runs name args in dir and returns how long it took.
func timed(b *testing.B, dir string, env []string, name string, args ...string) time.Duration {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return time.Since(start)
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// BenchmarkGitStoreAcquire: an uncontended `lockgate lock acquire` on the
// git store (events not committed to the workflow branch) against what it
// cannot do with less — `git fetch` of a ref and `git push` of one small
// commit on it, to the same remote — alternately, as p50s and their ratio.
func BenchmarkGitStoreAcquire(b *testing.B) {
	bin := lockgateBinary(b)
	for _, kind := range []string{"file", "daemon"} {
		b.Run(kind, func(b *testing.B) {
			url := gitStoreRemotes(b)[kind]
			r, env := gitStoreClone(b, url, "version: 1\nlocks: {store: git}\nworkflow: {auto_commit: false}\n")
			baseline := filepath.Join(b.TempDir(), "fetch-push.sh")
			script := `set -e
git fetch -q origin +refs/bench/base:refs/bench/base 2>/dev/null || true
p=$(git rev-parse -q --verify refs/bench/base || true)
c=$(echo "$1" | git commit-tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904 ${p:+-p $p})
git push -q origin "$c:refs/bench/base"
`
			if err := os.WriteFile(baseline, []byte(script), 0o755); err != nil {
				b.Fatal(err)
			}
			var git, ours []time.Duration
			b.ResetTimer()
			for i := range b.N {
				git = append(git, timed(b, r.Dir, env, "sh", baseline, fmt.Sprint(i)))
				ours = append(ours, timed(b, r.Dir, env, bin, "lock", "acquire", fmt.Sprintf("src/bench/%d.go", i)))
			}
			b.StopTimer()
			g, o := percentile(git, 0.5), percentile(ours, 0.5)
			b.ReportMetric(float64(g.Microseconds())/1000, "fetch+push-p50-ms")
			b.ReportMetric(float64(o.Microseconds())/1000, "lockgate-p50-ms")
			b.ReportMetric(float64(o)/float64(g), "x-fetch+push")
		})
	}
}

// BenchmarkGitStorePreCommit: `lockgate hook pre-commit` on the git store
// against the same hook on the file store holding the same 1,000 locks,
// alternately. cached: locks.git.max_age lets the hook use the state it
// saw (no round trip), held to ≤ 1.3× the file store; roundtrip: the hook
// asks the remote (max_age 0), held to the file store's hook plus one
// `git ls-remote` plus 5 ms.
func BenchmarkGitStorePreCommit(b *testing.B) {
	bin := lockgateBinary(b)
	for _, kind := range []string{"file", "daemon"} {
		for _, mode := range []string{"cached", "roundtrip"} {
			b.Run(kind+"/"+mode, func(b *testing.B) {
				url := gitStoreRemotes(b)[kind]
				maxAge := map[string]string{"cached": "1h", "roundtrip": "0s"}[mode]
				gr, env := gitStoreClone(b, url, "version: 1\nworkflow: {auto_commit: false}\nlocks:\n  store: git\n  git: {max_age: "+maxAge+"}\n")
				fr, fenv := gitStoreClone(b, url, "version: 1\nworkflow: {auto_commit: false}\n")
				var keys []string
				for i := range 1000 {
					keys = append(keys, fmt.Sprintf("locked/file%04d.py", i))
				}
				for _, dir := range []string{gr.Dir, fr.Dir} {
					cmd := exec.Command(bin, append([]string{"--as", "other", "lock", "acquire", "--ttl", "24h"}, keys...)...)
					cmd.Dir, cmd.Env = dir, env
					if out, err := cmd.CombinedOutput(); err != nil {
						b.Fatalf("seed: %v: %s", err, out)
					}
				}
				for _, r := range []*gittest.Repo{gr, fr} {
					r.Write("src/a.py", "x\n")
					r.Git("add", "src/a.py")
				}
				timed(b, gr.Dir, env, bin, "hook", "pre-commit") // the cache
				var fileHook, gitHook, lsRemote []time.Duration
				b.ResetTimer()
				for range b.N {
					fileHook = append(fileHook, timed(b, fr.Dir, fenv, bin, "hook", "pre-commit"))
					gitHook = append(gitHook, timed(b, gr.Dir, env, bin, "hook", "pre-commit"))
					if mode == "roundtrip" {
						lsRemote = append(lsRemote, timed(b, gr.Dir, env, "git", "ls-remote", "origin", "refs/lockgate/locks"))
					}
				}
				b.StopTimer()
				f, g := percentile(fileHook, 0.5), percentile(gitHook, 0.5)
				b.ReportMetric(float64(f.Microseconds())/1000, "filestore-p50-ms")
				b.ReportMetric(float64(g.Microseconds())/1000, "gitstore-p50-ms")
				b.ReportMetric(float64(g)/float64(f), "x-filestore")
				if mode == "roundtrip" {
					l := percentile(lsRemote, 0.5)
					b.ReportMetric(float64(l.Microseconds())/1000, "ls-remote-p50-ms")
					b.ReportMetric(float64((g-f-l).Microseconds())/1000, "extra-ms")
				}
			})
		}
	}
}
