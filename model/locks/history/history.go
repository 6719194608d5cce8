package history

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

// Grant is one acquisition of a key, from the event that took it to the
// one that ended it or its expiry.
type Grant struct {
	Key   string
	Owner locks.Owner // Holder is "" when the log does not say whose it was
	Fence uint64      // 0 when the events do not say (an earlier version)
	// Start is the first event of the grant the log has; End when it
	// stopped counting (released, cleared, or expired).
	Start, End time.Time
	// StartKnown: Start is the grant's acquisition. Without it the log
	// lacks the acquisition and the grant was live for an unknown time
	// before Start.
	StartKnown bool
	// EndKnown: End is known. Without it the events (of an earlier
	// version) name no expiry and nothing ended the grant: it was live
	// for an unknown time after Start.
	EndKnown bool
	Reason   string
	// How says how the grant ended: "released", "released by W (forced)",
	// "cleared by W", "expired"; "" while EndKnown is false.
	How     string
	EventID string // the event of Start
	// Store is the store that granted it, as its events name it ("" in
	// events of earlier versions).
	Store  string
	closed bool // a release or clear ended it
	// sureEnd, when set, is before End: the log proves the grant live only
	// until then (a forced release of one of two grants with its fence
	// may have ended it), and may have been live until End.
	sureEnd time.Time
}

// Shared reports whether the grant is of a store every clone shares (the
// git store, Redis): there a fence names one grant. Each clone's file
// store counts fences of its own, so equal fences there may be two grants.
func (g *Grant) Shared() bool {
	return strings.HasPrefix(g.Store, "git ") || strings.HasPrefix(g.Store, "redis")
}

// Lock is the grant as a lock record, for checks that read a locks.Store.
func (g *Grant) Lock() locks.Lock {
	exp := g.End
	if !g.EndKnown {
		exp = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	}
	holder := g.Owner.Holder
	if holder == "" {
		holder = "(unknown)"
	}
	return locks.Lock{Key: g.Key, Holder: holder, HolderType: g.Owner.HolderType, Session: g.Owner.Session,
		CreatedAt: g.Start, ExpiresAt: exp, Reason: g.Reason, Fence: g.Fence, EventID: g.EventID}
}

// Throughout reports whether the log proves the grant live during all of
// [from, to]. Its first event the log has — the acquisition, or a refresh
// when the acquisition is missing — proves it live from then on.
func (g *Grant) Throughout(from, to time.Time) bool {
	end := g.End
	if !g.sureEnd.IsZero() {
		end = g.sureEnd
	}
	return g.EndKnown && !g.Start.After(from) && !end.Before(to)
}

// Possibly reports whether the grant may have been live at some moment of
// [from, to]: its span, with unknown ends open, meets it.
func (g *Grant) Possibly(from, to time.Time) bool {
	if g.StartKnown && g.Start.After(to) {
		return false
	}
	return !g.EndKnown || !g.End.Before(from)
}

// Undecided reports whether the log cannot tell whether the grant was live
// during [from, to]: it may have been, and only an end the log lacks
// makes it so.
func (g *Grant) Undecided(from, to time.Time) bool {
	if !g.Possibly(from, to) || g.Throughout(from, to) {
		return false
	}
	return !g.StartKnown && from.Before(g.Start) || !g.EndKnown && to.After(g.Start) ||
		!g.sureEnd.IsZero() && to.After(g.sureEnd)
}

// Log is the grants the events show, indexed by key.
type Log struct {
	grants   []*Grant
	byKey    map[string][]*Grant // by lock identity (lockkey.FoldCase)
	patterns []*Grant
	byNS     map[string][]*Grant
	free     []Grant // grants to hand out (grant)
	// First and Last are the times of the first and the last event (of
	// any action); Events counts them.
	First, Last time.Time
	Events      int
}

