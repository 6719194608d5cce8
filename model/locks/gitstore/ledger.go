package gitstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks"
)

// changeTrailer starts each line of a state's commit message that says
// which live lock the change ended or took from its holder: the state
// itself tells a reader why a lock it had is gone, and a state that drops
// a live lock without saying so was not written by lockgate.
const changeTrailer = "Lockgate-Change: "

// Operations a change line names.
const (
	opRelease  = "release"   // the holder released it
	opClear    = "clear"     // removed whoever held it (lock clear, release --force)
	opTakeOver = "take-over" // taken from a holder whose lock had expired
)

// change is one line of changeTrailer: the lock it ended, as it was.
type change struct {
	Op     string `json:"op"`
	Key    string `json:"key"`
	Fence  uint64 `json:"fence,omitempty"`
	Holder string `json:"holder,omitempty"`
}

// changeLines renders the change lines of a commit message.
func changeLines(cs []change) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		b, err := json.Marshal(c)
		if err != nil {
			continue // strings and numbers only: cannot fail
		}
		out = append(out, changeTrailer+string(b))
	}
	return out
}

// parseChanges reads the change lines of a state's commit message; a line
// that starts like one and does not parse is an error.
func parseChanges(msg string) ([]change, error) {
	var cs []change
	for _, l := range strings.Split(msg, "\n") {
		rest, ok := strings.CutPrefix(l, changeTrailer)
		if !ok {
			continue
		}
		var c change
		if err := json.Unmarshal([]byte(rest), &c); err != nil || c.Key == "" {
			return nil, fmt.Errorf("unreadable change line %q", shortLine(l))
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func shortLine(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// Unlogged compares two states of the lock table, commits from and to in
// the repository git finds from dir (in this process's environment, as a
// pre-receive hook must read them), and says what to does that lockgate
// never does unannounced: drop a lock live at now, give it to another
// holder, or lower a fence, without a change line of to naming that lock
// as it was in from. Each reason names the lock. An empty from is no
// state (the ref created): nothing to compare.
func Unlogged(ctx context.Context, dir, from, to string, now time.Time) ([]string, error) {
	if from == "" || from == to {
		return nil, nil
	}
	older, err := treeOf(ctx, dir, from)
	if err != nil {
		return nil, err
	}
	newer, err := treeOf(ctx, dir, to)
	if err != nil {
		return nil, err
	}
	var need []string
	for _, t := range []*table{older, newer} {
		for name, r := range t.recs {
			if older.recs[name] == nil || newer.recs[name] == nil || older.recs[name].oid != newer.recs[name].oid {
				need = append(need, r.oid)
			}
		}
	}
	blobs, err := gitexec.ReadBlobsIn(ctx, dir, need)
	if err != nil {
		return nil, fmt.Errorf("read the records %s changes: %w", short(to), err)
	}
	data := make(map[string][]byte, len(need))
	for i, oid := range need {
		data[oid] = blobs[i]
	}
	for _, t := range []*table{older, newer} {
		for name, r := range t.recs {
			if d, ok := data[r.oid]; ok {
				t.recs[name] = newRecord(name, r.oid, d)
			}
		}
	}
	return unlogged(older, newer, func() (string, error) {
		msg, err := gitexec.Output(ctx, dir, nil, "cat-file", "commit", to)
		return string(msg), err
	}, now)
}

// unlogged is Unlogged of two tables read already; message reads the
// newer state's commit, asked only when a live lock changed.
func unlogged(older, newer *table, message func() (string, error), now time.Time) ([]string, error) {
	reasons, _, err := unloggedNames(older, newer, message, now)
	return reasons, err
}

// unloggedNames is unlogged, and the names of the records of older it
// finds dropped or handed over unannounced.
func unloggedNames(older, newer *table, message func() (string, error), now time.Time) (reasons, dropped []string, err error) {
	if newer.fence < older.fence {
		reasons = append(reasons, fmt.Sprintf("it lowers the fence counter from %d to %d", older.fence, newer.fence))
	}
	names := make([]string, 0)
	for name, r := range older.recs {
		if n := newer.recs[name]; n == nil || n.oid != r.oid || r.oid == "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var changes []change
	read := false
	for _, name := range names {
		was, err := older.recs[name].get()
		if err != nil || !now.Before(was.ExpiresAt) {
			continue // a corrupt or expired record: anyone may remove it
		}
		var is *locks.Lock
		if n := newer.recs[name]; n != nil {
			if l, err := n.get(); err == nil {
				is = &l
			}
		} else if moved := movedTo(older, newer, was.Token); moved != nil {
			is = moved // the same grant under another name (record names of an older release)
		}
		if is != nil && is.Token == was.Token && is.Holder == was.Holder && is.Session == was.Session && is.Fence == was.Fence {
			continue // renewed
		}
		if !read {
			read = true
			msg, err := message()
			if err != nil {
				return nil, nil, fmt.Errorf("read lock table %s: %w", short(newer.commit), err)
			}
			_, body, _ := strings.Cut(msg, "\n\n")
			if changes, err = parseChanges(body); err != nil {
				return nil, nil, fmt.Errorf("lock table %s: %w", short(newer.commit), err)
			}
		}
		why := ""
		switch {
		case is == nil:
			if !announced(changes, was, opRelease, opClear) {
				why = fmt.Sprintf("it drops %s's live lock on %s (fence %d) without a release or clear", was.Holder, was.Key, was.Fence)
			}
		case is.Fence < was.Fence:
			why = fmt.Sprintf("it lowers the fence of %s from %d to %d", was.Key, was.Fence, is.Fence)
		case is.Fence == was.Fence:
			why = fmt.Sprintf("it rewrites %s's live lock on %s (fence %d) for %s", was.Holder, was.Key, was.Fence, is.Holder)
		default:
			if !announced(changes, was, opTakeOver, opClear) {
				why = fmt.Sprintf("it gives %s's live lock on %s (fence %d) to %s without a take-over", was.Holder, was.Key, was.Fence, is.Holder)
			}
		}
		if why != "" {
			reasons, dropped = append(reasons, why), append(dropped, name)
		}
	}
	return reasons, dropped, nil
}

// movedTo finds, among the records newer has at names older lacks, the
// one of the grant with token; nil when there is none.
func movedTo(older, newer *table, token string) *locks.Lock {
	for name, r := range newer.recs {
		if _, ok := older.recs[name]; ok {
			continue
		}
		if l, err := r.get(); err == nil && l.Token == token {
			return &l
		}
	}
	return nil
}

// announced reports whether changes name l, as it was, under one of ops.
func announced(changes []change, l locks.Lock, ops ...string) bool {
	for _, c := range changes {
		if c.Key == l.Key && c.Fence == l.Fence && c.Holder == l.Holder && slices.Contains(ops, c.Op) {
			return true
		}
	}
	return false
}

// treeOf reads the state commit names, its records' blobs not yet read.
func treeOf(ctx context.Context, dir, commit string) (*table, error) {
	es, err := gitexec.ListTreeIn(ctx, dir, commit)
	if err != nil {
		return nil, fmt.Errorf("read the lock table %s: %w", short(commit), err)
	}
	t := emptyTable()
	t.commit = commit
	fenceOID := ""
	for _, e := range es {
		switch {
		case e.Type != "blob":
		case e.Path == fenceName:
			fenceOID = e.OID
		case validName(e.Path):
			t.recs[e.Path] = &treeRecord{name: e.Path, oid: e.OID}
		}
	}
	if fenceOID == "" {
		return t, nil
	}
	b, err := gitexec.ReadBlobsIn(ctx, dir, []string{fenceOID})
	if err != nil {
		return nil, fmt.Errorf("read the lock table %s: %w", short(commit), err)
	}
	if t.fence, err = parseFence(b[0]); err != nil {
		return nil, fmt.Errorf("lock table %s: %w", short(commit), err)
	}
	return t, nil
}

// Released names the holders of the locks the state commit releases, as
// its change lines say (read in the repository git finds from dir, in
// this process's environment): a signed state must be signed by them.
func Released(ctx context.Context, dir, commit string) ([]string, error) {
	msg, err := gitexec.Output(ctx, dir, nil, "cat-file", "commit", commit)
	if err != nil {
		return nil, fmt.Errorf("read lock table %s: %w", short(commit), err)
	}
	_, body, _ := strings.Cut(string(msg), "\n\n")
	cs, err := parseChanges(body)
	if err != nil {
		return nil, fmt.Errorf("lock table %s: %w", short(commit), err)
	}
	var holders []string
	for _, c := range cs {
		if c.Op == opRelease && !slices.Contains(holders, c.Holder) {
			holders = append(holders, c.Holder)
		}
	}
	return holders, nil
}
