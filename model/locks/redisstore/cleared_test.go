package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/lockgate/lockgate/internal/redistest"
)

// TestClearedLog: every Remove is in the clear log, written by the script
// that removed the record (no client call adds it); a release by the
// holder and a Remove of nothing are not.
func TestClearedLog(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	s, err := Open(ctx, srv.URL(), Options{Prefix: freshPrefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := time.Now().Add(-time.Second)
	a := mustAcquire(t, s, "src/a.go")
	b := mustAcquire(t, s, "src/b.go")
	if err := s.Release(ctx, a.Key, a.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Remove(ctx, b.Key); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Remove(ctx, "src/none.go"); err == nil {
		t.Fatal("Remove of nothing: no error")
	}
	cs, err := s.Cleared(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 {
		t.Fatalf("clear log holds %d entries, want 1 (the Remove of src/b.go): %+v", len(cs), cs)
	}
	c := cs[0]
	if c.Key != "src/b.go" || c.Lock.Holder != b.Holder || c.Lock.Fence != b.Fence || c.Corrupt != "" || c.At.Before(before) {
		t.Fatalf("clear log entry %+v, want src/b.go of %s fence %d", c, b.Holder, b.Fence)
	}
	if later, err := s.Cleared(ctx, time.Now().Add(time.Hour)); err != nil || len(later) != 0 {
		t.Fatalf("clear log after now: %+v, %v", later, err)
	}
}
