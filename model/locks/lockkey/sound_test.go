package lockkey_test

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// TestOverlapSound checks the promise Overlap makes to the lock store on
// many generated patterns: two patterns that match a common path overlap.
func TestOverlapSound(t *testing.T) {
	t.Parallel()
	patSegs := []string{"a", "b", "ab", "*", "**", "a*", "*b", "?", "[ab]", "[!a]", "{a,b}", "{a/b,c}", "{,x/}a", "a[.-0]b", "*[b]", "a**", "**b", "***", "a{b,*}"}
	pathSegs := []string{"a", "b", "ab", "ba", "c", "x", "a/b"}
	rng := rand.New(rand.NewSource(1))
	build := func(segs []string, max int) string {
		n := 1 + rng.Intn(max)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = segs[rng.Intn(len(segs))]
		}
		return strings.Join(parts, "/")
	}
	var pats, paths []string
	for len(pats) < 300 {
		if c, err := lockkey.Canonical(build(patSegs, 4), nil); err == nil {
			pats = append(pats, c)
		}
	}
	for len(paths) < 200 {
		if k, err := lockkey.Parse(build(pathSegs, 4), nil); err == nil && k.Kind == lockkey.KindPath {
			paths = append(paths, k.Canonical)
		}
	}
	matches := make([][]bool, len(pats))
	for i, p := range pats {
		matches[i] = make([]bool, len(paths))
		for j, x := range paths {
			matches[i][j] = lockkey.MatchPath(p, x)
			if matches[i][j] && !lockkey.Overlap(p, x) {
				t.Errorf("MatchPath(%q, %q) but not Overlap", p, x)
			}
		}
	}
	disjoint := 0
	for i := range pats {
		for k := i + 1; k < len(pats); k++ {
			ov := lockkey.Overlap(pats[i], pats[k])
			if ov != lockkey.Overlap(pats[k], pats[i]) {
				t.Fatalf("Overlap(%q, %q) is not symmetric", pats[i], pats[k])
			}
			if ov {
				continue
			}
			disjoint++
			for j, x := range paths {
				if matches[i][j] && matches[k][j] {
					t.Errorf("%q and %q both match %q but Overlap says disjoint", pats[i], pats[k], x)
					break
				}
			}
		}
	}
	// Conservative must not mean useless: many pairs are told apart.
	if pairs := len(pats) * (len(pats) - 1) / 2; disjoint < pairs/4 {
		t.Errorf("only %d of %d pattern pairs found disjoint", disjoint, pairs)
	}
	t.Logf("%d of %d pattern pairs disjoint", disjoint, len(pats)*(len(pats)-1)/2)
}
