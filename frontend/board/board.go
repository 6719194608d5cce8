package board

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/duration"
	"github.com/lockgate/lockgate/internal/safetext"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service"
	"github.com/lockgate/lockgate/service/session"
)

// Snapshot is what one frame shows, as the service reads it.
type Snapshot = service.BoardView

// Source gives the board its snapshots and clears a lock (logged).
type Source interface {
	Snapshot(ctx context.Context) (Snapshot, error)
	Clear(ctx context.Context, key string) error
}

// Sorts are the orders the board cycles through.
var Sorts = []string{"expiry", "holder", "key"}

// View is what the user chose to see.
type View struct {
	Worker   string // only this holder's locks ("" all)
	Sort     string // one of Sorts
	Selected int    // index into the visible rows
	Height   int    // rows of locks shown (0: all)
	Packages int    // rows of work packages shown (0: all but the done ones)
	Width    int    // columns of the screen (0: unknown; rows keep their full width)
}

// rows returns the live locks to show, filtered and sorted; pauses apart.
func rows(s Snapshot, v View) (pauses, list []locks.Entry) {
	for _, e := range s.Locks {
		if e.Err == nil && (e.Expired(s.Now) || session.IsQueueState(e.Lock)) {
			// A finished package's record is its state, shown in the
			// queue, not a lock anyone works under.
			continue
		}
		if v.Worker != "" && (e.Err != nil || e.Holder != v.Worker) {
			continue
		}
		if e.Err == nil && lockkey.IsPause(e.Key) {
			pauses = append(pauses, e)
			continue
		}
		list = append(list, e)
	}
	slices.SortStableFunc(list, func(a, b locks.Entry) int {
		switch v.Sort {
		case "holder":
			return cmp.Or(strings.Compare(a.Holder, b.Holder), strings.Compare(a.Key, b.Key))
		case "key":
			return strings.Compare(a.Key, b.Key)
		}
		return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), strings.Compare(a.Key, b.Key))
	})
	return pauses, list
}

// bar draws the share of a lock's time left in width cells.
func bar(l locks.Lock, now time.Time, width int) string {
	total := l.ExpiresAt.Sub(l.CreatedAt)
	left := l.ExpiresAt.Sub(now)
	n := 0
	if total > 0 && left > 0 {
		n = int((int64(left)*int64(width) + int64(total) - 1) / int64(total))
	}
	n = min(max(n, 0), width)
	return strings.Repeat("█", n) + strings.Repeat("░", width-n)
}

func field(s string, w int) string {
	s = safetext.Field(s)
	r := []rune(s)
	if len(r) > w {
		return string(r[:max(w-1, 0)]) + "…"
	}
	return s + strings.Repeat(" ", w-len(r))
}

