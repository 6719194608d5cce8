package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/journal"
	"github.com/lockgate/lockgate/model/locks/lockkey"
)

func TestServeUsers(t *testing.T) {
	f := newLockFixture(t)
	e := f.as("admin")
	alice, err := e.AddUser(UserAddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if alice.User.Type != "human" || !strings.HasPrefix(alice.Token, tokenPrefix) {
		t.Fatalf("added %+v, token %q", alice.User, alice.Token)
	}
	bot, err := e.AddUser(UserAddRequest{Name: "bot", Type: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.AddUser(UserAddRequest{Name: "alice"})
	wantErr[*UsageError](t, err)
	_, err = e.AddUser(UserAddRequest{Name: "carol", Type: "robot"})
	wantErr[*UsageError](t, err)

	// Only a hash is kept, in the git directory, readable by its owner.
	fi, err := os.Stat(filepath.Join(f.repo.Dir, ".git", "lockgate", usersFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("users file mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(filepath.Join(f.repo.Dir, ".git", "lockgate", usersFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), alice.Token) || strings.Contains(string(data), strings.SplitN(alice.Token, "_", 3)[2]) {
		t.Error("the users file holds a token's secret")
	}

	us, err := e.ListUsers()
	if err != nil || len(us) != 2 || us[0].Name != "alice" || us[1].Type != "agent" {
		t.Fatalf("ListUsers = %+v, %v", us, err)
	}
	for _, tc := range []struct {
		name, user, token string
		want              string // "" refused
	}{
		{name: "basic", user: "alice", token: alice.Token, want: "alice"},
		{name: "bearer", token: bot.Token, want: "bot"},
		{name: "basic, the token twice (cached)", user: "alice", token: alice.Token, want: "alice"},
		{name: "another user's token", user: "alice", token: bot.Token},
		{name: "wrong secret", user: "alice", token: alice.Token[:len(alice.Token)-2] + "xx"},
		{name: "no token", user: "alice"},
		{name: "not a token", token: "hunter2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := e.Authenticate(tc.user, tc.token, nil)
			if tc.want == "" {
				wantErr[*AuthError](t, err)
				return
			}
			if err != nil || u.Name != tc.want {
				t.Fatalf("Authenticate = %+v, %v; want %s", u, err, tc.want)
			}
		})
	}

	if err := e.RemoveUser("alice"); err != nil {
		t.Fatal(err)
	}
	_, err = e.Authenticate("alice", alice.Token, nil)
	wantErr[*AuthError](t, err)
	wantErr[*UsageError](t, e.RemoveUser("alice"))
}

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
	held, err := f.as("viewer").ListLocks(ctx, ListRequest{})
	if err != nil || len(held.Rows) != 1 || held.Rows[0].Holder != "alice" || held.Rows[0].HolderType != "human" {
		t.Fatalf("lock list = %+v, %v", held.Rows, err)
	}
	want, err := alice.DefaultTTL(mustKeys(t, alice, "src/a.go"))
	if err != nil {
		t.Fatal(err)
	}
	if got := held.Rows[0].ExpiresAt.Sub(held.Rows[0].CreatedAt); got != want {
		t.Errorf("TTL %v, want the human default %v", got, want)
	}

	// Locked again by its holder: renewed, the same grant and id.
	f.clock.add(60e9)
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
	wantErr[*ForceRefusedError](t, err)
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
	evs, err := bob.AllEvents(ctx, f.clock.now().Add(-3600e9))
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

// TestAuthenticateAsksBeforeHash: a token not yet verified is checked
// against its bcrypt hash only after beforeHash agrees, and its refusal
// stops the check; a verified token is not asked about again, and a token
// of no user is refused without it.
func TestAuthenticateAsksBeforeHash(t *testing.T) {
	f := newLockFixture(t)
	e := f.as("admin")
	alice, err := e.AddUser(UserAddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	limited := errors.New("too many")
	asked := 0
	refuse := func() error { asked++; return limited }
	allow := func() error { asked++; return nil }

	wrong := alice.Token[:len(alice.Token)-2] + "xx"
	if _, err := e.Authenticate("alice", wrong, refuse); !errors.Is(err, limited) || asked != 1 {
		t.Fatalf("a wrong token, the check refused: %v, asked %d; want the refusal, asked once", err, asked)
	}
	if _, err := e.Authenticate("alice", alice.Token, refuse); !errors.Is(err, limited) {
		t.Fatalf("an unverified right token, the check refused: %v", err)
	}
	if u, err := e.Authenticate("alice", alice.Token, allow); err != nil || u.Name != "alice" {
		t.Fatalf("the right token, allowed: %+v %v", u, err)
	}
	asked = 0
	if u, err := e.Authenticate("alice", alice.Token, refuse); err != nil || u.Name != "alice" || asked != 0 {
		t.Fatalf("a verified token: %+v %v, asked %d; want alice without asking", u, err, asked)
	}
	if _, err := e.Authenticate("", tokenPrefix+"nosuchid_secret", refuse); asked != 0 {
		t.Fatalf("a token of no user: %v, asked %d; want refused without asking", err, asked)
	}
}

// TestTokenHashes: the users file keeps a token's SHA-256 hash, never the
// token; a user added by an earlier version, whose file holds a bcrypt
// hash, still logs in with its token; a wrong token matches neither.
func TestTokenHashes(t *testing.T) {
	f := newLockFixture(t)
	e := f.as("admin")
	alice, err := e.AddUser(UserAddRequest{Name: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(e.usersPath())
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(alice.Token))
	if !strings.Contains(string(data), `"hash": "sha256:`+hex.EncodeToString(sum[:])+`"`) || strings.Contains(string(data), alice.Token) {
		t.Fatalf("the users file holds no SHA-256 hash of the token, or the token itself:\n%s", data)
	}

	// A user as an earlier version wrote it.
	old := tokenPrefix + "0123456789abcdef_" + strings.Repeat("s", 43)
	hash, err := bcrypt.GenerateFromPassword([]byte(old), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	us, err := e.readUsers()
	if err != nil {
		t.Fatal(err)
	}
	us = append(us, storedUser{Name: "bob", Type: "human", Created: time.Now().UTC(), ID: "0123456789abcdef", Hash: string(hash)})
	if err := e.writeUsers(us); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, token string }{{"alice", alice.Token}, {"bob", old}} {
		if u, err := e.Authenticate(c.name, c.token, nil); err != nil || u.Name != c.name {
			t.Errorf("%s's token: %+v %v", c.name, u, err)
		}
		wrong := c.token[:len(c.token)-1] + "x"
		if _, err := e.Authenticate(c.name, wrong, nil); !errors.As(err, new(*AuthError)) {
			t.Errorf("%s's token with its last character changed: %v, want refused", c.name, err)
		}
	}
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
