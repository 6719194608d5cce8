package gitstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lockgate/lockgate/model/locks"
)

// TestTwoReleasesOfOneStateOneWins: two clones that decide the same
// release on the same state (the holder releasing, and another clone's
// release on merge that read the table a moment before) make the same
// change. Only one may win: the other's lease names a state that is gone,
// and its release finds the lock gone. (Two state commits made of the
// same change in the same second were once one commit, so the second
// push found the remote "up to date" and both releases were logged.)
func TestTwoReleasesOfOneStateOneWins(t *testing.T) {
	ctx := context.Background()
	url := bareRemote(t)
	holder := openClone(t, url, Options{})
	// The other clone answers from the state it read for longer than
	// the two releases take, so that it decides on the holder's state.
	other := openClone(t, url, Options{Reuse: time.Minute})
	defer holder.Close()
	defer other.Close()
	now := time.Now()
	for i := range 5 {
		key := fmt.Sprintf("branch:main:src/f%02d.go", i)
		got, _, err := holder.Acquire(ctx, locks.Lock{Key: key, Holder: "agent-2", HolderType: "agent", Session: "s",
			Token: fmt.Sprintf("token-%d", i), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}, now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.current(ctx, 0); err != nil { // read the state the lock is in
			t.Fatal(err)
		}
		if err := holder.Release(ctx, key, got.Token); err != nil {
			t.Fatalf("the holder's release: %v", err)
		}
		err = other.Release(ctx, key, got.Token)
		if !errors.Is(err, locks.ErrNotFound) {
			t.Fatalf("%s: the second release of one grant: %v, want it found gone (both releases won)", key, err)
		}
	}
}