// Frame renders one view of s as text lines. The selected row is marked
// with '>' .
func Frame(s Snapshot, v View) string {
	var b strings.Builder
	pauses, list := rows(s, v)
	who := "all workers"
	if v.Worker != "" {
		who = "worker " + safetext.Field(v.Worker)
	}
	fmt.Fprintf(&b, "lockgate board — %d live lock(s) in %s — %s — %s, sorted by %s\n", len(list)+len(pauses), s.Store,
		s.Now.UTC().Format(time.RFC3339), who, cmp.Or(v.Sort, Sorts[0]))
	for _, p := range pauses {
		fmt.Fprintf(&b, "PAUSED %s by %s (%s) until %s (%s)%s\n", safetext.Field(strings.TrimSuffix(strings.TrimPrefix(p.Key, "feature:"), ":pause")),
			safetext.Field(p.Holder), p.HolderType, p.ExpiresAt.UTC().Format(time.RFC3339), duration.Until(p.ExpiresAt, s.Now), reasonOf(p.Lock))
	}
	shown := list
	start := 0
	if v.Height > 0 && len(list) > v.Height {
		start = min(max(v.Selected-v.Height/2, 0), len(list)-v.Height)
		shown = list[start : start+v.Height]
	}
	key, reason, errText := columns(v.Width, slices.ContainsFunc(shown, func(e locks.Entry) bool { return e.Err == nil && e.Stale(s.Now, s.StaleAfter) }))
	fmt.Fprintf(&b, "  %-20s %-6s %-*s %-*s %-10s %s\n", "HOLDER", "TYPE", key, "KEY", reason, "REASON", "LEFT", "")
	for i, e := range shown {
		mark := " "
		if start+i == v.Selected {
			mark = ">"
		}
		if e.Err != nil {
			fmt.Fprintf(&b, "%s %-20s %-6s %s CORRUPT: %s\n", mark, "?", "?", field(cmp.Or(e.Key, e.Name), key), field(e.Err.Error(), errText))
			continue
		}
		flag := ""
		if e.Stale(s.Now, s.StaleAfter) {
			flag = staleFlag
		}
		fmt.Fprintf(&b, "%s %s %-6s %s %s %-10s %s%s\n", mark, field(e.Holder, 20), e.HolderType, field(e.Key, key), field(e.Reason, reason),
			duration.Until(e.ExpiresAt, s.Now), bar(e.Lock, s.Now, 10), flag)
	}
	if len(list) > len(shown) {
		fmt.Fprintf(&b, "  … %d more (rows %d–%d shown)\n", len(list)-len(shown), start+1, start+len(shown))
	}
	queueSection(&b, s, v)
	fmt.Fprintf(&b, "recent events:\n")
	for _, ev := range s.Events {
		fmt.Fprintf(&b, "  %s %-20s %-14s %s\n", ev.Timestamp.UTC().Format("15:04:05"), field(ev.Worker, 20), ev.Action, field(ev.Key, 40))
	}
	return cutLines(b.String(), v.Width)
}

// cutLines ends every line longer than width (columns; 0: unknown) with
// "…" at the screen's edge: the rows shrink their columns first, and what
// still does not fit (the title, a pause, a row on a very narrow screen)
// is cut rather than wrapped, which would push the frame off the screen.
func cutLines(frame string, width int) string {
	if width <= 0 {
		return frame
	}
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		if r := []rune(l); len(r) > width {
			lines[i] = string(r[:max(width-1, 0)]) + "…"
		}
	}
	return strings.Join(lines, "\n")
}

// staleFlag ends the row of a stale lock.
const staleFlag = " STALE"

// Widths of a lock row: in full (a stale one's flag apart), and the least
// its reason and key columns shrink to on a narrow screen.
const (
	rowWidth  = 111
	minReason = 8
	minKey    = 12
)

// columns are the widths of the lock rows' key and reason columns and of
// a corrupt record's error. On a screen narrower than the rows (width; 0
// when unknown) the reason gives way first, then the key, so that a row
// does not wrap onto the next line; stale says that a row ends in
// staleFlag.
func columns(width int, stale bool) (key, reason, errText int) {
	key, reason, errText = 34, 24, 60
	if width <= 0 {
		return key, reason, errText
	}
	over := rowWidth - width
	if stale {
		over += len(staleFlag)
	}
	cut := min(max(over, 0), reason-minReason)
	reason, over = reason-cut, over-cut
	key -= min(max(over, 0), key-minKey)
	// "> HOLDER TYPE KEY CORRUPT: ": 40 columns and the key's.
	errText = min(errText, max(width-40-key, minReason))
	return key, reason, errText
}

func reasonOf(l locks.Lock) string {
	if l.Reason == "" {
		return ""
	}
	return ": " + safetext.Field(l.Reason)
}

// selectedKey is the key of the selected row, "" when none.
func selectedKey(s Snapshot, v View) (string, string) {
	_, list := rows(s, v)
	if v.Selected < 0 || v.Selected >= len(list) {
		return "", ""
	}
	return list[v.Selected].Key, list[v.Selected].Holder
}
