package gitstore

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/locktest"
)

// The ref holds one blob per lock at the file store's names, the fence
// counter, the stamp, and nothing else; each change is one commit without
// parents, one generation after the last.
func TestTreeLayout(t *testing.T) {
	url := bareRemote(t)
	s := openClone(t, url, Options{})
	ctx := context.Background()
	now := time.Now()
	m := &locks.Manager{Store: s, Now: func() time.Time { return now }}
	me := locks.Owner{Holder: "alice", HolderType: "agent", Session: "s1"}
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"src/A.go", "docs/**", "db:migration-slot"}, Owner: me, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	files := git(t, url, "ls-tree", "-r", "--name-only", DefaultRef)
	want := "fence\nkeys/db%3Amigration-slot.lock\npatterns/docs%2F%2A%2A.lock\nsrc%2Fa.go.lock\ntable"
	if files != want {
		t.Fatalf("tree:\n%s\nwant:\n%s", files, want)
	}
	if got := git(t, url, "cat-file", "blob", DefaultRef+":fence"); got != "3" {
		t.Fatalf("fence = %q, want 3", got)
	}
	if n := git(t, url, "rev-list", "--count", DefaultRef); n != "1" {
		t.Fatalf("%s commits for one acquisition of three keys, want 1", n)
	}
	rec := git(t, url, "cat-file", "blob", DefaultRef+":src%2Fa.go.lock")
	if !strings.Contains(rec, `"key":"src/A.go"`) || !strings.Contains(rec, `"holder":"alice"`) {
		t.Fatalf("record: %s", rec)
	}
	if _, err := m.Release(ctx, []string{"src/A.go", "docs/**"}, me, false); err != nil {
		t.Fatal(err)
	}
	if n := git(t, url, "rev-list", "--count", DefaultRef); n != "1" {
		t.Fatalf("%s commits after one release of two keys, want 1", n)
	}
	stamp := git(t, url, "cat-file", "blob", DefaultRef+":table")
	if !regexp.MustCompile(`^lockgate lock table\nformat 2\nid [0-9a-f]{32}\ngeneration 2$`).MatchString(stamp) {
		t.Fatalf("stamp after two changes:\n%s", stamp)
	}
	if got := git(t, url, "log", "-1", "--format=%s", DefaultRef); got != "release src/A.go, release docs/**" {
		t.Fatalf("subject %q", got)
	}
}

// A lock is taken over only once it expired more than the clock skew ago,
// judged on the writer's clock.
func TestClockSkew(t *testing.T) {
	s := openClone(t, bareRemote(t), Options{ClockSkew: 2 * time.Second})
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	old, _, err := s.Acquire(ctx, locktest.NewLock("task:T", "old", t0, time.Minute), t0)
	if err != nil {
		t.Fatal(err)
	}
	exp := old.ExpiresAt
	for _, at := range []time.Time{exp.Add(time.Second), exp.Add(2 * time.Second)} {
		_, _, err := s.Acquire(ctx, locktest.NewLock("task:T", "new", at, time.Minute), at)
		var held *locks.HeldError
		if !errors.As(err, &held) || held.Lock.Token != old.Token {
			t.Fatalf("at expiry+%s: %v, want held by the old lock", at.Sub(exp), err)
		}
	}
	at := exp.Add(2*time.Second + time.Millisecond)
	got, prev, err := s.Acquire(ctx, locktest.NewLock("task:T", "new", at, time.Minute), at)
	if err != nil || prev == nil || prev.Token != old.Token || got.Fence <= old.Fence {
		t.Fatalf("past the skew: %+v, prev %+v, %v; want a takeover", got, prev, err)
	}
}

