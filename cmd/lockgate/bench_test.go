package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/filestore"
)

// pair times the baseline (git's own floor) and lockgate alternately, so
// both see the same machine state, and reports both and their ratio.
func pair(b *testing.B, dir string, env []string, baseline []string, lockgate func(i int) []string) {
	bin := lockgateBinary(b)
	run := func(name string, args []string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 4 {
				b.Fatalf("%s %v: %v: %s", name, args, err, out)
			}
		}
		return time.Since(start)
	}
	var floor, ours time.Duration
	b.ResetTimer()
	for i := range b.N {
		floor += run("git", baseline)
		ours += run(bin, lockgate(i))
	}
	b.ReportMetric(float64(floor.Microseconds())/float64(b.N)/1000, "git-ms/op")
	b.ReportMetric(float64(ours.Microseconds())/float64(b.N)/1000, "lockgate-ms/op")
	b.ReportMetric(float64(ours)/float64(floor), "x-git")
}

// seedLocks fills a repository's file store with paths path locks and
// patterns pattern locks held by someone else.
func seedLocks(b *testing.B, r *gittest.Repo, paths, patterns int) {
	s, err := filestore.Open(filepath.Join(r.Dir, ".git", "lockgate", "locks"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m := &locks.Manager{Store: s}
	other := locks.Owner{Holder: "other", HolderType: "agent", Session: "other"}
	ctx := context.Background()
	var keys []string
	for i := range paths {
		keys = append(keys, fmt.Sprintf("src/pkg%03d/file%05d.go", i%100, i))
	}
	for i := range patterns {
		keys = append(keys, fmt.Sprintf("gen/area%03d/**", i))
	}
	for _, k := range keys {
		if _, err := m.Acquire(ctx, locks.Request{Keys: []string{k}, Owner: other, TTL: time.Hour}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRepo(b *testing.B) (*gittest.Repo, []string) {
	r := gittest.New(b)
	r.Write("README.md", "x\n")
	r.Commit("init")
	return r, append(r.Env, "LOCKGATE_WORKER=bench", "LOCKGATE_WORKER_TYPE=agent")
}

// BenchmarkCLIAcquire: `lockgate lock acquire` end to end against
// `git rev-parse --git-common-dir`: the lock and its journal line, with the
// workflow branch off (workflow.auto_commit: false).
func BenchmarkCLIAcquire(b *testing.B) {
	r, env := benchRepo(b)
	r.Write(".lockgate.yaml", "version: 1\nworkflow: {auto_commit: false}\n")
	pair(b, r.Dir, env, []string{"rev-parse", "--git-common-dir"}, func(i int) []string {
		return []string{"lock", "acquire", fmt.Sprintf("src/bench/%d.go", i)}
	})
}

// BenchmarkCLIAcquireAudited: the same with the default config, which also
// commits the event to the workflow branch under the workflow lock.
func BenchmarkCLIAcquireAudited(b *testing.B) {
	r, env := benchRepo(b)
	pair(b, r.Dir, env, []string{"rev-parse", "--git-common-dir"}, func(i int) []string {
		return []string{"lock", "acquire", fmt.Sprintf("src/bench/%d.go", i)}
	})
}

// BenchmarkCLIList10k: `lockgate lock list` with 10,000 live locks.
func BenchmarkCLIList10k(b *testing.B) {
	r, env := benchRepo(b)
	seedLocks(b, r, 10000, 0)
	pair(b, r.Dir, env, []string{"rev-parse", "--git-common-dir"}, func(int) []string {
		return []string{"lock", "list"}
	})
}

// BenchmarkCLICheckPath: `lockgate lock check PATH` with 10,000 path locks
// and 100 pattern locks held by others.
func BenchmarkCLICheckPath(b *testing.B) {
	r, env := benchRepo(b)
	seedLocks(b, r, 10000, 100)
	pair(b, r.Dir, env, []string{"rev-parse", "--git-common-dir"}, func(int) []string {
		return []string{"lock", "check", "src/pkg042/file00042.go"}
	})
}