// Build rebuilds the grants from evs, in any order (they are sorted by
// time, then id). Events that are not about a lock are counted only.
func Build(evs []journal.Event) *Log { return build(evs, nil) }

// BuildFor is Build for judging changes of paths only: grants of other
// path keys are left out (they cover none of them), those of patterns and
// of other keys kept. A log of many events builds much faster so.
func BuildFor(evs []journal.Event, paths []string) *Log {
	return build(evs, KeysFor(paths))
}

// Keys are the lock keys whose grants can bear on changes of some paths,
// as BuildFor keeps them: a path key among the paths, any pattern, any
// key that is not a path. The nil Keys has every key.
type Keys struct {
	paths map[string]bool // by lock identity (lockkey.FoldPath)
}

// KeysFor is the Keys of changes of paths (the paths a change touches
// and the keys its trailers name).
func KeysFor(paths []string) *Keys {
	k := &Keys{paths: make(map[string]bool, len(paths))}
	for _, p := range paths {
		k.paths[lockkey.FoldPath(p)] = true
	}
	return k
}

// Bear reports whether grants of key can bear on the changes: a path
// key that is none of their paths covers none of them.
func (k *Keys) Bear(key string) bool {
	return k == nil || !lockkey.IsPathLike(key) || lockkey.IsPattern(key) || k.paths[lockkey.FoldCase(key)]
}

func build(evs []journal.Event, keep *Keys) *Log {
	evs = sorted(evs)
	n := len(evs) / 2
	if keep != nil {
		n = min(n, 4*len(keep.paths))
	}
	l := &Log{byKey: make(map[string][]*Grant, n), byNS: map[string][]*Grant{}, Events: len(evs),
		grants: make([]*Grant, 0, n)}
	if len(evs) > 0 {
		l.First, l.Last = evs[0].Timestamp, evs[len(evs)-1].Timestamp
	}
	for i := range evs {
		ev := &evs[i]
		if ev.Key == "" {
			continue
		}
		if !keep.Bear(ev.Key) {
			continue
		}
		switch ev.Action {
		case journal.ActionAcquire, journal.ActionTakeover, journal.ActionPause:
			l.take(ev)
		case journal.ActionRefresh:
			l.refresh(ev)
		case journal.ActionRelease, journal.ActionClear:
			l.end(ev)
		default:
			if !journal.HoldsNoGrant(ev.Action) {
				// An event of a key this version cannot read (a newer
				// lockgate's, or edited): whoever it is about may have
				// held the key at any time: undecided, never free.
				g := l.grant()
				*g = Grant{Key: ev.Key, Fence: ev.Fence, Start: ev.Timestamp, EventID: ev.ID, Store: ev.Store,
					Reason: "an event " + ev.Action + " this version of lockgate does not know"}
				l.add(g)
			}
		}
	}
	l.orderByFence()
	return l
}

// orderByFence bounds each grant of a shared store by the next grant of
// its key: the store hands out fences in order and grants a key only once
// it is free, so a grant ended before the store granted the key under a
// higher fence, whatever the clocks of the machines that wrote the events
// say. A grant whose end the log lacks (or whose release a fast clock
// dated late) ends there.
func (l *Log) orderByFence() {
	for _, gs := range l.byKey {
		if len(gs) < 2 {
			continue
		}
		for i, g := range gs {
			if g.Fence == 0 || !g.Shared() {
				continue
			}
			var next *Grant
			for _, h := range gs[i+1:] {
				if h.Store == g.Store && h.Fence > g.Fence && h.StartKnown && (next == nil || h.Fence < next.Fence) {
					next = h
				}
			}
			for _, h := range gs[:i] { // a later fence whose event sorted first
				if h.Store == g.Store && h.Fence > g.Fence && h.StartKnown && (next == nil || h.Fence < next.Fence) {
					next = h
				}
			}
			if next == nil || g.EndKnown && !g.End.After(next.Start) {
				continue
			}
			g.EndKnown, g.End, g.closed = true, next.Start, true
			if g.How == "" || g.How == "expired" {
				g.How = fmt.Sprintf("ended before %s took it (fence %d)", holderName(next), next.Fence)
			}
			if !g.sureEnd.IsZero() && g.sureEnd.After(next.Start) {
				g.sureEnd = next.Start
			}
		}
	}
}

