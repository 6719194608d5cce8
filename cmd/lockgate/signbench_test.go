package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// signingKey makes an SSH key for bench and the allowed signers line of
// worker with it.
func signingKey(b *testing.B, worker string) (key, signers string) {
	b.Helper()
	key = filepath.Join(b.TempDir(), "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", worker, "-f", key).CombinedOutput(); err != nil {
		b.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(pub))
	return key, worker + " " + f[0] + " " + f[1] + "\n"
}

// signedClone is gitStoreClone with the policy's workflow.signed and the
// clone set to sign with key, listed in the committed allowed signers.
func signedClone(b *testing.B, url, policy, key, signers string) (*gittest.Repo, []string) {
	r := gittest.New(b)
	r.Write(".lockgate.yaml", policy)
	r.Write(".lockgate/allowed_signers", signers)
	r.Write("README.md", "x\n")
	r.Commit("init")
	if url != "" {
		r.Git("remote", "add", "origin", url)
	}
	if key != "" {
		r.Git("config", "gpg.format", "ssh")
		r.Git("config", "user.signingkey", key)
		r.Git("config", "commit.gpgsign", "true")
	}
	return r, append(r.Env, "LOCKGATE_WORKER=bench", "LOCKGATE_WORKER_TYPE=agent")
}

// BenchmarkSignedAcquire: an uncontended `lockgate lock acquire` on the
// git store with its event committed to the workflow branch, with
// workflow.signed: required (the lock table's state and the event's
// commit signed with an SSH key) against the same without signatures,
// alternately, as p50s and their ratio.
func BenchmarkSignedAcquire(b *testing.B) {
	bin := lockgateBinary(b)
	key, signers := signingKey(b, "bench")
	plain, plainEnv := signedClone(b, gitStoreRemotes(b)["file"], "version: 1\nlocks: {store: git}\nworkflow: {auto_push: false}\n", "", signers)
	signed, signedEnv := signedClone(b, gitStoreRemotes(b)["file"], "version: 1\nlocks: {store: git}\nworkflow: {auto_push: false, signed: required}\n", key, signers)
	var off, on []time.Duration
	b.ResetTimer()
	for i := range b.N {
		off = append(off, timed(b, plain.Dir, plainEnv, bin, "lock", "acquire", fmt.Sprintf("src/bench/%d.go", i)))
		on = append(on, timed(b, signed.Dir, signedEnv, bin, "lock", "acquire", fmt.Sprintf("src/bench/%d.go", i)))
	}
	b.StopTimer()
	o, s := percentile(off, 0.5), percentile(on, 0.5)
	b.ReportMetric(float64(o.Microseconds())/1000, "unsigned-p50-ms")
	b.ReportMetric(float64(s.Microseconds())/1000, "signed-p50-ms")
	b.ReportMetric(float64(s)/float64(o), "x-unsigned")
}

// BenchmarkVerifySigned: `lockgate verify` of 300 commits, each made by
// the hooks under the committer's lock (trailers, events on the workflow
// branch), with workflow.signed: required (every commit, event commit and
// trailer checked against the allowed signers) against the same history
// unsigned, alternately.
func BenchmarkVerifySigned(b *testing.B) {
	bin := lockgateBinary(b)
	key, signers := signingKey(b, "bench")
	const n = 300
	setup := func(policy, key string) (dir, rng string, env []string) {
		r, env := signedClone(b, "", policy, key, signers)
		base := strings.TrimSpace(r.Git("rev-parse", "HEAD"))
		run := func(args ...string) {
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Env = r.Dir, env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("lockgate %s: %v: %s", strings.Join(args, " "), err, out)
			}
		}
		run("install")
		files := make([]string, n)
		for i := range files {
			files[i] = fmt.Sprintf("src/f%03d.go", i)
		}
		run(append([]string{"lock", "acquire", "--ttl", "2h"}, files...)...)
		now := time.Now().UTC().Format(time.RFC3339)
		cenv := append(append([]string(nil), env...), "GIT_AUTHOR_DATE="+now, "GIT_COMMITTER_DATE="+now)
		for _, f := range files {
			if err := os.MkdirAll(filepath.Join(r.Dir, "src"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(r.Dir, f), []byte(f+"\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			for _, args := range [][]string{{"add", f}, {"commit", "-q", "-m", "change " + f}} {
				cmd := exec.Command("git", args...)
				cmd.Dir, cmd.Env = r.Dir, cenv
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
				}
			}
		}
		return r.Dir, base + "..HEAD", env
	}
	pDir, pRange, pEnv := setup("version: 1\n", "")
	sDir, sRange, sEnv := setup("version: 1\nworkflow: {signed: required}\n", key)
	var off, on []time.Duration
	b.ResetTimer()
	for range b.N {
		off = append(off, timed(b, pDir, pEnv, bin, "verify", "--range", pRange))
		on = append(on, timed(b, sDir, sEnv, bin, "verify", "--range", sRange))
	}
	b.StopTimer()
	o, s := percentile(off, 0.5), percentile(on, 0.5)
	b.ReportMetric(float64(o.Microseconds())/1000, "unsigned-p50-ms")
	b.ReportMetric(float64(s.Microseconds())/1000, "signed-p50-ms")
	b.ReportMetric(float64(s)/float64(o), "x-unsigned")
}
