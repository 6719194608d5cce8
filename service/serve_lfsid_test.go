package service

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/lockops"
)

// listCounter is a store that counts its List calls.
type listCounter struct {
	locks.Store
	lists atomic.Int32
}

func (s *listCounter) List(ctx context.Context) ([]locks.Entry, error) {
	s.lists.Add(1)
	return s.Store.List(ctx)
}

// lfsKeyID is key as the start of a git-lfs lock id.
func lfsKeyID(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// TestLFSLockIDIsUnguessable: a git-lfs lock id cannot be worked out from
// what anyone sees of a lock (its key and fence): an id made of them
// unlocks nothing, forced or not. Unlocking by the real id reads the one
// record it names, not the table, and an id that is no id of this server
// is a lock not found.
func TestLFSLockIDIsUnguessable(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	alice := lfsUser(t, f, "alice", "human")
	bob := lfsUser(t, f, "bob", "human")
	l, err := alice.LFSCreateLock(ctx, LFSCreateRequest{Path: "src/a.go"})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := bob.Locks().List(ctx, lockops.ListRequest{})
	if err != nil || len(rows.Rows) != 1 {
		t.Fatalf("lock list = %+v, %v", rows.Rows, err)
	}
	// What an id of key and fence alone would be: SHA-256 over the key,
	// a zero byte and the fence, as anyone who lists the locks sees them.
	h := sha256.New()
	h.Write([]byte(rows.Rows[0].Key))
	var b [9]byte
	binary.BigEndian.PutUint64(b[1:], rows.Rows[0].Fence)
	h.Write(b[:])
	guessed := hex.EncodeToString(h.Sum(nil)[:20])
	if l.ID == guessed {
		t.Fatalf("the id %s is SHA-256 of the key and the fence", l.ID)
	}
	for _, id := range []string{guessed, lfsKeyID("src/a.go") + "." + strings.Repeat("0", 32), lfsKeyID("src/a.go") + "." + guessed[:32], lfsKeyID("src/a.go"),
		"!!!." + strings.Repeat("0", 32), ".", "", "src/a.go", lfsKeyID("src/none.go") + "." + strings.Repeat("0", 32)} {
		_, err := bob.LFSUnlock(ctx, LFSUnlockRequest{ID: id, Force: true})
		wantErr[*LFSNotFoundError](t, err)
	}
	if rows, err := bob.Locks().List(ctx, lockops.ListRequest{}); err != nil || len(rows.Rows) != 1 {
		t.Fatalf("a guessed id unlocked: %+v, %v", rows.Rows, err)
	}

	// Renewed, the lock keeps its id; the id is no part of the token.
	again, err := alice.LFSCreateLock(ctx, LFSCreateRequest{Path: "src/a.go"})
	if err != nil || again.ID != l.ID {
		t.Fatalf("renewed: %+v, %v; want id %s", again, err, l.ID)
	}
	cur, err := alice.Store.Get(ctx, "src/a.go")
	if err != nil || cur.Token == "" || strings.Contains(l.ID, cur.Token) {
		t.Fatalf("the record %+v, %v: the id %s shows its token", cur, err, l.ID)
	}

	counted := &listCounter{Store: alice.Store}
	alice.Store = counted
	if _, err := alice.LFSUnlock(ctx, LFSUnlockRequest{ID: l.ID}); err != nil {
		t.Fatal(err)
	}
	if n := counted.lists.Load(); n != 0 {
		t.Errorf("unlocking by id listed the store %d times", n)
	}
	if _, err := alice.LFSUnlock(ctx, LFSUnlockRequest{ID: l.ID}); err == nil {
		t.Error("an id unlocked twice")
	} else {
		wantErr[*LFSNotFoundError](t, err)
	}

	// A new grant of the key is a new id.
	l2, err := alice.LFSCreateLock(ctx, LFSCreateRequest{Path: "src/a.go"})
	if err != nil || l2.ID == l.ID {
		t.Fatalf("a new grant: %+v, %v; want an id other than %s", l2, err, l.ID)
	}
	if list, err := bob.LFSListLocks(ctx, LFSListRequest{ID: l2.ID}); err != nil || len(list.Locks) != 1 || list.Locks[0].Path != "src/a.go" {
		t.Fatalf("listed by id: %+v, %v", list, err)
	}
}
