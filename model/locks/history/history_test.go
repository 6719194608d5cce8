package history_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
)

var (
	t0    = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	alice = locks.Owner{Holder: "alice", HolderType: "human", Session: "alice"}
	bob   = locks.Owner{Holder: "bob", HolderType: "agent", Session: "s1"}
)

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

// ev is one lock event at minute min; exp < 0 names no expiry.
func ev(min int, who locks.Owner, action, key string, fence uint64, exp int) journal.Event {
	e := journal.Event{ID: journal.NewID(), Timestamp: at(min), Worker: who.Holder, WorkerType: who.HolderType,
		Session: who.Session, Action: action, Key: key, Fence: fence}
	if exp >= 0 {
		x := at(exp)
		e.ExpiresAt = &x
	}
	return e
}

// shown reports whether the view of who during [from, to] (minutes)
// shows a record on path.
func shown(t *testing.T, l *history.Log, who locks.Owner, from, to int, path string) (locks.Lock, bool) {
	t.Helper()
	es, err := l.During(at(from), at(to), who).Covering(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) == 0 {
		return locks.Lock{}, false
	}
	return es[0].Lock, true
}

func TestGrantSpans(t *testing.T) {
	t.Parallel()
	l := history.Build([]journal.Event{
		ev(0, bob, journal.ActionAcquire, "a.go", 1, 60),
		ev(10, bob, journal.ActionRelease, "a.go", 1, -1),
		ev(20, bob, journal.ActionAcquire, "b.go", 3, 30), // expires at 30
		ev(25, bob, journal.ActionRefresh, "b.go", 3, 50), // until 50
		ev(60, alice, journal.ActionTakeover, "b.go", 4, 90),
		ev(70, alice, journal.ActionRelease, "b.go", 4, -1),
		ev(100, bob, journal.ActionAcquire, "C.go", 5, 200),  // case folds
		ev(110, alice, journal.ActionRelease, "c.go", 5, -1), // forced
	})
	cases := []struct {
		name     string
		who      locks.Owner
		from, to int
		path     string
		want     bool
	}{
		{"held throughout", alice, 2, 8, "a.go", true},
		{"released before", alice, 11, 12, "a.go", false},
		{"released within the span", alice, 8, 12, "a.go", false},
		{"acquired within the span", alice, -1, 2, "a.go", false},
		{"own lock at any moment", bob, 9, 30, "a.go", true},
		{"own lock after release", bob, 11, 30, "a.go", false},
		{"refresh extends", alice, 40, 45, "b.go", true},
		{"expired before takeover", alice, 52, 55, "b.go", false},
		{"takeover grant", bob, 61, 69, "b.go", true},
		{"case folded", alice, 101, 102, "c.GO", true},
		{"forced release ends it", alice, 111, 112, "c.go", false},
		{"other path", alice, 2, 8, "z.go", false},
	}
	for _, c := range cases {
		if _, got := shown(t, l, c.who, c.from, c.to, c.path); got != c.want {
			t.Errorf("%s: shown = %v, want %v", c.name, got, c.want)
		}
	}
	if g := l.ByFence("c.go", 5); len(g) != 1 || g[0].How != "released by alice (forced)" || !g[0].End.Equal(at(110)) {
		t.Errorf("ByFence(c.go, 5) = %+v, want one grant released by alice (forced) at minute 110", g)
	}
	if l.Events != 8 || !l.First.Equal(at(0)) || !l.Last.Equal(at(110)) {
		t.Errorf("log spans %d events %v..%v", l.Events, l.First, l.Last)
	}
}

// Events in any order give the same grants.
func TestBuildSorts(t *testing.T) {
	t.Parallel()
	l := history.Build([]journal.Event{
		ev(10, bob, journal.ActionRelease, "a.go", 1, -1),
		ev(0, bob, journal.ActionAcquire, "a.go", 1, 60),
	})
	if _, ok := shown(t, l, alice, 12, 13, "a.go"); ok {
		t.Fatal("a lock released at minute 10 shows at minute 12")
	}
	if _, ok := shown(t, l, alice, 2, 3, "a.go"); !ok {
		t.Fatal("a lock held from 0 to 10 does not show at minute 2")
	}
}

