package scope

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/lockgate/lockgate/model/pathmatch"
)

// benchPolicy has 200 path patterns in all, shaped like a real policy:
// literals, dir/**, **/*.ext, **/name, and about one in ten hard patterns
// (braces, ?, a * inside a name).
func benchPolicy() Policy {
	p := Policy{
		Profiles:          map[string]Profile{},
		ProtectedBranches: []string{"main", "release/*"},
	}
	// 10 user-owned
	p.UserOwned = []string{"DESIGN_DOCUMENT.md", "docs/adr/**", "**/OWNERS", "LICENSE", "SECURITY.md"}
	for i := range 5 {
		p.UserOwned = append(p.UserOwned, fmt.Sprintf("docs/policy/p%d.md", i))
	}
	// 30 core
	for i := range 20 {
		p.Core = append(p.Core, fmt.Sprintf("bridge/core%d.py", i))
	}
	for i := range 8 {
		p.Core = append(p.Core, fmt.Sprintf("bridge/pkg%d/**", i))
	}
	p.Core = append(p.Core, "bridge/{loop,sched}_*.py", "DESIGN_DOCUMENT.md")
	// 5 profiles x 20 = 100 allow patterns
	for pr := range 5 {
		var allow []string
		for i := range 12 {
			allow = append(allow, fmt.Sprintf("src/pkg%d/**", pr*12+i))
		}
		allow = append(allow, "tests/**", "docs/**", ".github/**", "**/*.md", "scripts/*.sh", "**/testdata/**", "src/{gen,vendor}/**", "tools/lint?.cfg")
		p.Profiles[fmt.Sprintf("backfill-%d", pr)] = Profile{Allow: allow}
	}
	// 20 key rules x 3 = 60 patterns
	for i := range 20 {
		p.KeyRules = append(p.KeyRules, KeyRule{
			Paths: []string{fmt.Sprintf("migrations/m%d/**", i), fmt.Sprintf("**/schema%d.graphql", i), fmt.Sprintf("db/tables/t%d_*.sql", i)},
			Keys:  []string{fmt.Sprintf("db:schema:t%d", i), "db:migration-slot"},
		})
	}
	return p
}

// benchPaths returns n repo paths, mostly under src/, deterministic, in
// git's order (sorted), as diff --name-status gives them.
func benchPaths(n int) []string {
	out := randomPaths(n)
	slices.Sort(out)
	return out
}

// randomPaths returns n repo paths, mostly under src/, in random order.
func randomPaths(n int) []string {
	r := rand.New(rand.NewPCG(7, 7))
	exts := []string{".go", ".py", ".md", ".sql", ".yaml", ".ts"}
	out := make([]string, n)
	for i := range out {
		switch k := r.IntN(100); {
		case k < 70:
			out[i] = fmt.Sprintf("src/pkg%d/sub%d/file%d%s", r.IntN(80), r.IntN(10), r.IntN(1000), exts[r.IntN(len(exts))])
		case k < 80:
			out[i] = fmt.Sprintf("tests/unit/test_%d.py", r.IntN(5000))
		case k < 85:
			out[i] = fmt.Sprintf("docs/guide/page%d.md", r.IntN(500))
		case k < 90:
			out[i] = fmt.Sprintf("bridge/pkg%d/m%d.py", r.IntN(12), r.IntN(100))
		case k < 95:
			out[i] = fmt.Sprintf("migrations/m%d/%04d_step.sql", r.IntN(25), r.IntN(10000))
		default:
			out[i] = fmt.Sprintf("db/tables/t%d_%d.sql", r.IntN(25), r.IntN(100))
		}
	}
	return out
}

// naive returns c with a Matcher that calls doublestar.Match for every
// pattern: the baseline, and a second implementation to compare with.
func naive(c *Compiled) *Compiled {
	cc := *c
	cc.m = c.m.Naive()
	return &cc
}

func benchSubject() Subject {
	return Subject{
		WorkerType: WorkerAgent,
		Profile:    "backfill-2",
		Branch:     "feature/x",
		HasKey:     func(k string) bool { return k == "db:migration-slot" },
	}
}

