package board

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/service/queue"
)

// queueGroups are the packages the queue section lists, most pressing
// first: task records that cannot be read (never handed out), claims (the
// soonest to lapse first), failed packages (the latest first), and ready
// ones in claim order, those that can be claimed now before those that
// wait. Done packages are only counted.
func queueGroups(q *queue.Queue) [][]queue.PackageStatus {
	var unreadable, claimed, failed, free, waiting []queue.PackageStatus
	for _, p := range q.Packages {
		switch {
		case p.Unreadable != "":
			unreadable = append(unreadable, p)
		case p.State == queue.PackageClaimed:
			claimed = append(claimed, p)
		case p.State == queue.PackageFailed:
			failed = append(failed, p)
		case p.State == queue.PackageReady && len(p.WaitsFor) == 0 && len(p.HeldBy) == 0:
			free = append(free, p)
		case p.State == queue.PackageReady:
			waiting = append(waiting, p)
		}
	}
	slices.SortStableFunc(claimed, func(a, b queue.PackageStatus) int { return stamp(a.Until).Compare(stamp(b.Until)) })
	slices.SortStableFunc(failed, func(a, b queue.PackageStatus) int { return stamp(b.FinishedAt).Compare(stamp(a.FinishedAt)) })
	return [][]queue.PackageStatus{unreadable, claimed, failed, append(free, waiting...)}
}

func stamp(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// shares divides n rows among the groups, one row to each group in turn
// while it has packages left, so that a long list of one state does not
// hide the others; n <= 0 shows them all.
func shares(groups [][]queue.PackageStatus, n int) []int {
	out := make([]int, len(groups))
	if n <= 0 {
		for i, g := range groups {
			out[i] = len(g)
		}
		return out
	}
	for n > 0 {
		gave := false
		for i, g := range groups {
			if n > 0 && out[i] < len(g) {
				out[i]++
				n--
				gave = true
			}
		}
		if !gave {
			break
		}
	}
	return out
}

// queueRows is how many rows the queue section needs to list every
// package it lists, and the lines it takes besides (its title, the column
// heads and the line saying how many more). No queue: 0, 0.
func queueRows(s Snapshot) (rows, lines int) {
	switch {
	case s.QueueFile == "":
		return 0, 0
	case s.Queue == nil:
		return 0, 1
	}
	for _, g := range queueGroups(s.Queue) {
		rows += len(g)
	}
	return rows, 3
}

// queueSection writes the work queue: its counts by state, then the
// packages that matter most, cut to v.Packages rows.
func queueSection(b *strings.Builder, s Snapshot, v View) {
	if s.QueueFile == "" {
		return
	}
	file := safetext.Field(s.QueueFile)
	if s.Queue == nil {
		fmt.Fprintf(b, "work packages (%s): not shown: %s\n", file, safetext.Field(cmp.Or(s.QueueProblem, "not read")))
		return
	}
	count := map[queue.PackageState]int{}
	for _, p := range s.Queue.Packages {
		count[p.State]++
	}
	fmt.Fprintf(b, "work packages (%s): %d ready, %d claimed, %d done, %d failed\n", file,
		count[queue.PackageReady], count[queue.PackageClaimed], count[queue.PackageDone], count[queue.PackageFailed])
	groups := queueGroups(s.Queue)
	share := shares(groups, v.Packages)
	total, shown := 0, 0
	for i, g := range groups {
		total += len(g)
		shown += share[i]
	}
	if total == 0 {
		return
	}
	state := make(map[string]queue.PackageState, len(s.Queue.Packages))
	for _, p := range s.Queue.Packages {
		state[p.ID] = p.State
	}
	fmt.Fprintf(b, "  %-10s %-20s %-20s %-10s %s\n", "STATE", "PACKAGE", "HOLDER", "TIME", "WAITS FOR / REASON")
	for i, g := range groups {
		for _, p := range g[:share[i]] {
			packageRow(b, p, s.Now, state, v.Width)
		}
	}
	if more := total - shown; more > 0 {
		var left []string
		for i, g := range groups {
			if n := len(g) - share[i]; n > 0 {
				left = append(left, fmt.Sprintf("%d %s", n, groupNames[i]))
			}
		}
		fmt.Fprintf(b, "  … %d more (%s)\n", more, strings.Join(left, ", "))
	}
}

// groupNames name queueGroups' groups in the line saying how many more.
var groupNames = []string{"unreadable", "claimed", "failed", "ready"}

// packageRow writes p's row; on a screen of width columns (0: unknown) its
// last column is cut to fit, as the lock rows are (columns).
func packageRow(b *strings.Builder, p queue.PackageStatus, now time.Time, state map[string]queue.PackageState, width int) {
	st, holder, left, what := string(p.State), p.Holder, "-", ""
	switch {
	case p.Unreadable != "":
		st, holder, what = "unreadable", "?", "task record unreadable: "+p.Unreadable
	case p.State == queue.PackageClaimed:
		left, what = duration.Until(stamp(p.Until), now), p.Title
	case p.State == queue.PackageFailed:
		left, what = duration.Until(stamp(p.FinishedAt), now), "failed: "+p.Reason
	default:
		holder, what = "-", waitsFor(p, state)
	}
	last := 70
	if width > 0 {
		// "  STATE PACKAGE HOLDER TIME ": 66 columns.
		last = min(last, max(width-66, minReason))
	}
	line := fmt.Sprintf("  %-10s %s %s %-10s %s", st, field(p.ID, 20), field(cmp.Or(holder, "-"), 20), left, field(what, last))
	b.WriteString(strings.TrimRight(line, " ") + "\n")
}

// waitsFor says what a ready package waits for: its dependencies not done
// (with their states) and the locks in its way (with their holders).
func waitsFor(p queue.PackageStatus, state map[string]queue.PackageState) string {
	var w []string
	if len(p.WaitsFor) > 0 {
		deps := make([]string, 0, len(p.WaitsFor))
		for _, d := range p.WaitsFor {
			deps = append(deps, fmt.Sprintf("%s (%s)", safetext.Field(d), cmp.Or(string(state[d]), "unknown")))
		}
		w = append(w, "after "+strings.Join(deps, ", "))
	}
	if len(p.HeldBy) > 0 {
		held := make([]string, 0, len(p.HeldBy))
		for _, l := range p.HeldBy {
			held = append(held, safetext.Field(l.Key)+" held by "+safetext.Field(l.Holder))
		}
		w = append(w, strings.Join(held, ", "))
	}
	if len(w) > 0 {
		return strings.Join(w, "; ")
	}
	if p.Expired {
		return "free to claim (the claim of " + safetext.Field(p.Holder) + " lapsed)"
	}
	return "free to claim"
}

// fixedLines are the lines of a full screen besides the rows of locks and
// the queue: the title, the locks' column heads and the line saying how
// many more, the recent events with their title, the status and the keys.
const fixedLines = 6 + boardEventLines

// boardEventLines is room for the recent events the board is given.
const boardEventLines = 10

// layout divides a screen of h lines between the rows of locks and of
// work packages: the queue gets what the locks leave, at least a third
// (all it lists when that fits), and the locks at least 3 rows.
func layout(s Snapshot, v View, h int) View {
	pauses, list := rows(s, v)
	avail := h - fixedLines - len(pauses)
	n, lines := queueRows(s)
	avail -= lines
	v.Packages = 0
	if n > 0 {
		v.Packages = min(n, max(avail-len(list), avail/3, 1))
	}
	v.Height = max(avail-v.Packages, 3)
	return v
}
