package hooks

import (
	"context"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// A range past hooks.pre_push's limits is refused by pre-push (rule
// limit, the commits named before the paths) and left undecided by
// verify; within them it is judged.
func TestRangeLimits(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a.go", "0\n")
	r.Commit("init")
	r.Write("a.go", "1\n")
	r.Write("b.go", "1\n")
	r.Commit("two paths")
	r.Write("a.go", "2\n")
	r.Commit("one path")
	for _, tc := range []struct {
		name                 string
		maxCommits, maxPaths int
		want                 string // "" within the limits
	}{
		{"within", 2, 3, ""},
		{"too many commits", 1, 0, "more than 1 commits to check (hooks.pre_push.max_commits)"},
		{"too many paths", 0, 2, "more than 2 paths to check (hooks.pre_push.max_paths)"},
		{"both: the commits first", 1, 2, "more than 1 commits to check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, Checker: &Checker{Me: bobW}, MaxCommits: tc.maxCommits, MaxPaths: tc.maxPaths}
			rep := &Report{Hook: "pre-push"}
			if err := h.Range(context.Background(), []string{"HEAD~2..HEAD"}, "", rep); err != nil {
				t.Fatal(err)
			}
			rep.Finish()
			var limits []string
			for _, v := range rep.Violations {
				if v.Rule == RuleLimit {
					limits = append(limits, v.Reason)
				}
			}
			switch {
			case tc.want == "" && len(limits) > 0:
				t.Errorf("pre-push refused %v, want the range judged", limits)
			case tc.want != "" && (len(limits) != 1 || !strings.HasPrefix(limits[0], tc.want)):
				t.Errorf("pre-push refused %v, want %q", limits, tc.want)
			}
			rep = &Report{Hook: "verify"}
			if err := h.Verify(context.Background(), []string{"HEAD~2..HEAD"}, "", func() ([]journal.Event, error) { return nil, nil }, rep); err != nil {
				t.Fatal(err)
			}
			rep.Finish()
			if len(rep.Violations) > 0 {
				t.Errorf("verify found violations %+v, want none", rep.Violations)
			}
			limited := len(rep.Undecided) == 1 && rep.Undecided[0].Subject == "(range)"
			if tc.want != "" && (!limited || !strings.HasPrefix(rep.Undecided[0].Reason, tc.want)) || tc.want == "" && limited {
				t.Errorf("verify left %+v undecided, want the limit %q", rep.Undecided, tc.want)
			}
		})
	}
}