// Anything in the tree that lockgate does not write makes the state
// unreadable: exit 3, never a free key.
func TestForeignTree(t *testing.T) {
	url := bareRemote(t)
	s := openClone(t, url, Options{})
	ctx := context.Background()
	now := time.Now()
	if _, _, err := s.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	// Someone pushes a commit with a README and a nested directory.
	w := clone(t, url)
	git(t, w, "fetch", "-q", "origin", DefaultRef)
	git(t, w, "checkout", "-q", "FETCH_HEAD")
	mustWrite(t, filepath.Join(w, "deep", "er", "x.lock"), "{}")
	git(t, w, "add", "-f", ".")
	git(t, w, "commit", "-q", "-m", "hand edit")
	git(t, w, "push", "-q", "origin", "HEAD:"+DefaultRef)
	other := openClone(t, url, Options{})
	_, err := other.Get(ctx, "a.go")
	var ue *locks.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "deep") {
		t.Fatalf("Get after a foreign commit: %v, want unavailable naming the foreign entry", err)
	}
	if _, _, err := other.Acquire(ctx, locktest.NewLock("b.go", "bob", now, time.Hour), now); !errors.As(err, &ue) {
		t.Fatalf("Acquire after a foreign commit: %v, want unavailable", err)
	}
}

// A damaged record is never free: it is listed, refuses takers, and is
// removed by key.
func TestCorruptRecord(t *testing.T) {
	url := bareRemote(t)
	s := openClone(t, url, Options{})
	ctx := context.Background()
	now := time.Now()
	if _, _, err := s.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	w := clone(t, url)
	git(t, w, "fetch", "-q", "origin", DefaultRef)
	git(t, w, "checkout", "-q", "FETCH_HEAD")
	mustWrite(t, filepath.Join(w, "a.go.lock"), `{"key":"a.go","holder":`)
	git(t, w, "commit", "-q", "-a", "-m", "truncate")
	git(t, w, "push", "-q", "origin", "HEAD:"+DefaultRef)
	other := openClone(t, url, Options{})
	var ce *locks.CorruptError
	if _, _, err := other.Acquire(ctx, locktest.NewLock("a.go", "bob", now, time.Hour), now); !errors.As(err, &ce) {
		t.Fatalf("Acquire of a corrupt record: %v, want corrupt", err)
	}
	es, err := other.Covering(ctx, []string{"a.go"})
	if err != nil || len(es) != 1 || es[0].Err == nil {
		t.Fatalf("Covering: %+v, %v; want the corrupt entry", es, err)
	}
	if !errors.As(es[0].Err, &ce) || ce.Path != "git origin refs/lockgate/locks:a.go.lock" {
		t.Fatalf("corrupt record at %q, want where it is on the remote", ce.Path)
	}
	if _, err := other.Remove(ctx, "a.go"); !errors.As(err, &ce) {
		t.Fatalf("Remove: %v, want the corrupt error after removing", err)
	}
	if _, _, err := other.Acquire(ctx, locktest.NewLock("a.go", "bob", now, time.Hour), now); err != nil {
		t.Fatalf("Acquire after Remove: %v", err)
	}
}

// A remote that accepts the connection and never answers is given up on
// after the timeout, as unavailable.
func TestTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, silent
		}
	}()
	s := openClone(t, "git://"+l.Addr().String()+"/remote.git", Options{Timeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	now := time.Now()
	var ue *locks.UnavailableError
	if _, _, err := s.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now); !errors.As(err, &ue) {
		t.Fatalf("Acquire: %v, want unavailable", err)
	}
	if _, err := s.List(ctx); !errors.As(err, &ue) || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "within 300ms (locks.git.timeout)") {
		t.Fatalf("List: %v, want unavailable after the deadline, saying so", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the store's timeout did not end the exchange")
	}
}

