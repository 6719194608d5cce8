package queue

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/session"
)

// countingStore counts the task records read one by one or many at once,
// and the whole-store reads.
type countingStore struct {
	locks.Store
	records, listings atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, key string) (locks.Lock, error) {
	if lockkey.Namespace(key) == "task" {
		s.records.Add(1)
	}
	return s.Store.Get(ctx, key)
}

func (s *countingStore) GetMany(ctx context.Context, keys []string) ([]locks.Entry, error) {
	s.records.Add(int64(len(keys)))
	return locks.GetMany(ctx, s.Store, keys)
}

func (s *countingStore) List(ctx context.Context) ([]locks.Entry, error) {
	s.listings.Add(1)
	return s.Store.List(ctx)
}

func (s *countingStore) InNamespace(ctx context.Context, ns string) ([]locks.Entry, error) {
	s.listings.Add(1)
	return s.Store.InNamespace(ctx, ns)
}

// manyPackages is n packages WP-000 …, one file each, in file order.
func manyPackages(n int) string {
	var b strings.Builder
	b.WriteString("packages:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: WP-%03d\n    locks:\n      files: [src/p%03d.go]\n", i, i)
	}
	return b.String()
}

// seedFinished writes the task records of WP-000 … WP-(n-1) as done,
// straight into the store, as thousands of `done` would leave them.
func seedFinished(t *testing.T, e *Handler, n int) {
	t.Helper()
	ctx := context.Background()
	now := e.Now().UTC()
	for i := range n {
		id := fmt.Sprintf("WP-%03d", i)
		rec := locks.Lock{Key: lockkey.TaskKey(id), Holder: "seed", HolderType: "agent", Session: "seed", Action: session.DoneAction,
			CreatedAt: now, ExpiresAt: locks.Never, TaskID: id, Token: locks.NewToken(), FinishedAt: &now}
		if _, _, err := e.Store.Acquire(ctx, rec, now); err != nil {
			t.Fatal(err)
		}
	}
}

func claimNextID(t *testing.T, e *Handler) string {
	t.Helper()
	c, err := e.ClaimWork(context.Background(), ClaimRequest{TTL: time.Hour})
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return c.ID
}

// A claim reads the packages from the claim index's mark on: with 300 of
// 400 packages done, the first claim reads the whole queue once (the
// index has no mark yet) and later claims read a window of task records,
// with no listing of the store.
func TestClaimReadsFromTheMark(t *testing.T) {
	t.Parallel()
	_, _, open := queueRepo(t, manyPackages(400))
	alice := open("alice")
	seedFinished(t, alice, 300)
	counting := &countingStore{Store: alice.Store}
	alice.Store = counting
	if id := claimNextID(t, alice); id != "WP-300" {
		t.Fatalf("first claim: %s, want WP-300", id)
	}
	counting.records.Store(0)
	counting.listings.Store(0)
	for want := 301; want < 305; want++ {
		if id := claimNextID(t, alice); id != fmt.Sprintf("WP-%03d", want) {
			t.Fatalf("claim: %s, want WP-%03d", id, want)
		}
	}
	// Four claims, each past the claimed packages before its own: a
	// window of records each, never the 300 done ones.
	if n := counting.records.Load(); n > 4*(indexWindow+4) {
		t.Errorf("four claims read %d task records, want at most %d", n, 4*(indexWindow+4))
	}
	if n := counting.listings.Load(); n != 0 {
		t.Errorf("four claims listed the store %d times, want none", n)
	}
}

// Making a finished package ready again ends the queue epoch, by every
// way lockgate has: the package comes next again, in claim order, and is
// not passed over for the mark.
func TestClaimIndexSeesReopenedPackages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		reopen func(t *testing.T, e *Handler, id string)
	}{
		{"retry of a failed package", func(t *testing.T, e *Handler, id string) {
			if _, err := e.RetryPackage(ctx, RetryRequest{PackageRequest: pkgReq(id)}); err != nil {
				t.Fatal(err)
			}
		}},
		{"reset of a done one", func(t *testing.T, e *Handler, id string) {
			if _, err := e.RetryPackage(ctx, RetryRequest{PackageRequest: pkgReq(id), Force: true}); err != nil {
				t.Fatal(err)
			}
		}},
		{"forced clear of its task record", func(t *testing.T, e *Handler, id string) {
			if _, err := e.Mgr.Clear(ctx, lockkey.TaskKey(id), e.Me); err != nil {
				t.Fatal(err)
			}
		}},
		{"forced release of it", func(t *testing.T, e *Handler, id string) {
			if _, err := e.Mgr.Release(ctx, []string{lockkey.TaskKey(id)}, e.Me, true); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, open := queueRepo(t, manyPackages(6))
			alice, bob := open("alice"), open("bob")
			for _, id := range []string{"WP-000", "WP-001"} {
				claimed(t, alice, id)
				failed := ""
				if strings.HasPrefix(tt.name, "retry") {
					failed = "broken"
				}
				finished(t, alice, id, failed)
			}
			if id := claimNextID(t, bob); id != "WP-002" { // the mark is 2 now
				t.Fatalf("claim: %s, want WP-002", id)
			}
			tt.reopen(t, alice, "WP-000")
			if id := claimNextID(t, bob); id != "WP-000" {
				t.Fatalf("claim after the package was made ready again: %s, want WP-000", id)
			}
		})
	}
}