// What the log does not say is undecided, never free.
func TestUndecided(t *testing.T) {
	t.Parallel()
	l := history.Build([]journal.Event{
		ev(0, bob, journal.ActionAcquire, "old.go", 0, -1),   // an earlier version: no expiry
		ev(30, bob, journal.ActionRelease, "lost.go", 7, -1), // its acquisition is missing
		ev(40, bob, journal.ActionAcquire, "src/**", 2, 50),
	})
	cases := []struct {
		name     string
		from, to int
		path     string
		want     bool // undecided
	}{
		{"no expiry, after the take", 5, 6, "old.go", true},
		{"no expiry, before the take", -5, -4, "old.go", false},
		{"missing acquisition, before the release", 20, 21, "lost.go", true},
		{"missing acquisition, after the release", 31, 32, "lost.go", false},
		{"known pattern grant, within the margin", 39, 41, "src/x.go", false},
	}
	for _, c := range cases {
		v := l.During(at(c.from), at(c.to), alice)
		got := false
		for _, g := range v.Unshown([]string{c.path}) {
			got = got || g.Undecided(v.From, v.To)
		}
		if got != c.want {
			t.Errorf("%s: undecided = %v, want %v", c.name, got, c.want)
		}
	}
	v := l.During(at(39), at(41), alice)
	if u := v.Unshown([]string{"src/x.go"}); len(u) != 1 || u[0].Key != "src/**" {
		t.Errorf("Unshown(src/x.go) during 39..41 = %v, want the pattern grant within the margin", u)
	}
	if u := v.Unshown([]string{"lib/x.go"}); len(u) != 0 {
		t.Errorf("Unshown(lib/x.go) = %v, want none", u)
	}
}

// A path is never read as a key: a file named like a reserved or
// namespaced key is not covered by that key's grants (a branch writer's
// `workflow` lock), and is by a path lock on it.
func TestPathsAreNotKeys(t *testing.T) {
	t.Parallel()
	l := history.Build([]journal.Event{
		ev(0, bob, journal.ActionAcquire, "workflow", 1, 60),
		ev(0, bob, journal.ActionAcquire, "api:x", 1, 60),
		ev(0, bob, journal.ActionAcquire, "Api:Y", 1, 60), // a path key: no such namespace
	})
	for _, p := range []string{"workflow", "api:x"} {
		if g, ok := shown(t, l, alice, 1, 2, p); ok {
			t.Errorf("path %s is covered by %+v", p, g)
		}
		if u := l.During(at(1), at(2), alice).Unshown([]string{p}); len(u) != 0 {
			t.Errorf("path %s: unshown %+v", p, u)
		}
	}
	if _, ok := shown(t, l, alice, 1, 2, "api:y"); !ok {
		t.Error("the path lock on Api:Y does not cover api:y")
	}
}

func TestViewIsAStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := history.Build([]journal.Event{
		ev(0, bob, journal.ActionAcquire, "api:GET /v1/users", 1, 60),
		ev(0, bob, journal.ActionPause, "feature:F1:pause", 1, 60),
		ev(0, alice, journal.ActionAcquire, "api:GET /v1/users", 1, 60), // another clone's store
	})
	v := l.During(at(1), at(2), alice)
	if got, err := v.Get(ctx, "api:GET /v1/users"); err != nil || got.Holder != "alice" {
		t.Errorf("Get = %+v, %v: want alice's own grant first", got, err)
	}
	if _, err := l.During(at(1), at(2), bob).Get(ctx, "api:GET /v1/orders"); !errors.Is(err, locks.ErrNotFound) {
		t.Errorf("Get of an unlocked key = %v, want ErrNotFound", err)
	}
	es, err := v.InNamespace(ctx, "feature")
	if err != nil || len(es) != 1 || es[0].Holder != "bob" {
		t.Errorf("InNamespace(feature) = %+v, %v", es, err)
	}
	if _, _, err := v.Acquire(ctx, locks.Lock{Key: "x"}, at(1)); err == nil {
		t.Error("the view took a lock")
	}
}

// A refresh whose acquisition the log lacks proves the grant live from the
// refresh to its expiry; before the refresh it is undecided.
func TestRefreshWithoutAcquisition(t *testing.T) {
	t.Parallel()
	l := history.Build([]journal.Event{ev(10, bob, journal.ActionRefresh, "a.go", 1, 40)})
	g := l.ByFence("a.go", 1)
	if len(g) != 1 {
		t.Fatalf("grants %+v", g)
	}
	if !g[0].Throughout(at(12), at(20)) {
		t.Error("not live throughout [12, 20], after its refresh at 10")
	}
	if !g[0].Undecided(at(5), at(12)) {
		t.Error("[5, 12] not undecided: the grant may have been live before its refresh")
	}
}

