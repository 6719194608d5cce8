package gitstore

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
	"github.com/lockgate/lockgate/model/locks/record"
)

// objects counts the objects of the repository at dir, loose and packed.
func objects(t *testing.T, dir string) int {
	t.Helper()
	total := 0
	for _, l := range strings.Split(git(t, dir, "count-objects", "-v"), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		if k == "count" || k == "in-pack" {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("count-objects: %q", l)
			}
			total += n
		}
	}
	return total
}

// The ref holds the present only: however many changes made the table,
// the remote's ref reaches one commit, the remote's gc keeps the same
// objects, and a fresh clone's first read fetches the same objects.
func TestFlatHistoryBounded(t *testing.T) {
	type result struct{ commits, remote, fetched int }
	run := func(n int) result {
		url := bareRemote(t)
		churn(t, openClone(t, url, Options{}), n)
		var r result
		var err error
		if r.commits, err = strconv.Atoi(git(t, url, "rev-list", "--count", DefaultRef)); err != nil {
			t.Fatal(err)
		}
		git(t, url, "gc", "-q", "--prune=now")
		r.remote = objects(t, url)
		fresh := openClone(t, url, Options{})
		es, err := fresh.List(context.Background())
		if err != nil || len(es) != 1 || es[0].Key != "live.go" {
			t.Fatalf("after %d changes a fresh clone lists %+v, %v; want live.go alone", n, es, err)
		}
		r.fetched = objects(t, fresh.opts.WorkTree)
		return r
	}
	few, many := run(3), run(41)
	if few.commits != 1 || many.commits != 1 {
		t.Errorf("the ref reaches %d commits after 3 changes and %d after 41, want 1", few.commits, many.commits)
	}
	if many.remote != few.remote {
		t.Errorf("the remote keeps %d objects after gc after 41 changes, %d after 3: want the same", many.remote, few.remote)
	}
	if many.fetched != few.fetched {
		t.Errorf("a fresh clone fetched %d objects after 41 changes, %d after 3: want the same", many.fetched, few.fetched)
	}
}

// A rewind to an older state without history is seen by the clone that
// saw a later one — also by a later process of that clone, through its
// cache — and the push its error prints puts the later state back. A
// table that starts over is another table to that clone.
func TestFlatRewindToOlderState(t *testing.T) {
	url := bareRemote(t)
	s := openClone(t, url, Options{Reuse: -1})
	ctx := context.Background()
	now := time.Now()
	for _, k := range []string{"a.go", "b.go", "c.go"} {
		if _, _, err := s.Acquire(ctx, locktest.NewLock(k, "alice", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
		if k == "b.go" {
			git(t, url, "update-ref", "refs/older", DefaultRef) // kept from gc, as a forge keeps objects a while
		}
	}
	git(t, url, "update-ref", DefaultRef, "refs/older")
	var ue *locks.UnavailableError
	_, err := s.List(ctx)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "(generation 2 of lock table ") || !strings.Contains(err.Error(), "not a later state than") ||
		!strings.Contains(err.Error(), "(generation 3 of lock table ") {
		t.Fatalf("List after a rewind to an older state: %v, want unavailable naming both generations", err)
	}
	again, err := Open(s.opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = again.Get(ctx, "c.go")
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "not a later state than") {
		t.Fatalf("a later process of the clone: %v, want the rewind seen through the cache", err)
	}
	m := regexp.MustCompile("Put it back from this clone: `git (push [^`]*)`").FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no repair command in %v", err)
	}
	git(t, s.opts.WorkTree, strings.Fields(m[1])...)
	es, err := again.List(ctx)
	if err != nil || len(es) != 3 {
		t.Fatalf("after the repair: %+v, %v; want the three locks", es, err)
	}
	// The table starts over: a clone that never saw it starts another.
	git(t, url, "update-ref", "-d", DefaultRef)
	b := openClone(t, url, Options{FenceFloor: func(context.Context) (uint64, error) { return 3, nil }})
	got, _, err := b.Acquire(ctx, locktest.NewLock("d.go", "bob", now, time.Hour), now)
	if err != nil || got.Fence != 4 {
		t.Fatalf("a new table: %+v, %v; want fence 4", got, err)
	}
	if _, err := s.List(ctx); !errors.As(err, &ue) || !strings.Contains(err.Error(), "(generation 1 of lock table ") {
		t.Fatalf("List of another table: %v, want unavailable", err)
	}
}

// chainedTable writes, in a clone of url, the states an older release
// wrote: each a commit on the last, without a stamp, the fence counter
// and a record per lock. It returns the commits, oldest first.
func chainedTable(t *testing.T, url string, keys ...string) []string {
	t.Helper()
	w := clone(t, url)
	git(t, w, "checkout", "-q", "--orphan", "table")
	now := time.Now()
	var commits []string
	for i, k := range keys {
		l := locktest.NewLock(k, "old", now, time.Hour)
		l.Token, l.Fence = "tok-"+k, uint64(i+1)
		data, err := record.Encode(l)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(w, record.Name(k)), string(data))
		mustWrite(t, filepath.Join(w, fenceName), strconv.Itoa(i+1)+"\n")
		git(t, w, "add", "-A")
		git(t, w, "commit", "-q", "-m", "acquire "+k)
		commits = append(commits, git(t, w, "rev-parse", "HEAD"))
	}
	git(t, w, "push", "-q", "-f", "origin", "HEAD:"+DefaultRef)
	return commits
}