// TestEvaluateMatchesNaive checks that Evaluate gives the same violations
// with the compiled matcher as with one doublestar.Match per pattern.
func TestEvaluateMatchesNaive(t *testing.T) {
	t.Parallel()
	paths := randomPaths(3000)
	paths = append(paths, "DESIGN_DOCUMENT.md", "bridge/loop_x.py", "a/OWNERS", "src/gen/x.go", "tools/lint1.cfg", "x/schema3.graphql", "docs/adr/1.md", "x/testdata/y.go")
	paths = append(paths, paths[:100]...) // repeats must be reported once
	for _, ic := range []bool{false, true} {
		p := benchPolicy()
		p.IgnoreCase = ic
		c := mustCompile(t, p)
		for _, s := range []Subject{benchSubject(), {WorkerType: WorkerHuman}, {WorkerType: WorkerAgent, Profile: "backfill-0", Branch: "main"}} {
			got := c.Evaluate(paths, s)
			checkSorted(t, got)
			want := naive(c).Evaluate(paths, s)
			if len(got) == 0 {
				t.Fatal("bench data produced no violations; the comparison is too weak")
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ignoreCase=%v subject=%+v: compiled and naive differ (%d vs %d violations)", ic, s, len(got), len(want))
			}
		}
	}
}

func benchmarkEvaluate(b *testing.B, naiveMatch bool) {
	p := benchPolicy()
	c, err := Compile(p)
	if err != nil {
		b.Fatal(err)
	}
	if c.m.Len() != 200 {
		b.Fatalf("bench policy has %d path patterns, want 200", c.m.Len())
	}
	if naiveMatch {
		c = naive(c)
	}
	s := benchSubject()
	for _, n := range []int{1000, 100000} {
		for _, order := range []string{"sorted", "random"} {
			paths := benchPaths(n)
			if order == "random" {
				paths = randomPaths(n)
			}
			b.Run(fmt.Sprintf("patterns=200/paths=%d/%s", n, order), func(b *testing.B) {
				b.ReportAllocs()
				var v []Violation
				for b.Loop() {
					v = c.Evaluate(paths, s)
				}
				b.ReportMetric(float64(len(v)), "violations")
			})
		}
	}
}

// BenchmarkEvaluate is the compiled matcher; compare with
// BenchmarkEvaluateNaive, the same Evaluate with doublestar.Match per pattern.
func BenchmarkEvaluate(b *testing.B) { benchmarkEvaluate(b, false) }

// BenchmarkEvaluateNaive is the baseline: 200 doublestar.Match calls per path.
func BenchmarkEvaluateNaive(b *testing.B) { benchmarkEvaluate(b, true) }

func BenchmarkCompile(b *testing.B) {
	p := benchPolicy()
	for b.Loop() {
		if _, err := Compile(p); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPatterns returns the 200 path patterns of benchPolicy as one list.
func benchPatterns() []string {
	p := benchPolicy()
	out := slices.Concat(p.UserOwned, p.Core)
	for _, name := range slices.Sorted(maps.Keys(p.Profiles)) {
		out = append(out, p.Profiles[name].Allow...)
	}
	for _, r := range p.KeyRules {
		out = append(out, r.Paths...)
	}
	return out
}

func benchmarkMatcher(b *testing.B, naiveMatch bool) {
	m, err := pathmatch.NewMatcher(benchPatterns(), false)
	if err != nil {
		b.Fatal(err)
	}
	if naiveMatch {
		m = m.Naive()
	}
	paths := benchPaths(1000)
	b.Run("patterns=200/paths=1000", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n = 0
			for _, p := range paths {
				m.MatchAll(p, func(int) { n++ })
			}
		}
		b.ReportMetric(float64(n), "matches")
	})
}

// BenchmarkMatcher is matching alone: MatchAll of 1,000 paths against 200
// patterns, without building violations.
func BenchmarkMatcher(b *testing.B) { benchmarkMatcher(b, false) }

// BenchmarkMatcherNaive is the same with doublestar.Match per pattern.
func BenchmarkMatcherNaive(b *testing.B) { benchmarkMatcher(b, true) }
