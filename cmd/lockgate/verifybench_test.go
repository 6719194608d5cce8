package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// seedLockLog writes a workflow branch of n events by the git fast-import
// of one commit, in the layout lockgate writes: acquire/release pairs of
// the synthetic files by ten other workers, 20 s each, spread over the
// span from 2,000 s before the first synthetic commit (1700000001) to the
// last of ncommits.
func seedLockLog(b *testing.B, r *gittest.Repo, n, files, ncommits int) {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Unix(1700000001-2000, 0).UTC()
	span := time.Duration(2000+ncommits) * time.Second
	var sb strings.Builder
	w := bufio.NewWriter(&sb)
	fmt.Fprintf(w, "commit refs/heads/lockgate/workflow\ncommitter lockgate <lockgate@localhost> 1700000000 +0000\ndata 8\nhistory\n")
	put := func(ev journal.Event) {
		line, err := json.Marshal(ev)
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256([]byte(ev.ID))
		h := hex.EncodeToString(sum[:])
		fmt.Fprintf(w, "M 100644 inline events/%s/%s/%s.json\ndata %d\n%s\n", h[:2], h[2:4], ev.ID, len(line)+1, line)
	}
	for i := range n / 2 {
		at := start.Add(time.Duration(int64(span) * int64(i) / int64(n/2)))
		key := gittest.SyntheticPath(rng.IntN(files))
		who := fmt.Sprintf("other-%d", i%10)
		exp := at.Add(time.Hour)
		fence := uint64(i + 1)
		put(journal.Event{ID: fmt.Sprintf("%016x%016x", at.UnixNano(), 2*i), Timestamp: at, Worker: who, WorkerType: "agent",
			Session: who, Action: journal.ActionAcquire, Key: key, Fence: fence, ExpiresAt: &exp})
		rel := at.Add(20 * time.Second)
		put(journal.Event{ID: fmt.Sprintf("%016x%016x", rel.UnixNano(), 2*i+1), Timestamp: rel, Worker: who, WorkerType: "agent",
			Session: who, Action: journal.ActionRelease, Key: key, Fence: fence})
	}
	w.Flush()
	r.FastImport(sb.String())
	r.Git("repack", "-adq")
}

// BenchmarkVerify: `lockgate verify` of 1,000 commits × 10 paths in a
// 100,000-file repository, against a lock log of 100,000 events on the
// workflow branch, timed against `git log --name-status -z` over the same
// range. "lockgate" reads the log as a clone does after its first verify;
// "lockgate-cold" with no cache (a fresh clone).
func BenchmarkVerify(b *testing.B) {
	bin := lockgateBinary(b)
	r := gittest.New(b)
	r.Synthetic(100000)
	base := r.Git("rev-parse", "main")
	tip := r.SyntheticCommits("topic", 1000, 10, 100000)
	seedLockLog(b, r, 100000, 100000, 1000)
	env := append(append([]string(nil), r.Env...), "LOCKGATE_WORKER=bench")
	rng := base + ".." + tip
	cache := filepath.Join(r.Dir, ".git", "lockgate", "cache")
	tools := []tool{
		{name: "lockgate", cmd: []string{bin, "verify", "--range", rng}, ok: []int{1}},
		{name: "lockgate-cold", cmd: []string{bin, "verify", "--range", rng}, ok: []int{1},
			before: func() {
				if err := os.RemoveAll(cache); err != nil {
					b.Fatal(err)
				}
			}},
	}
	measure(b, r.Dir, env, "", gitFloor(b, r.Dir, env, "log", "--name-status", "-z", rng), tools)
}
