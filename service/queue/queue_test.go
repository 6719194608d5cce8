package queue

import (
	"context"
	"strings"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/service/session"
)

// staleStore lists the store as it was once read: what a claimer's one
// listing shows when others change the store before its claim.
type staleStore struct {
	locks.Store
	listing []locks.Entry
}

func (s *staleStore) List(context.Context) ([]locks.Entry, error) { return s.listing, nil }

func (s *staleStore) Get(_ context.Context, key string) (locks.Lock, error) {
	for _, en := range s.listing {
		if en.Key == key {
			return en.Lock, en.Err
		}
	}
	return locks.Lock{}, locks.ErrNotFound
}

func (s *staleStore) InNamespace(_ context.Context, ns string) ([]locks.Entry, error) {
	var out []locks.Entry
	for _, en := range s.listing {
		if strings.HasPrefix(en.Key, ns+":") {
			out = append(out, en)
		}
	}
	return out, nil
}

func workspaceAs(t *testing.T, r *gittest.Repo, worker string) *Handler {
	t.Helper()
	env := map[string]string{}
	for _, kv := range r.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	ctx := context.Background()
	s, err := session.Load(ctx, session.Options{Dir: r.Dir, As: worker, WorkerType: "agent", Session: worker, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Open(ctx, session.Purpose{TakesLocks: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return &Handler{Workspace: s}
}

// A package another claims and finishes between a claimer's reading of
// the queue and its claim is passed over, as one claimed meanwhile is:
// the claim goes on to the next package, never fails for it. (Without
// the global claim lock the choice and the claim are not one step.)
func TestClaimNextPassesOverAPackageFinishedMeanwhile(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write(".lockgate.yaml", "version: 1\nlocks: {use_global_claim_lock: false}\nworkflow: {auto_commit: false}\n")
	r.Write("work-packages.yaml", "packages:\n  - id: WP-1\n    title: first\n    priority: 2\n    locks: {files: [a.go]}\n"+
		"  - id: WP-2\n    title: second\n    locks: {files: [b.go]}\n")
	r.Commit("init")
	ctx := context.Background()
	alice, bob := workspaceAs(t, r, "alice"), workspaceAs(t, r, "bob")
	listing, err := alice.Store.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	alice.Store = &staleStore{Store: alice.Store, listing: listing}
	wps, err := bob.LoadPackages("")
	if err != nil {
		t.Fatal(err)
	}
	wp, _ := wps.Find("WP-1")
	if _, err := bob.claimPackage(ctx, wps, wp, Claim{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.FinishPackage(ctx, FinishRequest{PackageRequest: PackageRequest{ID: "WP-1"}}); err != nil {
		t.Fatal(err)
	}
	next, err := alice.claimNext(ctx, "", Claim{})
	if err != nil {
		t.Fatalf("claimNext: %v, want WP-2 claimed", err)
	}
	if next.Package == nil || next.Package.ID != "WP-2" {
		t.Fatalf("claimNext claimed %+v, want WP-2", next.Package)
	}
	if next.Queue == nil {
		return // the claim index found it
	}
	if s, _ := next.Queue.status("WP-1"); s.State != PackageDone {
		t.Errorf("the queue has WP-1 %s, want done", s.State)
	}
}