// Two clones' file stores grant a.go fence 1; a forced release of one of
// them cannot tell which ended: both are proven live until it, neither
// after it.
func TestForcedReleaseOfOneOfTwoGrants(t *testing.T) {
	t.Parallel()
	carol := locks.Owner{Holder: "carol", HolderType: "human", Session: "carol"}
	rel := ev(20, carol, journal.ActionRelease, "a.go", 1, -1)
	rel.Details = "forced: was held by alice"
	l := history.Build([]journal.Event{
		ev(0, alice, journal.ActionAcquire, "a.go", 1, 60),
		ev(10, bob, journal.ActionAcquire, "a.go", 1, 70),
		rel,
	})
	for _, g := range l.ByFence("a.go", 1) {
		if !g.Throughout(at(12), at(18)) {
			t.Errorf("%s's grant not live before the release", g.Owner.Holder)
		}
		if g.Throughout(at(25), at(30)) || !g.Undecided(at(25), at(30)) {
			t.Errorf("%s's grant after the release: throughout %v, undecided %v; want undecided", g.Owner.Holder,
				g.Throughout(at(25), at(30)), g.Undecided(at(25), at(30)))
		}
	}
	// Events that name their store pick the grant.
	a := ev(0, alice, journal.ActionAcquire, "a.go", 1, 60)
	b := ev(10, bob, journal.ActionAcquire, "a.go", 1, 70)
	a.Store, b.Store, rel.Store = "git origin refs/lockgate/locks", "redis://h/0", "git origin refs/lockgate/locks"
	l = history.Build([]journal.Event{a, b, rel})
	for _, g := range l.ByFence("a.go", 1) {
		ended := !g.Possibly(at(25), at(30))
		if ended != (g.Owner.Holder == "alice") {
			t.Errorf("%s's grant ended by the release of its store: %v", g.Owner.Holder, ended)
		}
	}
}

// On a shared store fences order the grants of a key: a grant ended before
// the next fence was granted, even when the clock of the machine that
// released it ran ahead, and a release that sorts before its acquisition
// (a forced release from a machine whose clock runs behind) still ends
// that grant.
func TestFencesOrderGrants(t *testing.T) {
	t.Parallel()
	const git = "git origin refs/lockgate/locks"
	shared := func(e journal.Event) journal.Event { e.Store = git; return e }
	l := history.Build([]journal.Event{
		shared(ev(0, alice, journal.ActionAcquire, "a.go", 1, 60)),
		shared(ev(10, bob, journal.ActionAcquire, "a.go", 2, 60)),
		shared(ev(15, alice, journal.ActionRelease, "a.go", 1, -1)), // dated late
		shared(ev(20, bob, journal.ActionRelease, "b.go", 3, -1)),   // forced, dated early
		shared(ev(21, alice, journal.ActionAcquire, "b.go", 3, 90)),
	})
	carol := locks.Owner{Holder: "carol", HolderType: "agent", Session: "carol"}
	if rec, ok := shown(t, l, carol, 11, 14, "a.go"); !ok || rec.Holder != "bob" {
		t.Errorf("a.go at 11-14: %+v, want bob's grant only (alice's fence 1 ended before fence 2)", rec)
	}
	if rec, ok := shown(t, l, carol, 2, 8, "a.go"); !ok || rec.Holder != "alice" {
		t.Errorf("a.go at 2-8: %+v, want alice's grant", rec)
	}
	var b []*history.Grant
	for _, g := range l.Grants() {
		if g.Key == "b.go" {
			b = append(b, g)
		}
	}
	if len(b) != 1 || !b[0].StartKnown || b[0].Owner.Holder != "alice" || !b[0].EndKnown {
		t.Fatalf("b.go grants %+v, want alice's one, ended", b)
	}
	// Each clone's file store counts fences apart: no order between them.
	l = history.Build([]journal.Event{
		ev(0, alice, journal.ActionAcquire, "a.go", 1, 60),
		ev(10, bob, journal.ActionAcquire, "a.go", 2, 60),
	})
	if rec, ok := shown(t, l, carol, 11, 14, "a.go"); !ok || rec.Holder != "alice" {
		t.Errorf("file stores: a.go at 11-14: %+v, want alice's grant, not hidden by another clone's fence", rec)
	}
}

// Every spelling of one file is one key in the log too: a lock taken on
// one spelling covers commits of the others, and a forced release through
// another spelling ends it, as in the stores.
func TestUnicodeSpellings(t *testing.T) {
	t.Parallel()
	l := history.Build([]journal.Event{
		ev(0, bob, journal.ActionAcquire, "Été.txt", 1, 60),
		ev(0, bob, journal.ActionAcquire, "\u212Aelvin2.txt", 2, 60),
		ev(30, alice, journal.ActionRelease, "e\u0301te\u0301.txt", 1, -1), // forced
	})
	covered := func(from, to int, path, key string) bool {
		t.Helper()
		es, err := l.During(at(from), at(to), alice).Covering(context.Background(), []string{path})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(es, func(e locks.Entry) bool { return e.Key == key })
	}
	for p, key := range map[string]string{"été.txt": "Été.txt", "e\u0301te\u0301.txt": "Été.txt", "ÉTÉ.TXT": "Été.txt", "kelvin2.txt": "\u212Aelvin2.txt"} {
		if !covered(1, 2, p, key) {
			t.Errorf("bob's lock on %q does not cover %q", key, p)
		}
	}
	if covered(40, 41, "été.txt", "Été.txt") {
		t.Errorf("été.txt still covered after the release through its NFD spelling")
	}
	if _, err := l.During(at(1), at(2), alice).Get(context.Background(), "E\u0301TE\u0301.txt"); err != nil {
		t.Errorf("Get through another spelling: %v", err)
	}
}