// An uncontended acquisition costs one fetch and one push; reads of one
// command share one question to the remote.
func TestRoundTrips(t *testing.T) {
	url := bareRemote(t)
	dir := clone(t, url)
	log := filepath.Join(t.TempDir(), "calls")
	for _, svc := range []string{"upload-pack", "receive-pack"} {
		wrapper := filepath.Join(t.TempDir(), svc)
		script := "#!/bin/sh\necho " + svc + " >> '" + log + "'\nexec git " + svc + " \"$@\"\n"
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		key := map[string]string{"upload-pack": "uploadpack", "receive-pack": "receivepack"}[svc]
		git(t, dir, "config", "remote.origin."+key, wrapper)
	}
	calls := func() string {
		data, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Join(strings.Fields(string(data)), " ")
	}
	s, err := Open(Options{GitDir: filepath.Join(dir, ".git"), WorkTree: dir, Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	m := &locks.Manager{Store: s, Now: func() time.Time { return now }}
	me := locks.Owner{Holder: "alice", HolderType: "agent", Session: "s1"}
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"a.go", "b.go"}, Owner: me, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if got := calls(); got != "upload-pack receive-pack" {
		t.Fatalf("acquire of two keys talked to the remote as %q, want one fetch and one push", got)
	}
	// A reuse window no busy machine outlasts: the reads share one
	// question however long each takes.
	s2, err := Open(Options{GitDir: filepath.Join(dir, ".git"), WorkTree: dir, Remote: "origin", Reuse: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s2.Covering(ctx, []string{"a.go"}); err != nil {
			t.Fatal(err)
		}
	}
	// The clone has the state its own push made: one question, no fetch.
	if got := calls(); got != "upload-pack" {
		t.Fatalf("three reads talked to the remote as %q, want one ls-remote", got)
	}
}

func mustWrite(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A push the remote does not answer in time may still have gone through:
// the error says so (UncertainError), so that the Manager keeps the
// command's intent for the next command to settle.
func TestUncertainPush(t *testing.T) {
	url := bareRemote(t)
	mustWrite(t, filepath.Join(url, "hooks", "pre-receive"), "#!/bin/sh\ncat >/dev/null\nsleep 3\n")
	if err := os.Chmod(filepath.Join(url, "hooks", "pre-receive"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := openClone(t, url, Options{Timeout: time.Second})
	ctx := context.Background()
	now := time.Now()
	_, _, err := s.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now)
	var ue *locks.UncertainError
	var un *locks.UnavailableError
	if !errors.As(err, &ue) || !errors.As(err, &un) || !strings.Contains(err.Error(), "no answer from origin within 1s") {
		t.Fatalf("Acquire: %v, want an uncertain, unavailable push", err)
	}
}

// A ref that went back — deleted, or forced to an older state — is not
// read as "no locks": the clone knows the state it saw last.
func TestRefWentBack(t *testing.T) {
	url := bareRemote(t)
	s := openClone(t, url, Options{Reuse: -1})
	ctx := context.Background()
	now := time.Now()
	if _, _, err := s.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	first := git(t, url, "rev-parse", DefaultRef)
	if _, _, err := s.Acquire(ctx, locktest.NewLock("b.go", "alice", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	var ue *locks.UnavailableError
	git(t, url, "update-ref", DefaultRef, first) // forced back
	if _, err := s.List(ctx); !errors.As(err, &ue) || !strings.Contains(err.Error(), "(generation 1 of lock table ") || !strings.Contains(err.Error(), "not a later state than") {
		t.Fatalf("List after a rewind: %v, want unavailable", err)
	}
	git(t, url, "update-ref", "-d", DefaultRef) // deleted
	if _, _, err := s.Acquire(ctx, locktest.NewLock("c.go", "bob", now, time.Hour), now); !errors.As(err, &ue) || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("Acquire after a deletion: %v, want unavailable", err)
	}
	// A clone that never saw the newer state cannot tell, and reads it.
	if es, err := openClone(t, url, Options{}).List(ctx); err != nil || len(es) != 0 {
		t.Fatalf("a new clone: %+v, %v", es, err)
	}
}

// Fetches and pushes that reach different repositories (a pushurl) are not
// contention: the first lost lease whose state a fetch still shows says so.
func TestPushURLElsewhere(t *testing.T) {
	url, other := bareRemote(t), bareRemote(t)
	s := openClone(t, url, Options{})
	ctx := context.Background()
	now := time.Now()
	if _, _, err := s.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	git(t, s.opts.WorkTree, "config", "remote.origin.pushurl", other)
	git(t, s.opts.WorkTree, "push", "-q", other, git(t, url, "rev-parse", DefaultRef)+":"+DefaultRef)
	// other's ref moves on, url's stays: every lease fails.
	o := openClone(t, other, Options{})
	if _, _, err := o.Acquire(ctx, locktest.NewLock("x.go", "x", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Acquire(ctx, locktest.NewLock("b.go", "alice", now, time.Hour), now)
	var ue *locks.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "pushurl") {
		t.Fatalf("Acquire: %v, want the URLs named", err)
	}
}

// A password in a remote URL is never printed or recorded.
func TestRemotePasswordHidden(t *testing.T) {
	s, err := Open(Options{GitDir: t.TempDir(), Remote: "https://ann:s3cret@forge.example/r.git", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []string{s.Remote(), s.Where("a.go"), s.unavailable("x", errors.New("y")).Error()} {
		if strings.Contains(got, "s3cret") || !strings.Contains(got, "ann:xxxxx@forge.example") {
			t.Errorf("%q shows the password or hides too much", got)
		}
	}
}

// lock check agrees with acquire: a lock expired by less than the clock
// skew is still held.
func TestCheckHonoursClockSkew(t *testing.T) {
	s := openClone(t, bareRemote(t), Options{ClockSkew: 2 * time.Second, Reuse: -1})
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	at := t0
	m := &locks.Manager{Store: s, Now: func() time.Time { return at }}
	alice := locks.Owner{Holder: "alice", HolderType: "agent", Session: "alice"}
	bob := locks.Owner{Holder: "bob", HolderType: "agent", Session: "bob"}
	if _, err := m.Acquire(ctx, locks.Request{Keys: []string{"task:T"}, Owner: alice, TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		after time.Duration
		want  locks.KeyState
	}{{time.Minute + time.Second, locks.StateHeld}, {time.Minute + 3*time.Second, locks.StateFree}} {
		at = t0.Add(c.after)
		st, err := m.Check(ctx, []string{"task:T"}, bob)
		if err != nil || st[0].State != c.want {
			t.Errorf("check %s after: %+v, %v; want %s", c.after, st, err, c.want)
		}
		_, err = m.Acquire(ctx, locks.Request{Keys: []string{"task:T"}, Owner: bob, TTL: time.Minute})
		if held := errors.As(err, new(*locks.HeldError)); held != (c.want == locks.StateHeld) {
			t.Errorf("acquire %s after: %v; check said %s", c.after, err, c.want)
		}
	}
}

// A record lockgate did not write, at another spelling of a key's name
// (another directory, other letter case), is that key's corrupt record for
// every reader, and blocks no other key; clearing the key removes it. A
// name that is no key's record blocks nothing.
func TestMisplacedRecord(t *testing.T) {
	url := bareRemote(t)
	s := openClone(t, url, Options{})
	ctx := context.Background()
	now := time.Now()
	if _, _, err := s.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now); err != nil {
		t.Fatal(err)
	}
	w := clone(t, url)
	git(t, w, "fetch", "-q", "origin", DefaultRef)
	git(t, w, "checkout", "-q", "FETCH_HEAD")
	if err := os.MkdirAll(filepath.Join(w, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(w, "patterns"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(w, "keys", "src%2Ff5.go.lock"), "garbage")
	mustWrite(t, filepath.Join(w, "SRC%2FG.go.lock"), `{"key":"src/g.go","holder":"x"}`)
	mustWrite(t, filepath.Join(w, "lib%2F%2A.lock"), "garbage") // lib/*, outside patterns/
	mustWrite(t, filepath.Join(w, "patterns", "doc%2F%2A%2A.lock"), "garbage")
	mustWrite(t, filepath.Join(w, "%ZZ.lock"), "garbage")
	git(t, w, "add", ".")
	git(t, w, "commit", "-q", "-m", "by hand")
	git(t, w, "push", "-q", "origin", "HEAD:"+DefaultRef)
	other := openClone(t, url, Options{})
	blocked := map[string]string{ // key → the record that blocks it
		"src/f5.go":  "keys/src%2Ff5.go.lock",
		"SRC/F5.GO":  "keys/src%2Ff5.go.lock",
		"src/g.go":   "SRC%2FG.go.lock",
		"lib/x.go":   "lib%2F%2A.lock",
		"doc/a/b.md": "patterns/doc%2F%2A%2A.lock",
	}
	for key, name := range blocked {
		es, err := other.Overlapping(ctx, key)
		if err != nil || len(es) != 1 || es[0].Name != name || es[0].Err == nil {
			t.Errorf("Overlapping %s: %+v, %v; want the corrupt %s", key, es, err, name)
		}
		es, err = other.Covering(ctx, []string{key})
		if err != nil || len(es) != 1 || es[0].Name != name || es[0].Err == nil {
			t.Errorf("Covering %s: %+v, %v; want the corrupt %s", key, es, err, name)
		}
	}
	for _, key := range []string{"src/f5.go", "SRC/F5.GO", "src/g.go"} { // the Manager asks Overlapping for the rest
		var ce *locks.CorruptError
		if _, _, err := other.Acquire(ctx, locktest.NewLock(key, "bob", now, time.Hour), now); !errors.As(err, &ce) || !strings.HasSuffix(ce.Path, ":"+blocked[key]) {
			t.Errorf("Acquire %s: %v, want corrupt at %s", key, err, blocked[key])
		}
	}
	if _, err := other.Get(ctx, "src/g.go"); !errors.As(err, new(*locks.CorruptError)) {
		t.Errorf("Get src/g.go: %v, want corrupt", err)
	}
	for _, key := range []string{"src/h.go", "task:T1", "zz", "other/**", "doc.md"} {
		if es, err := other.Overlapping(ctx, key); err != nil || len(es) != 0 {
			t.Errorf("Overlapping %s: %+v, %v; want nothing", key, es, err)
		}
		if es, err := other.Covering(ctx, []string{key}); err != nil || len(es) != 0 {
			t.Errorf("Covering %s: %+v, %v; want nothing", key, es, err)
		}
	}
	if _, err := other.Remove(ctx, "src/f5.go"); !errors.As(err, new(*locks.CorruptError)) {
		t.Fatalf("Remove src/f5.go: %v, want the corrupt error after removing", err)
	}
	if _, _, err := other.Acquire(ctx, locktest.NewLock("src/f5.go", "bob", now, time.Hour), now); err != nil {
		t.Fatalf("Acquire after Remove: %v", err)
	}
	if _, err := other.RemoveRecord(ctx, other.where("%ZZ.lock")); err != nil {
		t.Fatalf("RemoveRecord: %v", err)
	}
	es, err := other.List(ctx)
	if err != nil || slices.ContainsFunc(es, func(e locks.Entry) bool { return e.Name == "%ZZ.lock" }) {
		t.Fatalf("List after RemoveRecord: %+v, %v", es, err)
	}
}

// A table that starts over (the ref deleted on the remote) starts above
// the fence floor: no fence of the lost table is handed out again.
func TestFenceFloor(t *testing.T) {
	url := bareRemote(t)
	ctx := context.Background()
	now := time.Now()
	a := openClone(t, url, Options{})
	held, _, err := a.Acquire(ctx, locktest.NewLock("a.go", "alice", now, time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	git(t, url, "update-ref", "-d", DefaultRef)
	floor := func(context.Context) (uint64, error) { return held.Fence + 40, nil }
	b := openClone(t, url, Options{FenceFloor: floor})
	got, _, err := b.Acquire(ctx, locktest.NewLock("a.go", "bob", now, time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fence != held.Fence+41 {
		t.Fatalf("first fence of a new table: %d, want %d", got.Fence, held.Fence+41)
	}
	// The floor counts only when the table starts: later changes keep
	// counting from the table's own counter.
	c := openClone(t, url, Options{FenceFloor: func(context.Context) (uint64, error) { return 0, errors.New("not asked") }})
	if next, _, err := c.Acquire(ctx, locktest.NewLock("b.go", "carol", now, time.Hour), now); err != nil || next.Fence != got.Fence+1 {
		t.Fatalf("next fence: %d, %v; want %d", next.Fence, err, got.Fence+1)
	}
	// A floor that cannot be read fails the change.
	git(t, url, "update-ref", "-d", DefaultRef)
	d := openClone(t, url, Options{FenceFloor: func(context.Context) (uint64, error) { return 0, errors.New("log unreadable") }})
	var ue *locks.UnavailableError
	if _, _, err := d.Acquire(ctx, locktest.NewLock("c.go", "dave", now, time.Hour), now); !errors.As(err, &ue) || !strings.Contains(err.Error(), "log unreadable") {
		t.Fatalf("Acquire with an unreadable floor: %v, want unavailable", err)
	}
}
