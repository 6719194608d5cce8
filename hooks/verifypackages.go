package hooks

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// PackageDone is a work package the lock log shows marked done at a
// commit (a completed_package event): which package, at which commit, by
// whom and when.
type PackageDone struct {
	Package    string    `json:"package"`
	Commit     string    `json:"commit"`
	Worker     string    `json:"worker"`
	WorkerType string    `json:"worker_type,omitempty"`
	At         time.Time `json:"at"`
}

// rangeSeen is every commit of a verified range, those that change no
// file too: a package may be finished by any of them.
type rangeSeen struct {
	commits map[string]bool
	parents map[string]bool // commits some commit of the range has as parent
	first   time.Time       // the earliest and latest committer times
	last    time.Time
}

func (s *rangeSeen) add(sha string, parents []string, when time.Time) {
	if s.commits == nil {
		s.commits, s.parents, s.first, s.last = map[string]bool{}, map[string]bool{}, when, when
	}
	s.commits[sha] = true
	for _, p := range parents {
		s.parents[p] = true
	}
	s.first, s.last = minTime(s.first, when), maxTime(s.last, when)
}

// tips are the commits of the range no commit of it has as parent: the
// range is their history.
func (s *rangeSeen) tips() []string {
	var tips []string
	for c := range s.commits {
		if !s.parents[c] {
			tips = append(tips, c)
		}
	}
	sort.Strings(tips)
	return tips
}

// packagesDone lists in r the packages the log shows finished by a
// commit of the range (r.PackagesDone) and those marked done while the
// range's commits were made at a commit outside the range's history
// (r.PackagesDoneOutside: a done that names a commit of another branch,
// or one the range's tip dropped). The latter is a note, not a violation:
// which commit finishes a package is the worker's word, not a lock rule.
func (h *Runner) packagesDone(ctx context.Context, evs []journal.Event, seen *rangeSeen, r *Report) error {
	if len(seen.commits) == 0 {
		return nil
	}
	from, to := seen.first.Add(-Margin), seen.last.Add(time.Second+Margin)
	var tips []string
	for i := range evs {
		ev := &evs[i]
		sha := ev.DoneCommit()
		if sha == "" {
			continue
		}
		done := PackageDone{Package: ev.TaskID, Commit: sha, Worker: ev.Worker, WorkerType: ev.WorkerType, At: ev.Timestamp.UTC()}
		if seen.commits[sha] {
			r.PackagesDone = append(r.PackagesDone, done)
			continue
		}
		if ev.Timestamp.Before(from) || ev.Timestamp.After(to) {
			continue
		}
		if tips == nil {
			tips = seen.tips()
		}
		in, err := h.inHistory(ctx, sha, tips)
		if err != nil {
			return err
		}
		if !in {
			r.PackagesDoneOutside = append(r.PackagesDoneOutside, done)
		}
	}
	for _, l := range [][]PackageDone{r.PackagesDone, r.PackagesDoneOutside} {
		sort.SliceStable(l, func(i, j int) bool { return l[i].At.Before(l[j].At) })
	}
	return nil
}

// inHistory reports whether commit sha is one of tips or an ancestor of
// one: `git rev-list -n1 SHA --not TIPS` names it when it is not. A commit
// this clone does not have is in no history it has.
func (h *Runner) inHistory(ctx context.Context, sha string, tips []string) (bool, error) {
	if _, err := gitexec.Output(ctx, h.Dir, nil, "cat-file", "-e", sha+"^{commit}"); err != nil {
		// cat-file -e fails when the clone lacks the commit: then it is
		// in no history the clone has.
		return false, ctx.Err()
	}
	args := append([]string{"rev-list", "-n1", sha, "--not"}, tips...)
	out, err := gitexec.Output(ctx, h.Dir, nil, args...)
	if err != nil {
		return false, fmt.Errorf("is %s in the history of the range: %w", shortSHA(sha), err)
	}
	return strings.TrimSpace(string(out)) == "", nil
}

func (d PackageDone) text() string {
	who := d.Worker
	if d.WorkerType != "" {
		who += " (" + d.WorkerType + ")"
	}
	return fmt.Sprintf("%s at commit %s by %s at %s", d.Package, shortSHA(d.Commit), who, stamp(d.At))
}

// outsideText is the note of a package marked done at a commit outside
// the range's history.
func (d PackageDone) outsideText() string {
	return fmt.Sprintf("package %s was marked done at %s by %s naming commit %s, which is not in the history of the verified range",
		d.Package, stamp(d.At), d.Worker, shortSHA(d.Commit))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
