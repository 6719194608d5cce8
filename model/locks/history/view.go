package history

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/model/pathmatch"
)

// View is the log seen by one worker during [From, To], as a read-only
// locks.Store: what a commit's checks read to judge it as they would have
// when it was made. A grant of someone else shows when the log proves it
// live during all of the span; one of the worker's own when it may have
// been live at any moment of it. So a commit is refused only for what the
// log proves, and credited with every lock it may have been made under.
// A shown record expires at the grant's end; judge it at From.
type View struct {
	log      *Log
	From, To time.Time
	Me       locks.Owner
	under    []Trailer
}

// Trailer is a grant of the worker's that a commit's trailers name and
// that may have been live when the commit was made (AtCommit: during the
// view's span) or when it was written (its author time, before a rebase).
type Trailer struct {
	Grant    *Grant
	AtCommit bool
}

// Under is the view of a commit made under the grants its trailers name.
// They show as the worker's whatever the span (a rebase dates a commit
// anew), and on a shared store they decide, without the clocks, which
// other grants of their keys the commit can have met: the store grants a
// key, or a key overlapping it, to one worker at a time, so no other such
// grant was live while the trailer's was, and none counts against a
// commit whose trailer grant may have been live when it was made. A
// rebased commit (its trailer grant live only at its author time) is
// judged by the clock, except against grants of the same key with a lower
// fence: those ended before the trailer's began.
func (v *View) Under(ts []Trailer) *View {
	w := *v
	w.under = ts
	return &w
}

// excluded reports whether the trailers prove g was not live when the
// commit was made.
func (v *View) excluded(g *Grant) bool {
	if !g.Shared() || g.Fence == 0 {
		return false
	}
	for _, t := range v.under {
		h := t.Grant
		if h == g || h.Store != g.Store || h.Fence == 0 || h.Fence == g.Fence {
			continue
		}
		same := lockkey.FoldCase(h.Key) == lockkey.FoldCase(g.Key)
		if !t.AtCommit {
			// Fences order the grants of one key (each key counts its
			// own on some stores): only an earlier grant of the same
			// key is known to have ended before the trailer's began.
			if same && g.Fence < h.Fence {
				return true
			}
			continue
		}
		// Live when the commit was made: the store let no other grant
		// of its key, or of a key overlapping it, be live with it.
		if same || lockkey.OverlapFoldCase(h.Key, g.Key) {
			return true
		}
	}
	return false
}

// lockOf is g as a record: a trailer's grant that ended before the span
// (a rebased commit) shows live through it.
func (v *View) lockOf(g *Grant) locks.Lock {
	l := g.Lock()
	if v.attested(g) && l.ExpiresAt.Before(v.To) {
		l.ExpiresAt = v.To
	}
	return l
}

func (v *View) attested(g *Grant) bool {
	for _, t := range v.under {
		if t.Grant == g {
			return true
		}
	}
	return false
}

var _ locks.Store = (*View)(nil)

// During is the log as me saw it during [from, to].
func (l *Log) During(from, to time.Time, me locks.Owner) *View {
	return &View{log: l, From: from, To: to, Me: me}
}

func (v *View) mine(g *Grant) bool { return ownedBy(g, v.Me) && g.Owner.Holder != "" }

func (v *View) shows(g *Grant) bool {
	if v.mine(g) {
		return g.Possibly(v.From, v.To) || v.attested(g)
	}
	return g.Throughout(v.From, v.To) && !v.excluded(g)
}

