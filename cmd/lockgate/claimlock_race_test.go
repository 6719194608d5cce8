package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestRaceQueueNoClaimLock: with locks.use_global_claim_lock off (the
// default), 9 claimer processes drain a queue of packages that share
// files, each claiming the next package with no lock around the choice:
// on the git store in 3 clones of one remote, on the file store in 3
// worktrees of one clone, on Redis in 3 clones. What keeps them apart is
// the claim itself — on the git store the task key and the package's
// files in one compare-and-swap push, elsewhere the keys taken in one
// order, all or none: each package goes to one claimer at a time and is
// done exactly once, no two claimers ever hold packages locking one file
// at once, a claim that loses a race says that nothing is free (exit 4)
// and never fails otherwise, and the log tells the same story.
func TestRaceQueueNoClaimLock(t *testing.T) {
	t.Parallel()
	lockgateBinary(t)
	for _, store := range []string{"git", "file", "redis"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			const claimers, clones = 9, 3
			m := gittest.Rounds(t, 30)
			seed := uint64(time.Now().UnixNano())
			t.Logf("%s store, no claim lock: %d claimers in %d clones, %d packages, seed %d", store, claimers, clones, m, seed)
			file, files, deps := sharedFileQueue(rand.New(rand.NewPCG(seed, 0)), m)
			r := newQueueRigWith(t, store, clones, file, "")
			r.files, r.noneFree = files, true
			h := r.drain(claimers, seed, 5)
			for site := range r.sites {
				q := r.packages(site)
				if !q.Drained || q.Counts["done"] != m || len(q.Packages) != m {
					t.Fatalf("site %d: the queue is not drained: %+v", site, q)
				}
			}
			h.checkDeps(t, h.check(r, m), deps)
		})
	}
}

// sharedFileQueue is m packages, each locking one or two of four files
// (so that most pairs of packages contend), with priorities and
// dependencies on earlier packages; files and deps are each package's.
func sharedFileQueue(rng *rand.Rand, m int) (yaml string, files, deps map[string][]string) {
	var b strings.Builder
	files, deps = map[string][]string{}, map[string][]string{}
	b.WriteString("packages:\n")
	for i := range m {
		id := fmt.Sprintf("WP-%02d", i)
		fmt.Fprintf(&b, "  - id: %s\n    title: package %d\n    priority: %d\n", id, i, rng.IntN(3))
		if i > 0 && rng.IntN(4) == 0 {
			dep := fmt.Sprintf("WP-%02d", rng.IntN(i))
			fmt.Fprintf(&b, "    depends_on: [%s]\n", dep)
			deps[id] = []string{dep}
		}
		fs := []string{fmt.Sprintf("src/f%d.go", rng.IntN(4))}
		if f := fmt.Sprintf("src/f%d.go", rng.IntN(4)); rng.IntN(2) == 0 && f != fs[0] {
			fs = append(fs, f)
		}
		files[id] = fs
		fmt.Fprintf(&b, "    locks:\n      files: [%s]\n      ttl: 10m\n", strings.Join(fs, ", "))
	}
	return b.String(), files, deps
}