func holderName(g *Grant) string {
	if g.Owner.Holder == "" {
		return "someone"
	}
	return g.Owner.Holder
}

// sorted returns evs sorted by time, then id, copying only when they are
// not sorted already (the workflow branch reads them sorted).
func sorted(evs []journal.Event) []journal.Event {
	less := func(a, b *journal.Event) bool {
		if !a.Timestamp.Equal(b.Timestamp) {
			return a.Timestamp.Before(b.Timestamp)
		}
		return a.ID < b.ID
	}
	for i := 1; i < len(evs); i++ {
		if less(&evs[i], &evs[i-1]) {
			evs = append([]journal.Event(nil), evs...)
			sort.SliceStable(evs, func(i, j int) bool { return less(&evs[i], &evs[j]) })
			break
		}
	}
	return evs
}

func ownerOf(ev *journal.Event) locks.Owner {
	return locks.Owner{Holder: ev.Worker, HolderType: ev.WorkerType, Session: ev.Session}
}

// grant returns a new zero grant from a block: a log of 100,000 events
// holds tens of thousands of them.
func (l *Log) grant() *Grant {
	if len(l.free) == 0 {
		l.free = make([]Grant, 1024)
	}
	g := &l.free[0]
	l.free = l.free[1:]
	return g
}

func (l *Log) add(g *Grant) {
	l.grants = append(l.grants, g)
	id := lockkey.FoldCase(g.Key)
	l.byKey[id] = append(l.byKey[id], g)
	if lockkey.IsPattern(g.Key) {
		l.patterns = append(l.patterns, g)
	}
	if ns := lockkey.Namespace(g.Key); ns != "" {
		l.byNS[ns] = append(l.byNS[ns], g)
	}
}

func (l *Log) take(ev *journal.Event) {
	if g := l.startless(ev); g != nil {
		// Its release sorted first (the releaser's clock runs ahead of
		// the taker's): the grant is the one the release ended.
		g.Owner, g.Start, g.StartKnown, g.Reason, g.EventID = ownerOf(ev), ev.Timestamp, true, ev.Details, ev.ID
		if ev.Action == journal.ActionTakeover {
			g.Reason = ""
		}
		if ev.ExpiresAt != nil && ev.ExpiresAt.Before(g.End) {
			g.End, g.How = *ev.ExpiresAt, "expired"
		}
		if g.End.Before(g.Start) {
			g.End = g.Start // the two clocks disagree; neither is favoured
		}
		return
	}
	g := l.grant()
	*g = Grant{Key: ev.Key, Owner: ownerOf(ev), Fence: ev.Fence, Start: ev.Timestamp, StartKnown: true,
		Reason: ev.Details, EventID: ev.ID, Store: ev.Store}
	if ev.Action == journal.ActionTakeover {
		g.Reason = ""
	}
	g.setExpiry(ev.ExpiresAt)
	l.add(g)
}

// startless finds the grant of a shared store that a release of ev's key
// and fence, sorted before ev, made without its start.
func (l *Log) startless(ev *journal.Event) *Grant {
	if ev.Fence == 0 || !strings.HasPrefix(ev.Store, "git ") && !strings.HasPrefix(ev.Store, "redis") {
		return nil
	}
	for _, g := range l.byKey[lockkey.FoldCase(ev.Key)] {
		if !g.StartKnown && g.closed && g.Fence == ev.Fence && g.Store == ev.Store {
			return g
		}
	}
	return nil
}

