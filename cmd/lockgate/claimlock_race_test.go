package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
)

// TestRaceQueueNoClaimLock: on the git store with
// locks.use_global_claim_lock off, 9 claimer processes in 3 clones of one
// remote drain a queue of packages that share files, each claiming the
// next package with no lock around the choice. The task record's
// compare-and-swap (the task key and the package's files in one commit of
// the lock table, one push) is all that keeps them apart: each package
// goes to one claimer at a time and is done exactly once, no two
// claimers ever hold packages locking one file at once, and the log
// tells the same story.
func TestRaceQueueNoClaimLock(t *testing.T) {
	t.Parallel()
	lockgateBinary(t)
	const claimers, clones = 9, 3
	m := gittest.Rounds(t, 30)
	seed := uint64(time.Now().UnixNano())
	t.Logf("git store, no claim lock: %d claimers in %d clones, %d packages, seed %d", claimers, clones, m, seed)
	file, files, deps := sharedFileQueue(rand.New(rand.NewPCG(seed, 0)), m)
	r := newQueueRigWith(t, "git", clones, file, "use_global_claim_lock: false")
	r.files = files
	h := r.drain(claimers, seed, 5)
	for site := range r.sites {
		q := r.packages(site)
		if !q.Drained || q.Counts["done"] != m || len(q.Packages) != m {
			t.Fatalf("site %d: the queue is not drained: %+v", site, q)
		}
	}
	h.checkDeps(t, h.check(r, m), deps)
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
