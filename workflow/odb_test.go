package workflow

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/lockgate/lockgate/internal/gitexec"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// TestODBMatchesGoGit reads every object of repositories packed in
// different ways (loose, deltas by offset, deltas by ref, several packs)
// with odb and with go-git's own storage, and compares.
func TestODBMatchesGoGit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pack func(t *testing.T, dir string, env []string)
	}{
		{name: "loose", pack: func(*testing.T, string, []string) {}},
		{name: "offset deltas", pack: func(t *testing.T, dir string, env []string) {
			gitIn(t, dir, env, "", "repack", "-adfq", "--depth=50", "--window=50")
		}},
		{name: "ref deltas", pack: func(t *testing.T, dir string, env []string) {
			gitIn(t, dir, env, "", "-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq", "--depth=50", "--window=50")
		}},
		{name: "two packs and loose", pack: func(t *testing.T, dir string, env []string) {
			gitIn(t, dir, env, "", "repack", "-dq")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			w := openWriter(t, repoOf(r))
			ctx := context.Background()
			// Many small commits of similar trees: good delta material.
			for i := range 40 {
				if _, err := w.Commit(ctx, events("w", 3)); err != nil {
					t.Fatal(err)
				}
				if i == 20 && tt.name == "two packs and loose" {
					gitIn(t, r.Dir, r.Env, "", "repack", "-dq")
				}
			}
			want := branchIDs(t, w)
			tt.pack(t, r.Dir, r.Env)
			if tt.name != "loose" {
				// gc leaves no loose object: odb must find them packed.
				gitIn(t, r.Dir, r.Env, "", "prune-packed")
			}
			if strings.Contains(tt.name, "deltas") {
				idx, _ := filepath.Glob(filepath.Join(r.Dir, ".git", "objects", "pack", "*.idx"))
				if len(idx) != 1 || !strings.Contains(gitIn(t, r.Dir, r.Env, "", "verify-pack", "-v", idx[0]), "chain length = ") {
					t.Fatalf("the pack has no deltas to resolve (%v)", idx)
				}
			}
			fresh := openWriter(t, repoOf(r))
			equalIDs(t, "events after packing", branchIDs(t, fresh), want)
			// The same Writer, whose loose objects just moved into a pack.
			equalIDs(t, "events through the old Writer", branchIDs(t, w), want)

			gg := filesystem.NewStorage(osfs.New(filepath.Join(r.Dir, ".git")), cache.NewObjectLRUDefault())
			all := gitIn(t, r.Dir, r.Env, "", "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
			n := 0
			for _, hx := range strings.Fields(all) {
				h := plumbing.NewHash(hx)
				a, err := fresh.odb.EncodedObject(plumbing.AnyObject, h)
				if err != nil {
					t.Fatalf("odb %s: %v", hx, err)
				}
				b, err := gg.EncodedObject(plumbing.AnyObject, h)
				if err != nil {
					t.Fatalf("go-git %s: %v", hx, err)
				}
				ca, _ := content(a)
				cb, _ := content(b)
				if a.Type() != b.Type() || !bytes.Equal(ca, cb) {
					t.Fatalf("object %s: odb %s %d bytes, go-git %s %d bytes", hx, a.Type(), len(ca), b.Type(), len(cb))
				}
				if a.Hash() != h {
					t.Fatalf("object %s hashes to %s", hx, a.Hash())
				}
				n++
			}
			if n < 200 {
				t.Fatalf("only %d objects compared", n)
			}
			if _, err := fresh.odb.EncodedObject(plumbing.AnyObject, plumbing.NewHash(strings.Repeat("ab", 20))); !errors.Is(err, plumbing.ErrObjectNotFound) {
				t.Fatalf("missing object: %v", err)
			}
			// And the branch still takes commits.
			if n, err := w.Commit(ctx, events("after", 1)); err != nil || n != 1 {
				t.Fatalf("Commit after packing = %d, %v", n, err)
			}
			fsck(t, r.Dir, r.Env)
		})
	}
}

// TestAlternates: a clone made with --shared reads the objects of its
// source through objects/info/alternates.
func TestAlternates(t *testing.T) {
	t.Parallel()
	src := newRepo(t)
	ws := openWriter(t, repoOf(src))
	evs := events("src", 5)
	if _, err := ws.Commit(context.Background(), evs); err != nil {
		t.Fatal(err)
	}
	gitIn(t, src.Dir, src.Env, "", "repack", "-adq")
	dir := filepath.Join(t.TempDir(), "shared")
	gitIn(t, src.Dir, src.Env, "", "clone", "-q", "--shared", "--no-checkout", src.Dir, dir)
	gitIn(t, dir, src.Env, "", "update-ref", "refs/heads/lockgate/workflow", "origin/lockgate/workflow")
	w := openWriter(t, &gitexec.Repo{Toplevel: dir, GitDir: filepath.Join(dir, ".git"), CommonDir: filepath.Join(dir, ".git")})
	equalIDs(t, "shared clone", branchIDs(t, w), idsOf(evs))
	if n, err := w.Commit(context.Background(), []journal.Event{event("shared", 1)}); err != nil || n != 1 {
		t.Fatalf("Commit in a shared clone = %d, %v", n, err)
	}
	fsck(t, dir, src.Env)
}