// markedAtTwo is a queue of four packages whose first two alice finished
// and whose third she claimed: her claim index's mark is 2.
func markedAtTwo(t *testing.T) (*gittest.Repo, *Handler) {
	t.Helper()
	r, _, open := queueRepo(t, manyPackages(4))
	alice := open("alice")
	for _, id := range []string{"WP-000", "WP-001"} {
		claimed(t, alice, id)
		finished(t, alice, id, "")
	}
	if id := claimNextID(t, alice); id != "WP-002" {
		t.Fatalf("claim: %s, want WP-002", id)
	}
	return r, alice
}

// A finished record removed behind lockgate's back (by hand, in the
// store) leaves the epoch as it was: the index passes the package over
// while others can be claimed, but the claim that finds nothing else
// reads the whole queue, hands it out, and counts the mark again.
func TestClaimIndexStaleFoundWhenNothingElseIsFree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, alice := markedAtTwo(t)
	if _, err := alice.Store.Remove(ctx, lockkey.TaskKey("WP-000")); err != nil {
		t.Fatal(err)
	}
	got := []string{claimNextID(t, alice), claimNextID(t, alice)}
	if got[0] != "WP-003" || got[1] != "WP-000" {
		t.Fatalf("claims %v, want WP-003 (the index's) and then WP-000 (found by the whole queue)", got)
	}
	order, err := alice.claimOrder("")
	if err != nil {
		t.Fatal(err)
	}
	epoch, err := alice.queueEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := alice.readMark(order, epoch); n != 0 {
		t.Errorf("the mark after the whole queue was read: %d finished at the head, want 0", n)
	}
}

// A mark is of one file's claim order: a changed file starts again from
// its head.
func TestClaimIndexFollowsTheFile(t *testing.T) {
	t.Parallel()
	r, alice := markedAtTwo(t)
	r.Write("work-packages.yaml", "packages:\n  - id: WP-new\n    locks:\n      files: [src/new.go]\n"+strings.TrimPrefix(manyPackages(4), "packages:\n"))
	if id := claimNextID(t, alice); id != "WP-new" {
		t.Fatalf("claim after the file changed: %s, want WP-new", id)
	}
}

// done reads the packages that share a key with the one it finishes, and
// their task records, not every package and every record: with 300 of
// 400 packages done and two claimed that share a file, done of the first
// keeps the shared file for the second and gives back the rest.
func TestDoneReadsWhatItShares(t *testing.T) {
	t.Parallel()
	yaml := strings.Replace(manyPackages(400), "files: [src/p300.go]", "files: [src/p300.go, src/shared.go]", 1)
	yaml = strings.Replace(yaml, "files: [src/p301.go]", "files: [src/p301.go, src/shared.go]", 1)
	_, _, open := queueRepo(t, yaml)
	alice := open("alice")
	seedFinished(t, alice, 300)
	claimed(t, alice, "WP-300")
	claimed(t, alice, "WP-301")
	counting := &countingStore{Store: alice.Store}
	alice.Store = counting
	f, err := alice.FinishPackage(context.Background(), FinishRequest{PackageRequest: pkgReq("WP-300")})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Kept) != 1 || f.Kept[0].Key != "src/shared.go" || f.Kept[0].Why != KeptNeeded {
		t.Errorf("done kept %+v, want src/shared.go for the other package", f.Kept)
	}
	if n := counting.records.Load(); n > 4 {
		t.Errorf("done read %d task records, want at most 4 (its own, the package sharing a file)", n)
	}
	if n := counting.listings.Load(); n != 0 {
		t.Errorf("done listed the store %d times, want none", n)
	}
	if l, err := alice.Store.Get(context.Background(), "src/shared.go"); err != nil || !l.OwnedBy(alice.Me) {
		t.Errorf("src/shared.go after done: %+v, %v; want still alice's", l, err)
	}
}
