package hooks

import (
	"context"
	"testing"

	"github.com/lockgate/lockgate/internal/gittest"
	"github.com/lockgate/lockgate/model/locks"
	"github.com/lockgate/lockgate/model/locks/history"
	"github.com/lockgate/lockgate/model/locks/journal"
)

// The reader of the lock log learns, when it asks, the keys that bear on
// the commits: the paths they change and the locks their trailers name,
// any pattern, no other path. When the commits cannot be judged (past
// hooks.pre_push's limits), it learns that it reads for nothing.
func TestVerifyReadingTellsTheKeysOfTheCommits(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Write("a.go", "0\n")
	r.Commit("init")
	r.Write("a.go", "1\n")
	r.Write("b/c.go", "1\n")
	r.Commit("change a and c\n\nLockgate-Worker: bob\nLockgate-Worker-Type: agent\nLockgate-Session: bob\nLockgate-Lock: d.go fence=3\n")
	bob := locks.Owner{Holder: "bob", HolderType: "agent", Session: "bob"}
	for _, tc := range []struct {
		name   string
		max    int
		judged bool
	}{{"judged", 0, true}, {"past the limit", 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Runner{GitDir: r.Dir + "/.git", Dir: r.Dir, Checker: &Checker{Me: bob}, MaxPaths: tc.max}
			type told struct {
				keys *history.Keys
				ok   bool
			}
			// Past the limit the reader may still run when VerifyReading
			// returns: what it was told comes on a channel.
			toldc := make(chan told, 1)
			read := func(bearing func() (*history.Keys, bool)) ([]journal.Event, error) {
				keys, ok := bearing()
				toldc <- told{keys, ok}
				return nil, nil
			}
			if err := h.VerifyReading(context.Background(), []string{"HEAD~1..HEAD"}, "", read, &Report{Hook: "verify"}); err != nil {
				t.Fatal(err)
			}
			got := <-toldc
			keys, ok := got.keys, got.ok
			if !tc.judged {
				if ok {
					t.Fatalf("past the limit the reader was told keys %+v", keys)
				}
				return
			}
			if !ok || keys == nil {
				t.Fatalf("bearing() = %v, %v", keys, ok)
			}
			for key, want := range map[string]bool{"a.go": true, "b/c.go": true, "d.go": true, "b/**": true, "deploy:prod": true, "e.go": false, "b/d.go": false} {
				if got := keys.Bear(key); got != want {
					t.Errorf("Bear(%q) = %v, want %v", key, got, want)
				}
			}
		})
	}
}