func (v *View) entriesOf(gs []*Grant) []locks.Entry {
	out := make([]locks.Entry, 0, len(gs))
	for _, g := range gs {
		out = append(out, locks.Entry{Lock: v.lockOf(g), Name: g.Key})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func (v *View) filter(gs []*Grant, keep func(*Grant) bool, into []*Grant) []*Grant {
	for _, g := range gs {
		if keep(g) {
			into = append(into, g)
		}
	}
	return into
}

// Get returns the record the view shows for key: the worker's own when it
// has one, else another's.
func (v *View) Get(_ context.Context, key string) (locks.Lock, error) {
	var other *Grant
	for _, g := range v.log.byKey[lockkey.FoldCase(key)] {
		if !v.shows(g) {
			continue
		}
		if v.mine(g) {
			return v.lockOf(g), nil
		}
		other = g
	}
	if other == nil {
		return locks.Lock{}, locks.ErrNotFound
	}
	return other.Lock(), nil
}

// Others returns the grants of others the view shows on key.
func (v *View) Others(key string) []*Grant {
	return v.filter(v.log.byKey[lockkey.FoldCase(key)], func(g *Grant) bool { return !v.mine(g) && v.shows(g) }, nil)
}

// Covering returns the grants shown on the paths and every pattern grant
// shown (the caller matches patterns itself).
func (v *View) Covering(_ context.Context, paths []string) ([]locks.Entry, error) {
	var gs []*Grant
	seen := map[string]bool{}
	for _, p := range paths {
		id := lockkey.FoldPath(p) // a path, never read as a key
		if seen[id] {
			continue
		}
		seen[id] = true
		gs = v.filter(v.log.byKey[id], v.shows, gs)
	}
	gs = v.filter(v.log.patterns, v.shows, gs)
	return v.entriesOf(gs), nil
}

// InNamespace returns the grants shown in namespace ns.
func (v *View) InNamespace(_ context.Context, ns string) ([]locks.Entry, error) {
	return v.entriesOf(v.filter(v.log.byNS[ns], v.shows, nil)), nil
}

// Overlapping returns the grants shown on key and every pattern grant
// shown.
func (v *View) Overlapping(_ context.Context, key string) ([]locks.Entry, error) {
	gs := v.filter(v.log.byKey[lockkey.FoldCase(key)], v.shows, nil)
	for _, g := range v.log.patterns {
		if v.shows(g) && lockkey.OverlapFoldCase(g.Key, key) && lockkey.FoldCase(g.Key) != lockkey.FoldCase(key) {
			gs = append(gs, g)
		}
	}
	return v.entriesOf(gs), nil
}

// List returns every grant shown.
func (v *View) List(context.Context) ([]locks.Entry, error) {
	return v.entriesOf(v.filter(v.log.grants, v.shows, nil)), nil
}

// Page returns a page of the grants shown, in the order of their keys:
// the log is read whole anyway.
func (v *View) Page(ctx context.Context, after string, limit int) ([]locks.Entry, string, error) {
	all, err := v.List(ctx)
	if err != nil {
		return nil, "", err
	}
	page, next := locks.PageOf(all, func(e locks.Entry) string { return e.Key }, after, limit)
	return page, next, nil
}

// Where names the log.
func (v *View) Where(string) string { return "the lock log" }

// Close does nothing.
func (v *View) Close() error { return nil }

var errReadOnly = errors.New("the lock log is read-only")

// Acquire is refused: the view is read-only.
func (v *View) Acquire(context.Context, locks.Lock, time.Time) (locks.Lock, *locks.Lock, error) {
	return locks.Lock{}, nil, errReadOnly
}

// Release is refused: the view is read-only.
func (v *View) Release(context.Context, string, string) error { return errReadOnly }

// Update is refused: the view is read-only.
func (v *View) Update(context.Context, locks.Lock) (locks.Lock, error) {
	return locks.Lock{}, errReadOnly
}

// Remove is refused: the view is read-only.
func (v *View) Remove(context.Context, string) (locks.Lock, error) {
	return locks.Lock{}, errReadOnly
}

// Unshown returns the grants of others that cover one of paths, or pause
// a feature, and may have been live during the span without the log
// proving it live throughout: each is either Undecided (an end the log
// lacks) or within the span's margin.
func (v *View) Unshown(paths []string) []*Grant {
	var out []*Grant
	consider := func(g *Grant) bool {
		return !v.mine(g) && g.Possibly(v.From, v.To) && !g.Throughout(v.From, v.To) && !v.excluded(g)
	}
	seen := map[string]bool{}
	for _, p := range paths {
		id := lockkey.FoldPath(p) // a path, never read as a key
		if !seen[id] {
			seen[id] = true
			out = v.filter(v.log.byKey[id], consider, out)
		}
	}
	for _, g := range v.log.byNS["feature"] {
		if lockkey.IsPause(g.Key) && consider(g) {
			out = append(out, g)
		}
	}
	var pats []*Grant
	var globs []string
	for _, g := range v.log.patterns {
		if glob, ok := lockkey.FoldedGlob(g.Key); ok && consider(g) {
			pats, globs = append(pats, g), append(globs, glob)
		}
	}
	if len(pats) == 0 {
		return out
	}
	m, err := pathmatch.NewMatcher(globs, false)
	if err != nil {
		return append(out, pats...) // cannot tell which paths they cover: all
	}
	hit := make([]bool, len(pats))
	var buf []int
	for _, p := range paths {
		buf = m.AppendMatches(buf[:0], lockkey.Folded(p))
		for _, i := range buf {
			hit[i] = true
		}
	}
	for i, g := range pats {
		if hit[i] {
			out = append(out, g)
		}
	}
	return out
}