func (g *Grant) setExpiry(exp *time.Time) {
	if exp == nil {
		g.EndKnown, g.End, g.How = false, time.Time{}, ""
		return
	}
	g.EndKnown, g.End, g.How = true, *exp, "expired"
}

// open finds the grant of ev's key that ev continues or ends: the one with
// its fence (when the event names one) of its store (when both name one)
// that is not ended, preferring one of ev's worker; nil when the log has
// none. ambiguous: ev is not the owner's and several grants of other
// workers fit it (two stores granted the same fence), so which one it
// ended cannot be told.
func (l *Log) open(ev *journal.Event, ownerOnly bool) (found *Grant, ambiguous []*Grant) {
	me := ownerOf(ev)
	var others []*Grant
	for _, g := range l.byKey[lockkey.FoldCase(ev.Key)] {
		if g.closed || ev.Fence != 0 && g.Fence != 0 && g.Fence != ev.Fence ||
			ev.Store != "" && g.Store != "" && g.Store != ev.Store {
			continue
		}
		owned := g.Owner.Holder == me.Holder && g.Owner.Session == me.Session
		switch {
		case owned:
			found = g // the latest of the owner's
		case !ownerOnly:
			others = append(others, g)
		}
	}
	if found != nil || len(others) == 0 {
		return found, nil
	}
	if len(others) > 1 && ev.Fence != 0 {
		return nil, others
	}
	return others[len(others)-1], nil
}

func ownedBy(g *Grant, o locks.Owner) bool {
	return g.Owner.Holder == o.Holder && g.Owner.Session == o.Session
}

func (l *Log) refresh(ev *journal.Event) {
	g, _ := l.open(ev, true)
	if g == nil {
		// The log lacks the acquisition: the grant was live before this.
		g = &Grant{Key: ev.Key, Owner: ownerOf(ev), Fence: ev.Fence, Start: ev.Timestamp, EventID: ev.ID, Store: ev.Store}
		l.add(g)
	}
	g.setExpiry(ev.ExpiresAt)
}

func (l *Log) end(ev *journal.Event) {
	g, ambiguous := l.open(ev, false)
	if len(ambiguous) > 0 {
		// A forced release or clear of one of several grants: each may
		// have ended here or lived on until its expiry.
		for _, a := range ambiguous {
			a.closed = true
			if !a.EndKnown || a.End.After(ev.Timestamp) {
				a.sureEnd = ev.Timestamp
				a.How = fmt.Sprintf("released by %s (forced), or another grant with its fence was", ev.Worker)
			}
		}
		return
	}
	if g == nil {
		// The log lacks the acquisition: live for an unknown time before.
		g = &Grant{Key: ev.Key, Fence: ev.Fence, Start: ev.Timestamp, EventID: ev.ID, Store: ev.Store}
		if ev.Action == journal.ActionRelease && !strings.HasPrefix(ev.Details, "forced:") {
			g.Owner = ownerOf(ev) // not forced: the releaser held it
		}
		l.add(g)
	}
	g.closed = true
	if g.EndKnown && g.End.Before(ev.Timestamp) {
		return // it had expired before
	}
	g.EndKnown, g.End = true, ev.Timestamp
	switch {
	case ev.Action == journal.ActionClear:
		g.How = fmt.Sprintf("cleared by %s", ev.Worker)
	case !ownedBy(g, ownerOf(ev)) && g.Owner.Holder != "":
		g.How = fmt.Sprintf("released by %s (forced)", ev.Worker)
	default:
		g.How = "released"
	}
}

// Grants returns every grant, in the order of their first event.
func (l *Log) Grants() []*Grant { return l.grants }

// ByFence returns the grants of key with fence (several when clones with
// their own stores granted the same fence).
func (l *Log) ByFence(key string, fence uint64) []*Grant {
	var out []*Grant
	for _, g := range l.byKey[lockkey.FoldCase(key)] {
		if g.Fence == fence {
			out = append(out, g)
		}
	}
	return out
}
