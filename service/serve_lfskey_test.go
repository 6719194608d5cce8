package service

import (
	"context"
	"errors"
	"testing"

	"github.com/lockgate/lockgate/model/locks/lockkey"
	"github.com/lockgate/lockgate/service/lockops"
)

// TestLFSLockFileThatLooksLikeAKey: a git-lfs path lockgate would read
// as a logical key, a reserved key or a pattern is locked as the file
// (a pattern of one-character classes that covers exactly it), shows as
// that path to git-lfs, and is found by it; a path lockgate cannot lock
// is a usage error.
func TestLFSLockFileThatLooksLikeAKey(t *testing.T) {
	ctx := context.Background()
	f := newLockFixture(t)
	alice := lfsUser(t, f, "alice", "human")
	bob := lfsUser(t, f, "bob", "human")
	for p, key := range map[string]string{
		"db:dump.psd": "[d]b:dump.psd",
		"queue:x":     "[q]ueue:x",
		"api:get /v1": "[a]pi:get /v1",
		"workflow":    "[w]orkflow",
		"art/a*.psd":  "[a]rt/a[*].psd",
		"a?b.bin":     "[a][?]b.bin",
	} {
		l, err := alice.LFSCreateLock(ctx, LFSCreateRequest{Path: p})
		if err != nil {
			t.Errorf("lock %q: %v", p, err)
			continue
		}
		if l.Path != p {
			t.Errorf("lock %q shows as %q", p, l.Path)
		}
		if !lockkey.MatchPath(key, p) {
			t.Errorf("key %q does not cover %q", key, p)
		}
		res, err := bob.LFSListLocks(ctx, LFSListRequest{Path: p})
		if err != nil || len(res.Locks) != 1 || res.Locks[0].Path != p || res.Locks[0].ID != l.ID {
			t.Errorf("list --path %q = %+v, %v", p, res.Locks, err)
		}
		_, err = bob.LFSCreateLock(ctx, LFSCreateRequest{Path: p})
		if err == nil {
			t.Errorf("bob's lock of alice's %q passed", p)
		}
		rows, err := f.as("viewer").Locks().List(ctx, lockops.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range rows.Rows {
			found = found || r.Key == key
		}
		if !found {
			t.Errorf("no lock %q after locking %q: %+v", key, p, rows.Rows)
		}
	}
	for _, p := range []string{".git/config", "src/.GIT/x", "x[1].bin", "a{b}.bin", "db:x/.git/y"} {
		_, err := alice.LFSCreateLock(ctx, LFSCreateRequest{Path: p})
		var usage *UsageError
		if !errors.As(err, &usage) {
			t.Errorf("lock %q: %v; want a usage error", p, err)
		}
	}
}

// FuzzLFSKey: a git-lfs path is refused with a usage error, or locked as
// a key that lockgate accepts as it is, that covers the path, and that
// shows as the path again.
func FuzzLFSKey(f *testing.F) {
	for _, s := range []string{"src/a.go", "db:dump.psd", "queue:x", "api:get /v1", "workflow", "claim", "a*.psd", "x[1]{y}.bin",
		".git/config", " x", "C:/x", "[a]b", "[", "]", "a:b:c", "ü:x", "feature:a:pause"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		key, err := lfsKey(p, nil)
		if err != nil {
			var usage *UsageError
			if !errors.As(err, &usage) {
				t.Fatalf("lfsKey(%q) = %v, not a usage error", p, err)
			}
			return
		}
		k, err := lockkey.Parse(key, nil)
		if err != nil || k.Canonical != key {
			t.Fatalf("lfsKey(%q) = %q, which lockgate reads as %+v, %v", p, key, k, err)
		}
		if k.Kind == lockkey.KindPattern && !lockkey.MatchPath(key, p) {
			t.Fatalf("lfsKey(%q) = %q, which does not cover it", p, key)
		}
		if k.Kind != lockkey.KindPath && k.Kind != lockkey.KindPattern {
			t.Fatalf("lfsKey(%q) = %q, a %s key", p, key, k.Kind)
		}
		if got := lfsFileOf(key); got != p {
			t.Fatalf("lfsFileOf(lfsKey(%q) = %q) = %q", p, key, got)
		}
	})
}