// A table an older release wrote is read as it is; the first change
// makes it a stamped state without history. A chained state pushed back
// after that is a rewind, to the store and to Follows (the hooks' judge).
func TestFlatFromChainedTable(t *testing.T) {
	url := bareRemote(t)
	chain := chainedTable(t, url, "a.go", "b.go")
	s := openClone(t, url, Options{Reuse: -1})
	ctx := context.Background()
	now := time.Now()
	es, err := s.List(ctx)
	if err != nil || len(es) != 2 {
		t.Fatalf("List of a chained table: %+v, %v", es, err)
	}
	got, _, err := s.Acquire(ctx, locktest.NewLock("c.go", "alice", now, time.Hour), now)
	if err != nil || got.Fence != 3 {
		t.Fatalf("Acquire on a chained table: %+v, %v; want fence 3", got, err)
	}
	flat := git(t, url, "rev-parse", DefaultRef)
	if n := git(t, url, "rev-list", "--count", DefaultRef); n != "1" {
		t.Fatalf("the first change keeps %s commits, want 1", n)
	}
	for _, c := range []struct {
		from, to string
		ok       bool
		why      string
	}{
		{chain[0], chain[1], true, ""},
		{chain[1], chain[0], false, "which does not contain it"},
		{chain[1], flat, true, ""},
		{flat, chain[1], false, "older release's format"},
		{flat, flat, true, ""},
	} {
		ok, why, err := Follows(ctx, url, c.from, c.to)
		if err != nil || ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("Follows(%.7s, %.7s) = %v, %q, %v; want %v, %q", c.from, c.to, ok, why, err, c.ok, c.why)
		}
	}
	git(t, url, "update-ref", DefaultRef, chain[1])
	var ue *locks.UnavailableError
	if _, err := s.List(ctx); !errors.As(err, &ue) || !strings.Contains(err.Error(), "older release's format") {
		t.Fatalf("List after a chained state came back: %v, want unavailable", err)
	}
}

// A table of a format this release does not know is refused, saying to
// upgrade; a stamp lockgate did not write is refused too.
func TestFlatUnknownStamp(t *testing.T) {
	for stamp, want := range map[string]string{
		"lockgate lock table\nformat 3\nanything\n":                                          "upgrade lockgate",
		"lockgate lock table\nformat 2\nid 00112233445566778899aabbccddeeff\ngeneration 0\n": "not a number above 0",
		"hello\n": "not a lock table stamp",
	} {
		url := bareRemote(t)
		chain := chainedTable(t, url, "a.go")
		w := clone(t, url)
		git(t, w, "fetch", "-q", "origin", DefaultRef)
		git(t, w, "checkout", "-q", "FETCH_HEAD")
		mustWrite(t, filepath.Join(w, stampName), stamp)
		git(t, w, "add", "-A")
		git(t, w, "commit", "-q", "-m", "stamp")
		git(t, w, "push", "-q", "origin", "HEAD:"+DefaultRef)
		var ue *locks.UnavailableError
		if _, err := openClone(t, url, Options{}).Get(context.Background(), "a.go"); !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
			t.Errorf("stamp %q: %v, want unavailable saying %q", stamp, err, want)
		}
		if _, _, err := Follows(context.Background(), url, chain[0], git(t, w, "rev-parse", "HEAD")); err == nil {
			t.Errorf("stamp %q: Follows judged a state it cannot read", stamp)
		}
	}
}

// A remote that lets the ref only move forward (a branch under
// receive.denyNonFastForwards) refuses every change after the first;
// the error says why and what to do.
func TestFlatRemoteRefusesReplacing(t *testing.T) {
	url := bareRemote(t)
	git(t, url, "config", "receive.denyNonFastForwards", "true")
	s := openClone(t, url, Options{Ref: "refs/heads/lockgate-locks"})
	ctx := context.Background()
	now := time.Now()
	if _, _, err := s.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Acquire(ctx, locktest.NewLock("b.go", "alice", now, time.Hour), now)
	var ue *locks.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "allow forced updates of refs/heads/lockgate-locks") {
		t.Fatalf("Acquire on a remote that refuses forced updates: %v, want unavailable saying so", err)
	}
}

