package service

import (
	"context"
	"fmt"
	"testing"

	"github.com/lockgate/lockgate/service/lockops"
)

// TestLFSPagesThroughChanges walks git-lfs's list and verify in pages of
// 3 while locks are taken and released between the requests: every lock
// held throughout is listed exactly once, no lock twice; a lock on a
// path is found by its key; an answer without a limit holds every lock.
func TestLFSPagesThroughChanges(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	alice := lfsUser(t, f, "alice", "human")
	bob := lfsUser(t, f, "bob", "human")
	var stay []string
	for i := range 10 {
		stay = append(stay, fmt.Sprintf("art/s%02d.psd", i))
	}
	f.take(bob, stay...)
	for _, verify := range []bool{false, true} {
		var churn []string
		for i := range 10 {
			churn = append(churn, fmt.Sprintf("art/s%02d-%v.psd", i, verify))
		}
		f.take(alice, churn...)
		seen := map[string]int{}
		cursor := ""
		for i := 0; ; i++ {
			var got []LFSLock
			var next string
			if verify {
				v, err := alice.LFSVerifyLocks(ctx, LFSVerifyRequest{Cursor: cursor, Limit: 3})
				if err != nil {
					t.Fatalf("verify page %d: %v", i, err)
				}
				got, next = append(v.Ours, v.Theirs...), v.NextCursor
			} else {
				p, err := bob.LFSListLocks(ctx, LFSListRequest{Cursor: cursor, Limit: 3})
				if err != nil {
					t.Fatalf("list page %d: %v", i, err)
				}
				got, next = p.Locks, p.NextCursor
			}
			if len(got) > 3 {
				t.Fatalf("page %d holds %d locks, limit 3", i, len(got))
			}
			for _, l := range got {
				seen[l.Path]++
			}
			if next == "" {
				break
			}
			cursor = next
			// Between pages: one of alice's locks released, two taken,
			// one before every other key and one after.
			if i < len(churn) {
				if _, err := alice.LFSUnlock(ctx, LFSUnlockRequest{ID: lockID(t, alice, churn[i])}); err != nil {
					t.Fatalf("unlock %s: %v", churn[i], err)
				}
			}
			f.take(alice, fmt.Sprintf("a/%v-%02d.psd", verify, i), fmt.Sprintf("zz/%v-%02d.psd", verify, i))
		}
		for p, n := range seen {
			if n > 1 {
				t.Errorf("verify %v: %s listed %d times", verify, p, n)
			}
		}
		for _, p := range stay {
			if seen[p] != 1 {
				t.Errorf("verify %v: %s, held throughout, listed %d times", verify, p, seen[p])
			}
		}
	}
	all, err := bob.LFSListLocks(ctx, LFSListRequest{})
	if err != nil || all.NextCursor != "" {
		t.Fatalf("list without a limit: next %q, %v", all.NextCursor, err)
	}
	live, err := bob.Locks().List(ctx, lockops.ListRequest{})
	if err != nil || len(all.Locks) != len(live.Rows) {
		t.Fatalf("list without a limit: %d locks, the store %d, %v", len(all.Locks), len(live.Rows), err)
	}
	on, err := bob.LFSListLocks(ctx, LFSListRequest{Path: stay[3]})
	if err != nil || len(on.Locks) != 1 || on.Locks[0].Owner.Name != "bob" || on.Locks[0].Path != stay[3] {
		t.Fatalf("list on %s = %+v, %v", stay[3], on, err)
	}
	for _, c := range []string{"100", "x", "k"} {
		_, err := bob.LFSListLocks(ctx, LFSListRequest{Cursor: c})
		wantErr[*UsageError](t, err)
	}
}

// lockID is the git-lfs id of the live lock on path p.
func lockID(t *testing.T, e *Workspace, p string) string {
	t.Helper()
	on, err := e.LFSListLocks(context.Background(), LFSListRequest{Path: p})
	if err != nil || len(on.Locks) != 1 {
		t.Fatalf("the lock on %s: %+v, %v", p, on, err)
	}
	return on.Locks[0].ID
}
