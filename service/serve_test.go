package service

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/lockops"
	"github.com/lockgate/lockgate/service/serveusers"
)

// lfsUser is f's workspace acting as the serve user name of type typ.
func lfsUser(t *testing.T, f *lockFixture, name, typ string) *Workspace {
	t.Helper()
	u, err := f.as("server").As(ServeUser{Name: name, Type: typ})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestLFSLocks(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	alice := lfsUser(t, f, "alice", "human")
	bob := lfsUser(t, f, "bob", "agent")

	l, err := alice.LFSCreateLock(ctx, LFSCreateRequest{Path: "src/a.go"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Path != "src/a.go" || l.Owner.Name != "alice" || !strings.HasPrefix(l.ID, lfsKeyID("src/a.go")+".") {
		t.Fatalf("created %+v", l)
	}
	// A git-lfs lock is a lockgate path lock of the user, with its type's TTL.
	held, err := f.as("viewer").Locks().List(ctx, lockops.ListRequest{})
	if err != nil || len(held.Rows) != 1 || held.Rows[0].Holder != "alice" || held.Rows[0].HolderType != "human" {
		t.Fatalf("lock list = %+v, %v", held.Rows, err)
	}
	want, err := alice.Locks().DefaultTTL(mustKeys(t, alice, "src/a.go"))
	if err != nil {
		t.Fatal(err)
	}
	if got := held.Rows[0].ExpiresAt.Sub(held.Rows[0].CreatedAt); got != want {
		t.Errorf("TTL %v, want the human default %v", got, want)
	}

	// Locked again by its holder: renewed, the same grant and id.
	f.clock.Add(60e9)
	again, err := alice.LFSCreateLock(ctx, LFSCreateRequest{Path: "src/a.go"})
	if err != nil || again.ID != l.ID {
		t.Fatalf("relock = %+v, %v; want id %s", again, err, l.ID)
	}

	_, err = bob.LFSCreateLock(ctx, LFSCreateRequest{Path: "src/a.go"})
	var he *locks.HeldError
	if !errors.As(err, &he) || LFSLockOf(he.Lock).ID != l.ID {
		t.Fatalf("bob's lock: %v, want a HeldError naming %s", err, l.ID)
	}
	for _, p := range []string{"../x", "/etc/passwd", "src/../../x", "", "src//a.go"} {
		_, err := bob.LFSCreateLock(ctx, LFSCreateRequest{Path: p})
		wantErr[*UsageError](t, err)
	}

	// A lock taken from the command line is a git-lfs lock too.
	f.take(f.as("carol"), "src/b.go")
	list, err := bob.LFSListLocks(ctx, LFSListRequest{})
	if err != nil || len(list.Locks) != 2 || list.Locks[1].Owner.Name != "carol" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	one, err := bob.LFSListLocks(ctx, LFSListRequest{ID: l.ID})
	if err != nil || len(one.Locks) != 1 || one.Locks[0].Path != "src/a.go" {
		t.Fatalf("list by id = %+v, %v", one, err)
	}
	byPath, err := bob.LFSListLocks(ctx, LFSListRequest{Path: "src/b.go"})
	if err != nil || len(byPath.Locks) != 1 || byPath.Locks[0].Owner.Name != "carol" {
		t.Fatalf("list by path = %+v, %v", byPath, err)
	}
	p1, err := bob.LFSListLocks(ctx, LFSListRequest{Limit: 1})
	if err != nil || len(p1.Locks) != 1 || p1.NextCursor == "" {
		t.Fatalf("page 1 = %+v, %v", p1, err)
	}
	p2, err := bob.LFSListLocks(ctx, LFSListRequest{Limit: 1, Cursor: p1.NextCursor})
	if err != nil || len(p2.Locks) != 1 || p2.NextCursor != "" || p2.Locks[0].Path != "src/b.go" {
		t.Fatalf("page 2 = %+v, %v", p2, err)
	}
	_, err = bob.LFSListLocks(ctx, LFSListRequest{Cursor: "x"})
	wantErr[*UsageError](t, err)

	v, err := alice.LFSVerifyLocks(ctx, LFSVerifyRequest{})
	if err != nil || len(v.Ours) != 1 || v.Ours[0].ID != l.ID || len(v.Theirs) != 1 || v.Theirs[0].Owner.Name != "carol" {
		t.Fatalf("verify = %+v, %v", v, err)
	}

	_, err = bob.LFSUnlock(ctx, LFSUnlockRequest{ID: l.ID})
	wantErr[*locks.NotOwnerError](t, err)
	_, err = bob.LFSUnlock(ctx, LFSUnlockRequest{ID: "0123"})
	wantErr[*LFSNotFoundError](t, err)
	if _, err := alice.LFSUnlock(ctx, LFSUnlockRequest{ID: l.ID}); err != nil {
		t.Fatal(err)
	}
	// Forced: another worker's lock cleared by an admin, and logged as a
	// clear; a user who is no admin is refused.
	carols := list.Locks[1]
	_, err = bob.LFSUnlock(ctx, LFSUnlockRequest{ID: carols.ID, Force: true})
	wantErr[*lockops.ForceRefusedError](t, err)
	bob, err = f.as("server").As(ServeUser{Name: "bob", Type: "agent", Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.LFSUnlock(ctx, LFSUnlockRequest{ID: carols.ID, Force: true}); err != nil {
		t.Fatal(err)
	}
	left, err := bob.LFSListLocks(ctx, LFSListRequest{})
	if err != nil || len(left.Locks) != 0 {
		t.Fatalf("left = %+v, %v", left, err)
	}
	evs, err := bob.AllEvents(ctx, f.clock.Now().Add(-3600e9))
	if err != nil {
		t.Fatal(err)
	}
	cleared := false
	for _, ev := range evs {
		cleared = cleared || (ev.Action == "lock_clear" && ev.Key == "src/b.go" && ev.Worker == "bob")
	}
	if !cleared {
		t.Errorf("no lock_clear event of src/b.go by bob in %+v", evs)
	}
}

func TestLFSLockIDNamesAGrant(t *testing.T) {
	a := locks.Lock{Key: "src/a.go", Fence: 7, Token: "t1"}
	b := a
	b.Holder, b.ExpiresAt, b.Fence = "someone else", b.ExpiresAt.Add(1), 8
	if lfsLockID(a) != lfsLockID(b) {
		t.Error("the id changed with the holder, expiry or fence of one grant")
	}
	b.Token = "t2"
	if lfsLockID(a) == lfsLockID(b) {
		t.Error("two grants of one key share an id")
	}
	c := locks.Lock{Key: "src/a.go\x00", Fence: 7, Token: "t1"}
	if lfsLockID(a) == lfsLockID(c) {
		t.Error("two keys share an id")
	}
	for _, l := range []locks.Lock{a, c, {Key: "é/ü.psd", Token: "t"}} {
		if k, ok := lfsIDKey(lfsLockID(l)); !ok || k != l.Key {
			t.Errorf("the id of %q names %q, %v", l.Key, k, ok)
		}
	}
}

func mustKeys(t *testing.T, e *Workspace, args ...string) []lockkey.Key {
	t.Helper()
	ks, err := e.ToolKeys("", args)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

// TestEventsFromAcrossRotation: a stream's cursor in a segment that was
// rotated away since reads the rest of that segment before the new one:
// no event recorded before the rotation is skipped, none twice.
func TestEventsFromAcrossRotation(t *testing.T) {
	f := newLockFixture(t)
	e := f.as("admin")
	j := e.JournalFile()
	ev := func(key string) journal.Event {
		return journal.Event{ID: journal.NewID(), Timestamp: time.Now().UTC(), Worker: "w", Action: journal.ActionAcquire, Key: key}
	}
	if err := j.Append(ev("a")); err != nil {
		t.Fatal(err)
	}
	first, at, err := e.EventsFrom(LogRequest{}, JournalCursor{})
	if err != nil || len(first) != 1 {
		t.Fatalf("the first read: %v %v", first, err)
	}
	if err := j.Append(ev("b")); err != nil { // after the cursor, before the rotation
		t.Fatal(err)
	}
	rotated, err := j.Rotate(1, func([]journal.Event) (bool, error) { return true, nil })
	if err != nil || !rotated {
		t.Fatalf("rotate: %v %v", rotated, err)
	}
	if err := j.Append(ev("c")); err != nil {
		t.Fatal(err)
	}
	next, at, err := e.EventsFrom(LogRequest{}, at)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, ev := range next {
		keys = append(keys, ev.Key)
	}
	if !slices.Equal(keys, []string{"b", "c"}) {
		t.Fatalf("after the rotation the stream read %q, want [b c]", keys)
	}
	if again, _, err := e.EventsFrom(LogRequest{}, at); err != nil || len(again) != 0 {
		t.Fatalf("read again from the new cursor: %v %v, want nothing", again, err)
	}
}

// TestServeUsersLiveInTheGitDir: the workspace keeps serve's users in the
// repository's git directory, readable by its owner only, never in the
// work tree.
func TestServeUsersLiveInTheGitDir(t *testing.T) {
	f := newLockFixture(t)
	e := f.as("admin")
	if _, err := e.Users().Add(serveusers.AddRequest{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(f.repo.Dir, ".git", "lockgate", "serve-users.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("users file mode %v, want 0600", fi.Mode().Perm())
	}
	if us, err := f.as("other").Users().List(); err != nil || len(us) != 1 || us[0].Name != "alice" {
		t.Fatalf("another worker's workspace lists %+v, %v; want alice", us, err)
	}
}