// A snapshot written by a release before the stamp still guards the
// state it names: it reads as a chained state.
func TestSnapshotVersion1(t *testing.T) {
	tb := emptyTable()
	tb.commit, tb.fence = "0123456789012345678901234567890123456789", 5
	tb.recs["a.go.lock"] = newRecord("a.go.lock", "2222222222222222222222222222222222222222", []byte(`{"key":"a.go"}`))
	v2 := encodeSnapshot(tb, time.Unix(1700000000, 0))
	// Version 1 is version 2 without format, table and generation.
	v1 := []byte(snapMagic + "\x01")
	rest := v2[len(snapMagic)+1:]
	head := 1 + len(tb.commit) + 1 // commit, fence
	v1 = append(v1, rest[:head]...)
	v1 = append(v1, rest[head+3:]...) // format 0, table "", generation 0
	got, _, err := decodeSnapshot(v1)
	if err != nil || got.commit != tb.commit || got.fence != 5 || got.stamp.Format != formatChain || len(got.recs) != 1 {
		t.Fatalf("version 1: %+v, %v", got, err)
	}
}

func TestParseStamp(t *testing.T) {
	st := Stamp{Format: formatFlat, Table: "00112233445566778899aabbccddeeff", Generation: 12}
	got, err := parseStamp(st.encode())
	if err != nil || got != st {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for _, bad := range []string{
		"", "lockgate lock table\n", "lockgate lock table\nformat 02\n",
		"lockgate lock table\nformat 1\n",
		"lockgate lock table\nformat 2\nid 00112233445566778899aabbccddeeff\ngeneration 12",
		"lockgate lock table\nformat 2\nid 00112233445566778899AABBCCDDEEFF\ngeneration 12\n",
		"lockgate lock table\nformat 2\nid 00112233445566778899aabbccddeeff\ngeneration 012\n",
		"lockgate lock table\nformat 2\nid 00112233445566778899aabbccddeeff\ngeneration 18446744073709551616\n",
		"lockgate lock table\nformat 2\nid 00112233445566778899aabbccddeeff\ngeneration 12\nmore\n",
	} {
		if got, err := parseStamp([]byte(bad)); err == nil {
			t.Errorf("%q read as %+v", bad, got)
		}
	}
	if _, err := (Stamp{Format: formatFlat, Table: st.Table, Generation: 1<<64 - 1}).next(); err == nil {
		t.Error("the generation after the last one was handed out")
	}
}

func FuzzParseStamp(f *testing.F) {
	f.Add(Stamp{Format: formatFlat, Table: "00112233445566778899aabbccddeeff", Generation: 12}.encode())
	f.Add([]byte("lockgate lock table\nformat 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseStamp(data)
		if err != nil {
			return
		}
		// What reads is a stamp lockgate writes, byte for byte.
		if !st.valid() || string(st.encode()) != string(data) {
			t.Fatalf("%q read as %+v", data, st)
		}
	})
}

// A commit made by hand on top of the state a clone saw (a record pushed
// with git, the stamp copied along) is a later state to that clone and to
// Follows; the same tree pushed as a commit of its own is not.
func TestFlatHandCommitOnTop(t *testing.T) {
	url := bareRemote(t)
	s := openClone(t, url, Options{Reuse: -1})
	ctx := context.Background()
	now := time.Now()
	for _, k := range []string{"a.go", "b.go"} {
		if _, _, err := s.Acquire(ctx, locktest.NewLock(k, "alice", now, time.Hour), now); err != nil {
			t.Fatal(err)
		}
	}
	seen := git(t, url, "rev-parse", DefaultRef)
	w := clone(t, url)
	git(t, w, "fetch", "-q", "origin", DefaultRef)
	git(t, w, "checkout", "-q", "FETCH_HEAD")
	mustWrite(t, filepath.Join(w, "%ZZ.lock"), "garbage")
	git(t, w, "add", ".")
	git(t, w, "commit", "-q", "-m", "by hand")
	git(t, w, "push", "-q", "origin", "HEAD:"+DefaultRef)
	onTop := git(t, w, "rev-parse", "HEAD")
	if es, err := s.List(ctx); err != nil || len(es) != 3 {
		t.Fatalf("List after a commit on top: %+v, %v; want three records", es, err)
	}
	if ok, why, err := Follows(ctx, url, seen, onTop); !ok || err != nil {
		t.Fatalf("Follows of a commit on top: %v, %q, %v", ok, why, err)
	}
	git(t, w, "checkout", "-q", "--orphan", "alone")
	git(t, w, "commit", "-q", "-m", "the same tree, alone")
	git(t, w, "push", "-q", "-f", "origin", "HEAD:"+DefaultRef)
	alone := git(t, w, "rev-parse", "HEAD")
	var ue *locks.UnavailableError
	if _, err := s.List(ctx); !errors.As(err, &ue) || !strings.Contains(err.Error(), "not a later state than") {
		t.Fatalf("List after a state of the same generation, not on top: %v, want unavailable", err)
	}
	if ok, why, err := Follows(ctx, url, onTop, alone); ok || err != nil || !strings.Contains(why, "not after generation 2") {
		t.Fatalf("Follows of a state of the same generation, not on top: %v, %q, %v", ok, why, err)
	}
}
